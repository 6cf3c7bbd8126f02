// The persistent tuning DB: round trips, keys that must not match, modes, the system DB, several
// processes writing at once, a process killed mid-write, and corrupt or foreign files.
#include "ops/conv/tuning_db.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/logging.h"
#include "ops/cpu/conv_algorithms.h"

namespace mxlite::conv {
namespace {

namespace fs = std::filesystem;

const TuningEnvironment kHere{"Test CPU (2 threads, avx2 fma)", "mxlite 0.1.0"};

ConvProblem MakeProblem(int index) {
  ConvProblem problem;
  problem.direction = ConvDirection::kForward;
  problem.data = Shape{1, 1 + index, 8, 8};
  problem.weight = Shape{4, 1 + index, 3, 3};
  problem.stride = {1, 1};
  problem.pad = {1, 1};
  problem.dilation = {1, 1};
  return problem;
}

TuningRecord MakeRecord(int index, const std::string& algorithm = "winograd_f2x2_3x3") {
  TuningRecord record;
  record.algorithm = algorithm;
  record.layout = "NCHW";
  record.time_ms = 0.25 + index;
  record.workspace_bytes = 4096u * static_cast<uint64_t>(index);
  record.candidates = {{algorithm, "NCHW", 0.25 + index, record.workspace_bytes, ""},
                       {"im2col_gemm", "NCHW", 1.5 + index, 1u << 20, ""},
                       {"implicit_gemm", "NHWC", -1.0, 1u << 30, "workspace"}};
  record.tuning_mode = "limited_workspace";
  record.timestamp = 1700000000 + index;
  return record;
}

// A fresh folder per test, removed afterwards; log lines are captured.
class TuningDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_tuning_db_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    SetLogSink([this](LogLevel level, const std::string& line) {
      if (level >= LogLevel::kWarning) warnings_.push_back(line);
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    fs::remove_all(folder_);
  }

  TuningDbOptions Options(TuningDbMode mode, std::string system_path = "") const {
    return {UserPath(), std::move(system_path), mode};
  }
  std::string UserPath() const { return (folder_ / "nested" / "tuning.sqlite").string(); }

  std::vector<std::string> AsideFiles() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(fs::path(UserPath()).parent_path())) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("tuning.sqlite.corrupt-") && !name.ends_with("-wal")) {
        found.push_back(entry.path().string());
      }
    }
    return found;
  }

  fs::path folder_;
  std::vector<std::string> warnings_;
};

TEST_F(TuningDbTest, ProblemTextIsCanonical) {
  ConvProblem problem = MakeProblem(2);
  problem.direction = ConvDirection::kBackwardFilter;
  problem.groups = 3;
  EXPECT_EQ(problem.ToString(),
            "backward_filter data=(1,3,8,8) weight=(4,3,3,3) stride=1x1 pad=1x1 dilation=1x1 "
            "groups=3 dtype=float32 layout=NCHW");
  EXPECT_EQ(MakeProblem(2).ToString(), MakeProblem(2).ToString());
  EXPECT_NE(MakeProblem(2).ToString(), MakeProblem(3).ToString());
  problem.direction = ConvDirection::kForward;
  problem.prepared_weight = true;
  EXPECT_EQ(problem.ToString(),
            "forward data=(1,3,8,8) weight=(4,3,3,3) stride=1x1 pad=1x1 dilation=1x1 "
            "groups=3 dtype=float32 layout=NCHW weight=prepared");
}

TEST_F(TuningDbTest, StoreThenLookupRoundTripsThroughCacheAndFile) {
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    EXPECT_TRUE(db.has_user_db());
    EXPECT_FALSE(db.Lookup(MakeProblem(1), kHere).has_value());
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
    auto hit = db.Lookup(MakeProblem(1), kHere);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->source, TuningDbSource::kCache);
    EXPECT_EQ(hit->record, MakeRecord(1));
  }
  // A second instance (a second run) finds every entry in the file and needs no tuning.
  TuningDb again(Options(TuningDbMode::kUpdate));
  auto hit = again.Lookup(MakeProblem(1), kHere);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->source, TuningDbSource::kUserDb);
  EXPECT_EQ(hit->record, MakeRecord(1));
  EXPECT_EQ(again.Lookup(MakeProblem(1), kHere)->source, TuningDbSource::kCache);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(TuningDbTest, StoreReplacesTheEntryAndItsCandidates) {
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
    TuningRecord shorter = MakeRecord(7, "im2col_gemm");
    shorter.candidates.resize(1);
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, shorter));
  }
  TuningDb again(Options(TuningDbMode::kUpdate));
  auto hit = again.Lookup(MakeProblem(1), kHere);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record.algorithm, "im2col_gemm");
  EXPECT_EQ(hit->record.candidates.size(), 1u);
}

