#include "core/settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace mxlite {
namespace {

Settings MakeRegistry(EnvironmentMap environment = {}) {
  return Settings(BuiltinSettingSpecs(), BuiltinRecognisedUnusedVariables(),
                  std::move(environment));
}

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every MXNet variable mxlite implements, with MXNet's documented default.
TEST(SettingsCatalogTest, HasEveryDesignVariableWithMXNetDefault) {
  Settings registry = MakeRegistry();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice"},
      {"MXNET_CPU_WORKER_NTHREADS", "1"},
      {"MXNET_CPU_PRIORITY_NTHREADS", "4"},
      {"MXNET_GPU_WORKER_NTHREADS", "2"},
      {"MXNET_GPU_COPY_NTHREADS", "2"},
      {"MXNET_EXEC_ENABLE_INPLACE", "true"},
      {"NNVM_EXEC_MATCH_RANGE", "16"},
      {"MXNET_EXEC_NUM_TEMP", "1"},
      {"MXNET_GPU_MEM_POOL_RESERVE", "5"},
      {"MXNET_GPU_MEM_POOL_TYPE", "Naive"},
      {"MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "24"},
      {"MXNET_GPU_MEM_LARGE_ALLOC_ROUND_SIZE", "2097152"},
      {"MXNET_EXEC_BULK_EXEC_INFERENCE", "1"},
      {"MXNET_EXEC_BULK_EXEC_TRAIN", "1"},
      {"MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "15"},
      {"MXNET_BACKWARD_DO_MIRROR", "0"},
      {"MXNET_PROFILER_AUTOSTART", "0"},
      {"MXNET_PROFILER_MODE", "0"},
      {"MXNET_CUDNN_AUTOTUNE_DEFAULT", "1"},
      {"MXNET_CUDA_ALLOW_TENSOR_CORE", "1"},
      {"MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", "0"},
      {"MXNET_ENFORCE_DETERMINISM", "0"},
      {"MXNET_HOME", "~/.mxnet"},
      {"MXNET_LIBRARY_PATH", ""},
      {"MXNET_CPU_PARALLEL_COPY_SIZE", "200000"},
  };
  for (const auto& [name, default_value] : expected) {
    ASSERT_TRUE(registry.Has(name)) << name;
    EXPECT_EQ(registry.Spec(name).default_value, default_value) << name;
    EXPECT_FALSE(registry.Spec(name).doc.empty()) << name;
  }
}

TEST(SettingsParseTest, Bool) {
  Settings registry = MakeRegistry();
  for (const char* good : {"0", "1", "true", "false", "TRUE", "False"}) {
    EXPECT_NO_THROW(registry.Set("MXNET_ENFORCE_DETERMINISM", good)) << good;
  }
  registry.Set("MXNET_ENFORCE_DETERMINISM", "True");
  EXPECT_TRUE(registry.GetBool("MXNET_ENFORCE_DETERMINISM"));
  registry.Set("MXNET_ENFORCE_DETERMINISM", "0");
  EXPECT_FALSE(registry.GetBool("MXNET_ENFORCE_DETERMINISM"));
  for (const char* bad : {"2", "yes please", "", "on1"}) {
    std::string message = ErrorOf([&] { registry.Set("MXNET_ENFORCE_DETERMINISM", bad); });
    EXPECT_TRUE(Contains(message, "MXNET_ENFORCE_DETERMINISM")) << message;
    EXPECT_TRUE(Contains(message, "0 or 1")) << message;
  }
}

TEST(SettingsParseTest, IntWithRange) {
  Settings registry = MakeRegistry();
  registry.Set("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "20");
  EXPECT_EQ(registry.GetInt("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF"), 20);
  registry.Set("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "34");
  EXPECT_EQ(registry.GetInt("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF"), 34);
  for (const char* bad : {"19", "35", "abc", "24x", "", "2.5"}) {
    std::string message =
        ErrorOf([&] { registry.Set("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", bad); });
    EXPECT_TRUE(Contains(message, "MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF")) << message;
    EXPECT_TRUE(Contains(message, std::string("'") + bad + "'")) << message;
    EXPECT_TRUE(Contains(message, "20..34")) << message;
  }
  EXPECT_TRUE(Contains(ErrorOf([&] { registry.Set("MXNET_GPU_MEM_POOL_RESERVE", "101"); }),
                       "0..100"));
  EXPECT_TRUE(Contains(ErrorOf([&] { registry.Set("MXNET_CPU_WORKER_NTHREADS", "0"); }),
                       ">= 1"));
}

TEST(SettingsParseTest, EnumWithAliases) {
  Settings registry = MakeRegistry();
  registry.Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "fastest");
  EXPECT_EQ(registry.GetString("MXNET_CUDNN_AUTOTUNE_DEFAULT"), "2");  // canonical value
  registry.Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0");
  EXPECT_EQ(registry.GetInt("MXNET_CUDNN_AUTOTUNE_DEFAULT"), 0);
  registry.Set("MXNET_ENGINE_TYPE", "NaiveEngine");
  EXPECT_EQ(registry.GetString("MXNET_ENGINE_TYPE"), "NaiveEngine");
  std::string message = ErrorOf([&] { registry.Set("MXNET_ENGINE_TYPE", "Foo"); });
  EXPECT_TRUE(Contains(message, "'Foo'")) << message;
  EXPECT_TRUE(Contains(message, "ThreadedEnginePerDevice, ThreadedEngine, NaiveEngine"))
      << message;
}

TEST(SettingsParseTest, StringAndPath) {
  Settings registry = MakeRegistry();
  registry.Set("MXNET_LIBRARY_PATH", "/opt/mxlite/lib");
  EXPECT_EQ(registry.GetString("MXNET_LIBRARY_PATH"), "/opt/mxlite/lib");
  registry.Set("MXNET_HOME", "~/data");
  const char* home = std::getenv("HOME");
  EXPECT_EQ(registry.GetString("MXNET_HOME"), std::string(home ? home : "") + "/data");
}

TEST(SettingsPrecedenceTest, AttributeOverProgramOverEnvironmentOverDefault) {
  Settings registry = MakeRegistry();
  SettingValue value = registry.Get("MXNET_CUDNN_AUTOTUNE_DEFAULT");
  EXPECT_EQ(value.text, "1");
  EXPECT_EQ(value.source, SettingSource::kDefault);

  registry.ReplaceEnvironment({{"MXNET_CUDNN_AUTOTUNE_DEFAULT", "2"}});
  value = registry.Get("MXNET_CUDNN_AUTOTUNE_DEFAULT");
  EXPECT_EQ(value.text, "2");
  EXPECT_EQ(value.source, SettingSource::kEnvironment);

  registry.Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0");
  value = registry.Get("MXNET_CUDNN_AUTOTUNE_DEFAULT");
  EXPECT_EQ(value.text, "0");
  EXPECT_EQ(value.source, SettingSource::kProgram);

  value = registry.Resolve("MXNET_CUDNN_AUTOTUNE_DEFAULT", "limited_workspace",
                           "attribute cudnn_tune of conv0");
  EXPECT_EQ(value.text, "1");
  EXPECT_EQ(value.source, SettingSource::kAttribute);
  EXPECT_EQ(registry.Resolve("MXNET_CUDNN_AUTOTUNE_DEFAULT", std::nullopt, "").source,
            SettingSource::kProgram);

  registry.Reset("MXNET_CUDNN_AUTOTUNE_DEFAULT");
  EXPECT_EQ(registry.Get("MXNET_CUDNN_AUTOTUNE_DEFAULT").source, SettingSource::kEnvironment);
  EXPECT_STREQ(SettingSourceName(SettingSource::kAttribute), "attribute");
  EXPECT_STREQ(SettingSourceName(SettingSource::kEnvironment), "environment");
}

TEST(SettingsPrecedenceTest, InvalidAttributeNamesTheAttribute) {
  Settings registry = MakeRegistry();
  std::string message = ErrorOf([&] {
    registry.Resolve("MXNET_CUDNN_AUTOTUNE_DEFAULT", "fast", "attribute cudnn_tune of conv3");
  });
  EXPECT_TRUE(Contains(message, "attribute cudnn_tune of conv3")) << message;
  EXPECT_TRUE(Contains(message, "off, limited_workspace, fastest")) << message;
}

TEST(SettingsEnvironmentTest, InvalidValueIsAnErrorNotADefault) {
  Settings registry = MakeRegistry({{"MXNET_CUDNN_AUTOTUNE_DEFAULT", "3"}});
  std::string message = ErrorOf([&] { registry.Get("MXNET_CUDNN_AUTOTUNE_DEFAULT"); });
  EXPECT_TRUE(Contains(message, "MXNET_CUDNN_AUTOTUNE_DEFAULT")) << message;
  EXPECT_TRUE(Contains(message, "'3'")) << message;
  EXPECT_TRUE(Contains(message, "0, 1, 2")) << message;
  EXPECT_TRUE(Contains(message, "environment")) << message;
  std::vector<std::string> errors = registry.Validate();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(Contains(errors[0], "MXNET_CUDNN_AUTOTUNE_DEFAULT"));
  // A program value overrides the bad environment value.
  registry.Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "2");
  EXPECT_EQ(registry.GetInt("MXNET_CUDNN_AUTOTUNE_DEFAULT"), 2);
}

TEST(SettingsEnvironmentTest, TypoGetsOneWarningWithClosestName) {
  Settings registry = MakeRegistry({{"MXNET_ENGNE_TYPE", "NaiveEngine"},
                                    {"MXNET_ENGINE_TYPE", "NaiveEngine"},
                                    {"NNVM_EXEC_MATCH_RANG", "4"}});
  std::vector<EnvironmentNotice> notices = registry.AuditEnvironment();
  ASSERT_EQ(notices.size(), 2u);
  for (const EnvironmentNotice& notice : notices) {
    EXPECT_EQ(notice.kind, EnvironmentNotice::Kind::kUnknownVariable);
  }
  EXPECT_EQ(notices[0].variable, "MXNET_ENGNE_TYPE");
  EXPECT_TRUE(Contains(notices[0].message, "did you mean MXNET_ENGINE_TYPE?"))
      << notices[0].message;
  EXPECT_TRUE(Contains(notices[1].message, "NNVM_EXEC_MATCH_RANGE")) << notices[1].message;
}

TEST(SettingsEnvironmentTest, RecognisedUnusedVariableGetsANoticeNotATypoWarning) {
  Settings registry = MakeRegistry({{"MXNET_CPU_NNPACK_NTHREADS", "4"}});
  std::vector<EnvironmentNotice> notices = registry.AuditEnvironment();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, EnvironmentNotice::Kind::kRecognisedUnused);
  EXPECT_TRUE(Contains(notices[0].message, "does not use")) << notices[0].message;
  EXPECT_FALSE(Contains(notices[0].message, "did you mean"));
}

TEST(SettingsEnvironmentTest, UnknownSettingNameInCodeSuggestsClosest) {
  Settings registry = MakeRegistry();
  std::string message = ErrorOf([&] { registry.Get("MXNET_GPU_MEM_POOL_TYP"); });
  EXPECT_TRUE(Contains(message, "did you mean MXNET_GPU_MEM_POOL_TYPE?")) << message;
}

TEST(SettingsEnvironmentTest, ReadsProcessEnvironment) {
  ::setenv("MXNET_EXEC_NUM_TEMP", "3", 1);
  ::setenv("SOMETHING_ELSE", "x", 1);
  EnvironmentMap environment = ReadProcessEnvironment();
  ::unsetenv("MXNET_EXEC_NUM_TEMP");
  ::unsetenv("SOMETHING_ELSE");
  EXPECT_EQ(environment.at("MXNET_EXEC_NUM_TEMP"), "3");
  EXPECT_EQ(environment.count("SOMETHING_ELSE"), 0u);
}

TEST(SettingsConcurrencyTest, ConcurrentReadsAndWrites) {
  Settings registry = MakeRegistry();
  std::atomic<bool> stop{false}, reading{false};
  // The writer starts once the reader does, so that on a fast machine the 2000 writes cannot all
  // land before the first read (the reads must overlap them to test anything).
  std::thread writer([&] {
    while (!reading) std::this_thread::yield();
    for (int i = 0; i < 2000; ++i) {
      registry.Set("MXNET_EXEC_NUM_TEMP", std::to_string(1 + i % 7));
    }
    stop = true;
  });
  int64_t reads = 0;
  reading = true;
  do {
    int64_t value = registry.GetInt("MXNET_EXEC_NUM_TEMP");
    ASSERT_TRUE(value >= 1 && value <= 7);
    ++reads;
  } while (!stop);
  writer.join();
  EXPECT_GT(reads, 0);
}

}  // namespace
}  // namespace mxlite
