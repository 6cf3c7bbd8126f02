// The profiler's Chrome trace: valid JSON after every dump, one complete event per executed op
// (also inside bulks), MXNET_PROFILER_MODE filtering, counters, and MXNET_PROFILER_AUTOSTART.
#include "engine/profiler.h"
#include "memory/storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "engine/engine.h"
#include "tests/engine/test_util.h"

namespace mxlite {
namespace testing_util {

namespace {

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  Json Document() {
    Json value = Value();
    SkipSpace();
    if (pos_ != text_.size()) Fail("trailing characters");
    return value;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char Peek() {
    SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end");
    return text_[pos_];
  }
  void Expect(char c) {
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool Literal(const char* word) {
    std::string_view w(word);
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  Json Value() {
    char c = Peek();
    if (c == '{') return Object();
    if (c == '[') return Array();
    if (c == '"') return Json{String()};
    if (Literal("true")) return Json{true};
    if (Literal("false")) return Json{false};
    if (Literal("null")) return Json{nullptr};
    return Number();
  }
  Json Object() {
    Expect('{');
    Json::Object object;
    if (Peek() == '}') {
      ++pos_;
      return Json{object};
    }
    for (;;) {
      if (Peek() != '"') Fail("expected a key");
      std::string key = String();
      Expect(':');
      object[key] = Value();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      Expect('}');
      return Json{object};
    }
  }
  Json Array() {
    Expect('[');
    Json::Array array;
    if (Peek() == ']') {
      ++pos_;
      return Json{array};
    }
    for (;;) {
      array.push_back(Value());
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      Expect(']');
      return Json{array};
    }
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) Fail("bad escape");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u':
          if (pos_ + 4 > text_.size()) Fail("bad \\u escape");
          out += static_cast<char>(std::stoi(text_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          break;
        default:
          Fail("bad escape");
      }
    }
    if (pos_ >= text_.size()) Fail("unterminated string");
    ++pos_;
    return out;
  }
  Json Number() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == '+' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (start == pos_ || !std::isdigit(static_cast<unsigned char>(text_[pos_ - 1]))) {
      Fail("bad number");
    }
    return Json{std::stod(text_.substr(start, pos_ - start))};
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

Json ParseJson(const std::string& text) { return JsonReader(text).Document(); }

}  // namespace testing_util

namespace {

using testing_util::Json;
using testing_util::ParseJson;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("mxlite_profiler_" + name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// The trace's complete events, after checking the overall shape of every event.
std::vector<Json> CompleteEvents(const Json& trace) {
  EXPECT_TRUE(trace.is_object());
  EXPECT_TRUE(trace.has("traceEvents"));
  std::vector<Json> complete;
  for (const Json& event : trace["traceEvents"].array()) {
    EXPECT_TRUE(event["ph"].is_string());
    EXPECT_TRUE(event["name"].is_string());
    EXPECT_TRUE(event["pid"].is_number());
    EXPECT_TRUE(event["tid"].is_number());
    if (event["ph"].string() != "X") continue;
    EXPECT_TRUE(event["ts"].is_number());
    EXPECT_TRUE(event["dur"].is_number());
    EXPECT_GE(event["dur"].number(), 0);
    EXPECT_EQ(event["args"]["device"].string(), "cpu(0)");
    complete.push_back(event);
  }
  return complete;
}

int CountNamed(const std::vector<Json>& events, const std::string& name) {
  int n = 0;
  for (const Json& event : events) n += event["name"].string() == name;
  return n;
}

class ProfilerTest : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    Profiler::Get().Stop();
    Profiler::Get().Clear();
    engine_ = CreateEngine(GetParam());
  }
  void TearDown() override {
    Profiler::Get().Stop();
    Profiler::Get().Clear();
  }
  std::unique_ptr<Engine> engine_;
};

TEST_P(ProfilerTest, OneCompleteEventPerExecutedOpAlsoInBulks) {
  Storage::Global().Free(Storage::Global().Alloc(64, Context::CPU()));  // the CPU pool exists
  Profiler& profiler = Profiler::Get();
  profiler.Start(ProfilerMode::kAll);
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  for (int i = 0; i < 20; ++i) {
    engine_->PushSync([](RunContext) {}, Context::CPU(), {a}, {b}, 0, "plain \"op\"");
  }
  {
    BulkScope bulk(*engine_, 4);
    for (int i = 0; i < 10; ++i) {
      engine_->PushSync([](RunContext) {}, Context::CPU(), {b}, {a}, 0, "bulked_op",
                        {FnProperty::kNormal, OpOrigin::kExecutor});
    }
  }
  engine_->PushAsync([](RunContext, CallbackOnComplete done) { done(); }, Context::CPU(), {}, {a},
                     0, "async_op");
  engine_->WaitForAll();
  profiler.RecordCounter("memory in use", Context::CPU(), 4096);
  profiler.Stop();
  engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, 0, "after_stop");
  engine_->WaitForAll();

  auto path = TempDir("events") / "profile.json";
  profiler.Dump(path.string());
  Json trace = ParseJson(ReadFile(path.string()));
  std::vector<Json> events = CompleteEvents(trace);
  EXPECT_EQ(CountNamed(events, "plain \"op\""), 20);
  EXPECT_EQ(CountNamed(events, "bulked_op"), 10);
  EXPECT_EQ(CountNamed(events, "async_op"), 1);
  EXPECT_EQ(CountNamed(events, "after_stop"), 0);
  EXPECT_EQ(events.size(), 31u);  // waits, deletes and bulk wrappers are not events
  int counters = 0, pool_samples = 0;
  for (const Json& event : trace["traceEvents"].array()) {
    if (event["ph"].string() != "C") continue;
    if (event["name"].string() == "memory in use (bytes)") {
      ++pool_samples;  // the CPU pool's bytes, sampled after recorded ops
      continue;
    }
    if (event["name"].string() != "memory in use") continue;
    ++counters;
    EXPECT_EQ(event["args"]["memory in use"].number(), 4096);
  }
  EXPECT_EQ(counters, 1);
  EXPECT_GT(pool_samples, 0);

  // A second dump replaces the file with a complete document again.
  profiler.Start(ProfilerMode::kAll);
  engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {b}, 0, "later");
  engine_->WaitForAll();
  profiler.Dump(path.string());
  events = CompleteEvents(ParseJson(ReadFile(path.string())));
  EXPECT_EQ(events.size(), 32u);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp." + std::to_string(getpid())));
  std::filesystem::remove_all(path.parent_path());
}

TEST_P(ProfilerTest, SymbolicModeRecordsExecutorOpsOnly) {
  Profiler& profiler = Profiler::Get();
  profiler.Start(ProfilerMode::kSymbolic);
  VarHandle a = engine_->NewVar();
  engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, 0, "imperative");
  engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, 0, "copy",
                    {FnProperty::kNormal, OpOrigin::kImperative});
  engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, 0, "symbolic",
                    {FnProperty::kNormal, OpOrigin::kExecutor});
  engine_->WaitForAll();
  profiler.Stop();
  auto path = TempDir("mode") / "profile.json";
  profiler.Dump(path.string());
  std::vector<Json> events = CompleteEvents(ParseJson(ReadFile(path.string())));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["name"].string(), "symbolic");
  EXPECT_EQ(events[0]["cat"].string(), "operator");
  std::filesystem::remove_all(path.parent_path());
}