TEST_F(TuningDbTest, EntriesFromAnotherDeviceOrVersionAreIgnored) {
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  }
  TuningDb db(Options(TuningDbMode::kUpdate));
  const TuningEnvironment other_device{"Other CPU (2 threads, avx2 fma)", kHere.versions};
  const TuningEnvironment other_threads{"Test CPU (1 thread, avx2 fma)", kHere.versions};
  const TuningEnvironment other_version{kHere.device, "mxlite 0.2.0"};
  EXPECT_FALSE(db.Lookup(MakeProblem(1), other_device).has_value());
  EXPECT_FALSE(db.Lookup(MakeProblem(1), other_threads).has_value());
  EXPECT_FALSE(db.Lookup(MakeProblem(1), other_version).has_value());
  EXPECT_TRUE(db.Lookup(MakeProblem(1), kHere).has_value());
}

TEST_F(TuningDbTest, CpuEnvironmentNamesModelThreadsAndVersion) {
  const TuningEnvironment two = TuningEnvironment::ForCpu(2);
  EXPECT_NE(two.device.find("(2 threads"), std::string::npos) << two.device;
  EXPECT_EQ(two.versions, std::string("mxlite ") + MXLITE_VERSION + ", CPU kernels r" +
                              std::to_string(cpu::kCpuConvKernelsRevision));
  EXPECT_NE(two.device, TuningEnvironment::ForCpu(1).device);
}

TEST_F(TuningDbTest, OffReadsAndWritesNothing) {
  {
    TuningDb off(Options(TuningDbMode::kOff));
    EXPECT_FALSE(off.Store(MakeProblem(1), kHere, MakeRecord(1)));
    EXPECT_FALSE(off.has_user_db());
  }
  EXPECT_FALSE(fs::exists(UserPath()));
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(db.Store(MakeProblem(2), kHere, MakeRecord(2)));
  }
  TuningDb off(Options(TuningDbMode::kOff));
  EXPECT_FALSE(off.Lookup(MakeProblem(2), kHere).has_value());
}

TEST_F(TuningDbTest, ReadOnlyReadsButNeverWrites) {
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  }
  {
    TuningDb read_only(Options(TuningDbMode::kReadOnly));
    auto hit = read_only.Lookup(MakeProblem(1), kHere);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->source, TuningDbSource::kUserDb);
    EXPECT_FALSE(read_only.Store(MakeProblem(2), kHere, MakeRecord(2)));
    EXPECT_FALSE(read_only.Store(MakeProblem(1), kHere, MakeRecord(9, "im2col_gemm")));
  }
  TuningDb db(Options(TuningDbMode::kUpdate));
  EXPECT_FALSE(db.Lookup(MakeProblem(2), kHere).has_value());
  EXPECT_EQ(db.Lookup(MakeProblem(1), kHere)->record, MakeRecord(1));
}

TEST_F(TuningDbTest, RefreshIgnoresStoredEntriesAndOverwritesThem) {
  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  }
  {
    TuningDb refresh(Options(TuningDbMode::kRefresh));
    EXPECT_FALSE(refresh.Lookup(MakeProblem(1), kHere).has_value());
    ASSERT_TRUE(refresh.Store(MakeProblem(1), kHere, MakeRecord(5, "im2col_gemm")));
    // What this process tuned is used from then on.
    EXPECT_EQ(refresh.Lookup(MakeProblem(1), kHere)->record, MakeRecord(5, "im2col_gemm"));
  }
  TuningDb db(Options(TuningDbMode::kUpdate));
  EXPECT_EQ(db.Lookup(MakeProblem(1), kHere)->record, MakeRecord(5, "im2col_gemm"));
}

TEST_F(TuningDbTest, SystemDbIsReadNeverWrittenAndTheUserDbWins) {
  const std::string system_path = (folder_ / "system" / "tuning.sqlite").string();
  {
    TuningDb system(TuningDbOptions{system_path, "", TuningDbMode::kUpdate});
    ASSERT_TRUE(system.Store(MakeProblem(1), kHere, MakeRecord(1, "system_pick")));
    ASSERT_TRUE(system.Store(MakeProblem(2), kHere, MakeRecord(2, "system_pick")));
  }
  {
    TuningDb user(Options(TuningDbMode::kUpdate));
    ASSERT_TRUE(user.Store(MakeProblem(1), kHere, MakeRecord(1, "user_pick")));
  }
  {
    TuningDb db(Options(TuningDbMode::kUpdate, system_path));
    EXPECT_TRUE(db.has_system_db());
    auto first = db.Lookup(MakeProblem(1), kHere);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->source, TuningDbSource::kUserDb);
    EXPECT_EQ(first->record.algorithm, "user_pick");
    auto second = db.Lookup(MakeProblem(2), kHere);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->source, TuningDbSource::kSystemDb);
    EXPECT_EQ(second->record, MakeRecord(2, "system_pick"));
    EXPECT_FALSE(db.Lookup(MakeProblem(3), kHere).has_value());
    ASSERT_TRUE(db.Store(MakeProblem(3), kHere, MakeRecord(3)));
  }
  TuningDb system(TuningDbOptions{system_path, "", TuningDbMode::kReadOnly});
  EXPECT_FALSE(system.Lookup(MakeProblem(3), kHere).has_value());
  TuningDb user(Options(TuningDbMode::kReadOnly));
  EXPECT_TRUE(user.Lookup(MakeProblem(3), kHere).has_value());
}

// Stores problems [first, first + count) and exits 0, or exits 1 on the first failed store.
[[noreturn]] void StoreInChildAndExit(const TuningDbOptions& options, int first, int count,
                                      int report_fd = -1) {
  SetLogSink(nullptr);
  TuningDb db(options);
  for (int i = first; i < first + count; ++i) {
    if (!db.Store(MakeProblem(i), kHere, MakeRecord(i))) _exit(1);
    if (report_fd >= 0 && write(report_fd, &i, sizeof(i)) != sizeof(i)) _exit(2);
  }
  _exit(0);
}

TEST_F(TuningDbTest, FourProcessesStoringAtOnceLoseNothing) {
  constexpr int kProcesses = 4;
  constexpr int kPerProcess = 250;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) StoreInChildAndExit(Options(TuningDbMode::kUpdate), p * 1000, kPerProcess);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  TuningDb db(Options(TuningDbMode::kReadOnly));
  int found = 0;
  for (int p = 0; p < kProcesses; ++p) {
    for (int i = p * 1000; i < p * 1000 + kPerProcess; ++i) {
      auto hit = db.Lookup(MakeProblem(i), kHere);
      if (hit && hit->source == TuningDbSource::kUserDb && hit->record == MakeRecord(i)) ++found;
    }
  }
  EXPECT_EQ(found, kProcesses * kPerProcess);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(TuningDbTest, ProcessKilledMidWriteLeavesEveryCommittedEntry) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    StoreInChildAndExit(Options(TuningDbMode::kUpdate), 0, 1000000, pipe_fds[1]);
  }
  close(pipe_fds[1]);
  // Each index arrives after its transaction committed; kill the child while it keeps storing.
  std::vector<int> committed;
  int index = 0;
  while (committed.size() < 200 && read(pipe_fds[0], &index, sizeof(index)) == sizeof(index)) {
    committed.push_back(index);
  }
  kill(pid, SIGKILL);
  while (read(pipe_fds[0], &index, sizeof(index)) == sizeof(index)) committed.push_back(index);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended by itself: status " << status;
  ASSERT_GE(committed.size(), 200u);

  TuningDb db(Options(TuningDbMode::kUpdate));
  ASSERT_TRUE(db.has_user_db());
  for (int i : committed) {
    auto hit = db.Lookup(MakeProblem(i), kHere);
    ASSERT_TRUE(hit.has_value()) << "entry " << i << " was committed but is missing";
    EXPECT_EQ(hit->record, MakeRecord(i));
  }
  EXPECT_TRUE(db.Store(MakeProblem(-1), kHere, MakeRecord(0)));
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