// A recorded segment's steps record one event each per push, as the profiler stands at the push
// (symbolic mode: executor pushes only).
TEST_P(ProfilerTest, RecordedSegmentStepsRecordPerPush) {
  Profiler& profiler = Profiler::Get();
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  const auto segment = engine_->NewSegment(
      Context::CPU(),
      {{[](RunContext) {}, {a}, {b}, "step one"}, {[](RunContext) {}, {b}, {a}, "step two"}});
  engine_->PushSegment(segment, 0, {FnProperty::kNormal, OpOrigin::kExecutor});  // not started
  engine_->WaitForAll();
  profiler.Start(ProfilerMode::kSymbolic);
  for (int i = 0; i < 2; ++i) {
    engine_->PushSegment(segment, 0, {FnProperty::kNormal, OpOrigin::kExecutor});
  }
  engine_->PushSegment(segment);  // imperative: not recorded in symbolic mode
  engine_->WaitForAll();
  profiler.Stop();
  engine_->PushSegment(segment, 0, {FnProperty::kNormal, OpOrigin::kExecutor});
  engine_->WaitForAll();
  auto path = TempDir("segment") / "profile.json";
  profiler.Dump(path.string());
  std::vector<Json> events = CompleteEvents(ParseJson(ReadFile(path.string())));
  EXPECT_EQ(CountNamed(events, "step one"), 2);
  EXPECT_EQ(CountNamed(events, "step two"), 2);
  EXPECT_EQ(events.size(), 4u);
  std::filesystem::remove_all(path.parent_path());
}

TEST_P(ProfilerTest, FailedOpsAreRecordedToo) {
  Profiler::Get().Start(ProfilerMode::kAll);
  VarHandle a = engine_->NewVar();
  engine_->PushSync([](RunContext) { throw std::runtime_error("x"); }, Context::CPU(), {}, {a}, 0,
                    "failing");
  EXPECT_THROW(engine_->WaitForAll(), Error);
  EXPECT_EQ(Profiler::Get().event_count(), 1u);
}

TEST_P(ProfilerTest, RecordedOpsListTheOpEventsInTheirOrder) {
  Profiler& profiler = Profiler::Get();
  profiler.Start(ProfilerMode::kAll);
  VarHandle a = engine_->NewVar();
  for (const char* name : {"first", "second"}) {
    engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, 0, name);
  }
  engine_->WaitForAll();
  profiler.Stop();
  const std::vector<Profiler::RecordedOp> ops = profiler.RecordedOps();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "first");
  EXPECT_EQ(ops[1].name, "second");
  for (const Profiler::RecordedOp& op : ops) {
    EXPECT_EQ(op.category, "operator");
    EXPECT_GE(op.duration_us, 0);
  }
  EXPECT_LE(ops[0].start_us + ops[0].duration_us, ops[1].start_us);  // they wrote one var
  profiler.Clear();
  EXPECT_TRUE(profiler.RecordedOps().empty());
}

INSTANTIATE_TEST_SUITE_P(AllEngines, ProfilerTest,
                         ::testing::Values(EngineType::kNaive, EngineType::kThreaded,
                                           EngineType::kThreadedPerDevice),
                         [](const ::testing::TestParamInfo<EngineType>& info) {
                           return std::string(EngineTypeName(info.param));
                         });

TEST(ProfilerJson, ReaderRejectsMalformedDocuments) {
  EXPECT_NO_THROW(ParseJson(R"({"a":[1,2.5,-3e2,"x\"y",true,null,{}]})"));
  EXPECT_THROW(ParseJson(R"({"a":[1,2})"), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"a":1,})"), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"a":1} x)"), std::runtime_error);
}

// Run by AutostartWritesProfileAtExit in a child process with MXNET_PROFILER_AUTOSTART=1.
TEST(ProfilerChild, DISABLED_PushOpsAndExit) {
  Engine& engine = Engine::Get();
  VarHandle var = engine.NewVar();
  for (int i = 0; i < 5; ++i) {
    engine.PushSync([](RunContext) {}, Context::CPU(), {}, {var}, 0, "child_op");
  }
  // Not waited for: the engine drains at exit, before the profiler writes profile.json.
}

TEST(ProfilerAutostart, AutostartWritesProfileAtExit) {
  auto dir = TempDir("autostart");
  std::string command = "cd '" + dir.string() +
                        "' && MXNET_PROFILER_AUTOSTART=1 MXNET_PROFILER_MODE=1 "
                        "/proc/" +
                        std::to_string(getpid()) +
                        "/exe --gtest_also_run_disabled_tests "
                        "--gtest_filter=ProfilerChild.DISABLED_PushOpsAndExit > child.log 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << ReadFile((dir / "child.log").string());
  std::string text = ReadFile((dir / "profile.json").string());
  ASSERT_FALSE(text.empty()) << "no profile.json written";
  EXPECT_EQ(CountNamed(CompleteEvents(ParseJson(text)), "child_op"), 5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mxlite