// A file at the user path that is not our DB: one warning naming it, set aside, a fresh DB works.
void ExpectSetAsideAndRebuilt(const std::string& path, const std::vector<std::string>& warnings,
                              const std::vector<std::string>& aside,
                              const std::string& original_bytes) {
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(".corrupt-"), std::string::npos) << warnings[0];
  ASSERT_EQ(aside.size(), 1u);
  std::ifstream file(aside[0], std::ios::binary);
  const std::string kept((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, original_bytes);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

TEST_F(TuningDbTest, RandomBytesAreSetAsideAndAFreshDbCreated) {
  fs::create_directories(fs::path(UserPath()).parent_path());
  std::string bytes(8192, '\0');
  std::mt19937 random(7);
  for (char& byte : bytes) byte = static_cast<char>(random());
  std::ofstream(UserPath(), std::ios::binary) << bytes;

  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    EXPECT_TRUE(db.has_user_db());
    EXPECT_EQ(db.mode(), TuningDbMode::kUpdate);
    EXPECT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  }
  ExpectSetAsideAndRebuilt(UserPath(), warnings_, AsideFiles(), bytes);
  TuningDb again(Options(TuningDbMode::kUpdate));
  EXPECT_EQ(again.Lookup(MakeProblem(1), kHere)->record, MakeRecord(1));
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(TuningDbTest, SqliteWithAForeignSchemaIsSetAsideAndAFreshDbCreated) {
  fs::create_directories(fs::path(UserPath()).parent_path());
  sqlite3* foreign = nullptr;
  ASSERT_EQ(sqlite3_open(UserPath().c_str(), &foreign), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(foreign, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('a')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(foreign);
  const std::string bytes = ReadFile(UserPath());

  {
    TuningDb db(Options(TuningDbMode::kUpdate));
    EXPECT_TRUE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  }
  ExpectSetAsideAndRebuilt(UserPath(), warnings_, AsideFiles(), bytes);
  EXPECT_NE(warnings_[0].find("people"), std::string::npos) << warnings_[0];
  TuningDb again(Options(TuningDbMode::kUpdate));
  EXPECT_EQ(again.Lookup(MakeProblem(1), kHere)->record, MakeRecord(1));
}

TEST_F(TuningDbTest, ForeignSystemDbIsIgnoredWithAWarningAndLeftInPlace) {
  const std::string system_path = (folder_ / "system.sqlite").string();
  fs::create_directories(folder_);
  std::ofstream(system_path) << "not a database";
  TuningDb db(Options(TuningDbMode::kUpdate, system_path));
  EXPECT_FALSE(db.has_system_db());
  EXPECT_TRUE(db.has_user_db());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(system_path), std::string::npos) << warnings_[0];
  EXPECT_EQ(ReadFile(system_path), "not a database");
}

TEST_F(TuningDbTest, UnwritableLocationDegradesWithAWarning) {
  fs::create_directories(folder_);
  std::ofstream(folder_ / "a_file") << "x";
  const std::string impossible = (folder_ / "a_file" / "sub" / "tuning.sqlite").string();
  TuningDb db(TuningDbOptions{impossible, "", TuningDbMode::kUpdate});
  EXPECT_EQ(db.mode(), TuningDbMode::kReadOnly);
  EXPECT_FALSE(db.has_user_db());
  EXPECT_FALSE(db.Store(MakeProblem(1), kHere, MakeRecord(1)));
  EXPECT_EQ(db.Lookup(MakeProblem(1), kHere)->source, TuningDbSource::kCache);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(impossible), std::string::npos) << warnings_[0];
}

TEST_F(TuningDbTest, OptionsComeFromTheSettings) {
  Settings defaults(BuiltinSettingSpecs(), BuiltinRecognisedUnusedVariables(),
                    {{"MXNET_HOME", "/data/mx"}});
  const TuningDbOptions options = TuningDbOptions::FromSettings(defaults);
  EXPECT_EQ(options.user_path, "/data/mx/mxlite/tuning.sqlite");
  EXPECT_EQ(options.system_path, "");
  EXPECT_EQ(options.mode, TuningDbMode::kUpdate);

  Settings set(BuiltinSettingSpecs(), BuiltinRecognisedUnusedVariables(),
               {{"MXNET_TUNING_DB_PATH", "/tmp/t.sqlite"},
                {"MXNET_TUNING_DB_MODE", "refresh"},
                {"MXNET_TUNING_SYSTEM_DB_PATH", "/opt/mxlite/tuning.sqlite"}});
  const TuningDbOptions chosen = TuningDbOptions::FromSettings(set);
  EXPECT_EQ(chosen.user_path, "/tmp/t.sqlite");
  EXPECT_EQ(chosen.system_path, "/opt/mxlite/tuning.sqlite");
  EXPECT_EQ(chosen.mode, TuningDbMode::kRefresh);
  EXPECT_THROW(ParseTuningDbMode("sometimes"), Error);
}

}  // namespace
}  // namespace mxlite::conv
