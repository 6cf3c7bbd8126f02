#include "ops/conv/tuning_db.h"

#include "ops/cpu/conv_algorithms.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/build_info.h"
#include "core/error.h"
#include "core/logging.h"
#include "ops/cpu/parallel.h"

namespace mxlite::conv {

namespace {

namespace fs = std::filesystem;

// Bump when the tables change: files with another version are set aside and rebuilt.
constexpr int kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 30000;
constexpr char kSqliteHeader[] = "SQLite format 3";  // 16 bytes with its NUL

const char* const kCreateSchema = R"sql(
CREATE TABLE mxlite_tuning_schema(version INTEGER NOT NULL);
CREATE TABLE tuning_records(
  problem TEXT NOT NULL, device TEXT NOT NULL, versions TEXT NOT NULL,
  algorithm TEXT NOT NULL, layout TEXT NOT NULL, time_ms REAL NOT NULL,
  workspace_bytes INTEGER NOT NULL, tuning_mode TEXT NOT NULL, timestamp INTEGER NOT NULL,
  PRIMARY KEY(problem, device, versions)) WITHOUT ROWID;
CREATE TABLE tuning_candidates(
  problem TEXT NOT NULL, device TEXT NOT NULL, versions TEXT NOT NULL, position INTEGER NOT NULL,
  algorithm TEXT NOT NULL, layout TEXT NOT NULL, time_ms REAL NOT NULL,
  workspace_bytes INTEGER NOT NULL, skip_reason TEXT NOT NULL,
  PRIMARY KEY(problem, device, versions, position)) WITHOUT ROWID;
)sql";

std::string JoinExtents(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(values[i]);
  }
  return text.empty() ? "-" : text;
}

// Whether the user DB is written in `mode` (background tunes on a thread, and stores as update).
bool Writes(TuningDbMode mode) {
  return mode == TuningDbMode::kUpdate || mode == TuningDbMode::kRefresh ||
         mode == TuningDbMode::kBackground;
}

// Whether lookups read the files in `mode` (refresh ignores what they hold).
bool ReadsStores(TuningDbMode mode) {
  return mode == TuningDbMode::kReadOnly || mode == TuningDbMode::kUpdate ||
         mode == TuningDbMode::kBackground;
}

bool IsCorruption(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

// A file that exists, is not empty and does not start with SQLite's header.
bool IsForeignFile(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error) || fs::file_size(path, error) == 0 || error) return false;
  std::ifstream file(path, std::ios::binary);
  char header[sizeof(kSqliteHeader)] = {};
  file.read(header, sizeof(header));
  if (!file) return true;
  return std::memcmp(header, kSqliteHeader, sizeof(kSqliteHeader)) != 0;
}

std::string AsideTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

// Renames `path` (and its WAL) to "<path>.corrupt-<timestamp>" and warns once, naming both.
void SetAside(const std::string& path, const std::string& reason) {
  std::string aside = path + ".corrupt-" + AsideTimestamp();
  std::error_code error;
  if (fs::exists(aside, error)) aside += "-" + std::to_string(getpid());
  fs::rename(path, aside, error);
  if (error) {
    MX_LOG(WARNING) << "tuning DB " << path << " is unusable (" << reason
                    << ") and could not be renamed aside (" << error.message()
                    << "); removing it so a fresh DB can be created";
    fs::remove(path, error);
  } else {
    MX_LOG(WARNING) << "tuning DB " << path << " is unusable (" << reason << "); moved it to "
                    << aside << " and created a fresh DB";
  }
  fs::rename(path + "-wal", aside + "-wal", error);
  fs::remove(path + "-shm", error);
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  int prepare_rc() const { return rc_; }
  void Bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void Bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void Bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text ? reinterpret_cast<const char*>(text) : "";
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Real(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

// Outcome of checking a file's tables.
struct SchemaCheck {
  enum class State { kEmpty, kOurs, kForeign, kError } state;
  std::string detail;  // why foreign, or the SQLite error
  int rc = SQLITE_OK;
};

SchemaCheck CheckSchema(sqlite3* db) {
  Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (tables.prepare_rc() != SQLITE_OK) {
    return {SchemaCheck::State::kError, sqlite3_errmsg(db), tables.prepare_rc()};
  }
  std::vector<std::string> names;
  int rc;
  while ((rc = tables.Step()) == SQLITE_ROW) names.push_back(tables.Text(0));
  if (rc != SQLITE_DONE) return {SchemaCheck::State::kError, sqlite3_errmsg(db), rc};
  if (names.empty()) return {SchemaCheck::State::kEmpty, "", SQLITE_OK};
  auto has = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (!has("mxlite_tuning_schema") || !has("tuning_records") || !has("tuning_candidates")) {
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return {SchemaCheck::State::kForeign,
            "SQLite without mxlite's tuning schema (tables: " + list + ")", SQLITE_OK};
  }
  Statement version(db, "SELECT version FROM mxlite_tuning_schema");
  if (version.prepare_rc() != SQLITE_OK) {
    return {SchemaCheck::State::kError, sqlite3_errmsg(db), version.prepare_rc()};
  }
  rc = version.Step();
  if (rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE)
      return {SchemaCheck::State::kForeign, "no schema version recorded", SQLITE_OK};
    return {SchemaCheck::State::kError, sqlite3_errmsg(db), rc};
  }
  if (version.Int(0) != kSchemaVersion) {
    return {SchemaCheck::State::kForeign,
            "schema version " + std::to_string(version.Int(0)) + ", expected " +
                std::to_string(kSchemaVersion),
            SQLITE_OK};
  }
  return {SchemaCheck::State::kOurs, "", SQLITE_OK};
}

// Runs `sql`, retrying while another process holds a lock the busy handler does not wait for
// (changing the journal mode of a file being created).
int ExecWithRetry(sqlite3* db, const char* sql) {
  int rc = SQLITE_BUSY;
  for (int attempt = 0; attempt < 200; ++attempt) {
    rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return rc;
}

}  // namespace

// One open SQLite file. Not thread-safe: TuningDb's mutex serialises every call.
class TuningDb::SqliteStore {
 public:
  enum class OpenResult { kOk, kForeign, kReadOnly, kFailed };

  ~SqliteStore() { sqlite3_close_v2(db_); }

  // Opens `path` for reading and writing, creating the file and our schema when it is empty.
  // kForeign (with `detail`) when it holds something else or is corrupt; kReadOnly when it cannot
  // be written; kFailed for other errors.
  static OpenResult OpenWritable(const std::string& path, std::unique_ptr<SqliteStore>& out,
                                 std::string& detail) {
    if (IsForeignFile(path)) {
      detail = "not an SQLite file";
      return OpenResult::kForeign;
    }
    auto store = std::unique_ptr<SqliteStore>(new SqliteStore(path));
    int rc = sqlite3_open_v2(path.c_str(), &store->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             nullptr);
    if (rc != SQLITE_OK) return Classify(store.get(), rc, detail);
    sqlite3_busy_timeout(store->db_, kBusyTimeoutMs);
    // Look before changing anything: a foreign file must be set aside byte for byte.
    const SchemaCheck before = CheckSchema(store->db_);
    if (before.state == SchemaCheck::State::kForeign) {
      detail = before.detail;
      return OpenResult::kForeign;
    }
    if (before.state == SchemaCheck::State::kError) return Classify(store.get(), before.rc, detail);
    rc = ExecWithRetry(store->db_, "PRAGMA journal_mode=WAL");
    if (rc == SQLITE_OK) rc = ExecWithRetry(store->db_, "PRAGMA synchronous=NORMAL");
    if (rc == SQLITE_OK) rc = ExecWithRetry(store->db_, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return Classify(store.get(), rc, detail);

    const SchemaCheck check = CheckSchema(store->db_);  // again: another process may have won
    if (check.state == SchemaCheck::State::kEmpty) {
      rc = sqlite3_exec(store->db_, kCreateSchema, nullptr, nullptr, nullptr);
      const std::string insert = "INSERT INTO mxlite_tuning_schema(version) VALUES(" +
                                 std::to_string(kSchemaVersion) + ")";
      if (rc == SQLITE_OK) rc = sqlite3_exec(store->db_, insert.c_str(), nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) rc = sqlite3_exec(store->db_, "COMMIT", nullptr, nullptr, nullptr);
      if (rc != SQLITE_OK) return Classify(store.get(), rc, detail);
    } else {
      sqlite3_exec(store->db_, "ROLLBACK", nullptr, nullptr, nullptr);
      if (check.state == SchemaCheck::State::kForeign) {
        detail = check.detail;
        return OpenResult::kForeign;
      }
      if (check.state == SchemaCheck::State::kError) return Classify(store.get(), check.rc, detail);
    }
    out = std::move(store);
    return OpenResult::kOk;
  }

  // Opens an existing file read-only and checks its schema; nullptr (with `detail`) otherwise.
  static std::unique_ptr<SqliteStore> OpenReadOnly(const std::string& path, std::string& detail) {
    if (IsForeignFile(path)) {
      detail = "not an SQLite file";
      return nullptr;
    }
    auto store = std::unique_ptr<SqliteStore>(new SqliteStore(path));
    int rc = sqlite3_open_v2(path.c_str(), &store->db_, SQLITE_OPEN_READONLY, nullptr);
    if (rc != SQLITE_OK) {
      detail = sqlite3_errstr(rc);
      return nullptr;
    }
    sqlite3_busy_timeout(store->db_, kBusyTimeoutMs);
    const SchemaCheck check = CheckSchema(store->db_);
    if (check.state == SchemaCheck::State::kOurs) return store;
    detail =
        check.state == SchemaCheck::State::kEmpty ? "empty, no mxlite tuning schema" : check.detail;
    return nullptr;
  }

  // Looks the key up. Returns the SQLite result code: SQLITE_ROW with `record` filled on a hit,
  // SQLITE_DONE on a miss, an error code otherwise.
  int Find(const std::string& problem, const TuningEnvironment& environment, TuningRecord& record) {
    Statement select(db_,
                     "SELECT algorithm, layout, time_ms, workspace_bytes, tuning_mode, timestamp "
                     "FROM tuning_records WHERE problem = ?1 AND device = ?2 AND versions = ?3");
    if (select.prepare_rc() != SQLITE_OK) return select.prepare_rc();
    BindKey(select, problem, environment);
    int rc = select.Step();
    if (rc != SQLITE_ROW) return rc;
    record = RecordFromColumns(select, 0);

    Statement candidates(db_,
                         "SELECT algorithm, layout, time_ms, workspace_bytes, skip_reason "
                         "FROM tuning_candidates WHERE problem = ?1 AND device = ?2 AND "
                         "versions = ?3 ORDER BY position");
    if (candidates.prepare_rc() != SQLITE_OK) return candidates.prepare_rc();
    BindKey(candidates, problem, environment);
    while ((rc = candidates.Step()) == SQLITE_ROW) {
      record.candidates.push_back(CandidateFromColumns(candidates, 0));
    }
    return rc == SQLITE_DONE ? SQLITE_ROW : rc;
  }

  // Every entry stored for `environment`, added to `records` under keys it does not hold yet.
  // Returns SQLITE_DONE or the error.
  int ReadAll(const TuningEnvironment& environment,
              std::unordered_map<std::string, TuningRecord>& records) {
    Statement select(db_,
                     "SELECT problem, algorithm, layout, time_ms, workspace_bytes, tuning_mode, "
                     "timestamp FROM tuning_records WHERE device = ?1 AND versions = ?2");
    if (select.prepare_rc() != SQLITE_OK) return select.prepare_rc();
    select.Bind(1, environment.device);
    select.Bind(2, environment.versions);
    std::unordered_map<std::string, TuningRecord> found;
    int rc;
    while ((rc = select.Step()) == SQLITE_ROW) found[select.Text(0)] = RecordFromColumns(select, 1);
    if (rc != SQLITE_DONE) return rc;
    Statement candidates(db_,
                         "SELECT problem, algorithm, layout, time_ms, workspace_bytes, skip_reason "
                         "FROM tuning_candidates WHERE device = ?1 AND versions = ?2 "
                         "ORDER BY problem, position");
    if (candidates.prepare_rc() != SQLITE_OK) return candidates.prepare_rc();
    candidates.Bind(1, environment.device);
    candidates.Bind(2, environment.versions);
    while ((rc = candidates.Step()) == SQLITE_ROW) {
      auto record = found.find(candidates.Text(0));
      if (record != found.end())
        record->second.candidates.push_back(CandidateFromColumns(candidates, 1));
    }
    if (rc != SQLITE_DONE) return rc;
    for (auto& [key, record] : found) records.try_emplace(key, std::move(record));
    return SQLITE_DONE;
  }

  // Replaces the entry for the key in one IMMEDIATE transaction. Returns SQLITE_OK or the error.
  int Put(const std::string& problem, const TuningEnvironment& environment,
          const TuningRecord& record) {
    int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return rc;
    rc = PutInTransaction(problem, environment, record);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return rc;
  }

  const char* last_error() const { return sqlite3_errmsg(db_); }

 private:
  explicit SqliteStore(std::string path) : path_(std::move(path)) {}

  static OpenResult Classify(SqliteStore* store, int rc, std::string& detail) {
    detail = std::string(sqlite3_errstr(rc)) + ": " + sqlite3_errmsg(store->db_);
    if (IsCorruption(rc)) return OpenResult::kForeign;
    const int primary = rc & 0xff;
    if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || primary == SQLITE_PERM) {
      return OpenResult::kReadOnly;
    }
    return OpenResult::kFailed;
  }

  // A record (no candidates) from the columns algorithm, layout, time_ms, workspace_bytes,
  // tuning_mode, timestamp starting at `first`.
  static TuningRecord RecordFromColumns(const Statement& row, int first) {
    TuningRecord record;
    record.algorithm = row.Text(first);
    record.layout = row.Text(first + 1);
    record.time_ms = row.Real(first + 2);
    record.workspace_bytes = static_cast<uint64_t>(row.Int(first + 3));
    record.tuning_mode = row.Text(first + 4);
    record.timestamp = row.Int(first + 5);
    return record;
  }

  // A candidate from the columns algorithm, layout, time_ms, workspace_bytes, skip_reason starting
  // at `first`.
  static MeasuredCandidate CandidateFromColumns(const Statement& row, int first) {
    return {row.Text(first), row.Text(first + 1), row.Real(first + 2),
            static_cast<uint64_t>(row.Int(first + 3)), row.Text(first + 4)};
  }

  static void BindKey(Statement& statement, const std::string& problem,
                      const TuningEnvironment& environment) {
    statement.Bind(1, problem);
    statement.Bind(2, environment.device);
    statement.Bind(3, environment.versions);
  }

  int PutInTransaction(const std::string& problem, const TuningEnvironment& environment,
                       const TuningRecord& record) {
    Statement upsert(db_,
                     "INSERT OR REPLACE INTO tuning_records(problem, device, versions, algorithm, "
                     "layout, time_ms, workspace_bytes, tuning_mode, timestamp) "
                     "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (upsert.prepare_rc() != SQLITE_OK) return upsert.prepare_rc();
    BindKey(upsert, problem, environment);
    upsert.Bind(4, record.algorithm);
    upsert.Bind(5, record.layout);
    upsert.Bind(6, record.time_ms);
    upsert.Bind(7, static_cast<int64_t>(record.workspace_bytes));
    upsert.Bind(8, record.tuning_mode);
    upsert.Bind(9, record.timestamp);
    int rc = upsert.Step();
    if (rc != SQLITE_DONE) return rc;

    Statement erase(db_,
                    "DELETE FROM tuning_candidates WHERE problem = ?1 AND device = ?2 AND "
                    "versions = ?3");
    if (erase.prepare_rc() != SQLITE_OK) return erase.prepare_rc();
    BindKey(erase, problem, environment);
    if ((rc = erase.Step()) != SQLITE_DONE) return rc;

    Statement insert(
        db_,
        "INSERT INTO tuning_candidates(problem, device, versions, position, algorithm, "
        "layout, time_ms, workspace_bytes, skip_reason) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (insert.prepare_rc() != SQLITE_OK) return insert.prepare_rc();
    for (size_t i = 0; i < record.candidates.size(); ++i) {
      const MeasuredCandidate& candidate = record.candidates[i];
      insert.Reset();
      BindKey(insert, problem, environment);
      insert.Bind(4, static_cast<int64_t>(i));
      insert.Bind(5, candidate.algorithm);
      insert.Bind(6, candidate.layout);
      insert.Bind(7, candidate.time_ms);
      insert.Bind(8, static_cast<int64_t>(candidate.workspace_bytes));
      insert.Bind(9, candidate.skip_reason);
      if ((rc = insert.Step()) != SQLITE_DONE) return rc;
    }
    return SQLITE_OK;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string ConvProblem::ToString() const {
  std::ostringstream out;
  out << ConvDirectionName(direction) << " data=" << data << " weight=" << weight
      << " stride=" << JoinExtents(stride) << " pad=" << JoinExtents(pad)
      << " dilation=" << JoinExtents(dilation) << " groups=" << groups << " dtype=" << dtype
      << " layout=" << layout;
  if (prepared_weight) out << " weight=prepared";
  if (!policy.empty()) out << " policy=" << policy;
  return out.str();
}

namespace {

// "12" -> 12; nullopt unless the whole text is a number that fits.
std::optional<int64_t> ParseCount(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  try {
    return std::stoll(text);
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

// "(1,64,56,56)" -> Shape; nullopt for other text.
std::optional<Shape> ParseExtentList(std::string_view text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return std::nullopt;
  std::vector<int64_t> dims;
  std::stringstream in{std::string(text.substr(1, text.size() - 2))};
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<int64_t> dim = ParseCount(item);
    if (!dim) return std::nullopt;
    dims.push_back(*dim);
  }
  if (text.size() > 2 && text[text.size() - 2] == ',') return std::nullopt;  // "(1,2,)"
  return Shape(dims);
}

// "1x1" -> {1, 1}, "-" -> {} (as JoinExtents writes them); nullopt for other text.
std::optional<std::vector<int64_t>> ParseExtents(std::string_view text) {
  std::vector<int64_t> values;
  if (text == "-") return values;
  std::stringstream in{std::string(text)};
  std::string item;
  while (std::getline(in, item, 'x')) {
    const std::optional<int64_t> value = ParseCount(item);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  if (values.empty() || text.back() == 'x') return std::nullopt;
  return values;
}

}  // namespace

std::optional<ConvProblem> ConvProblem::Parse(std::string_view text) {
  ConvProblem problem;
  // The policy is the tail: its text has spaces of its own.
  const size_t policy_at = text.find(" policy=");
  if (policy_at != std::string_view::npos) {
    problem.policy = std::string(text.substr(policy_at + 8));
    text = text.substr(0, policy_at);
  }
  std::stringstream in{std::string(text)};
  std::string direction;
  in >> direction;
  bool known_direction = false;
  for (ConvDirection d :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardFilter}) {
    if (direction == ConvDirectionName(d)) {
      problem.direction = d;
      known_direction = true;
    }
  }
  if (!known_direction) return std::nullopt;
  std::set<std::string> fields;  // each once
  std::string field;
  try {
    while (in >> field) {
      const size_t equals = field.find('=');
      if (equals == std::string::npos) return std::nullopt;
      const std::string name = field.substr(0, equals);
      const std::string value = field.substr(equals + 1);
      if (name == "weight" && value == "prepared") {
        if (problem.prepared_weight) return std::nullopt;
        problem.prepared_weight = true;
        continue;
      }
      if (!fields.insert(name).second) return std::nullopt;
      std::optional<std::vector<int64_t>> extents;
      if (name == "data" || name == "weight") {
        const std::optional<Shape> shape = ParseExtentList(value);
        if (!shape) return std::nullopt;
        (name == "data" ? problem.data : problem.weight) = *shape;
      } else if (name == "stride" || name == "pad" || name == "dilation") {
        if (!(extents = ParseExtents(value))) return std::nullopt;
        (name == "stride" ? problem.stride
         : name == "pad"  ? problem.pad
                          : problem.dilation) = *extents;
      } else if (name == "groups") {
        const std::optional<int64_t> groups = ParseCount(value);
        if (!groups) return std::nullopt;
        problem.groups = *groups;
      } else if (name == "dtype") {
        problem.dtype = ParseDType(value);
      } else if (name == "layout") {
        problem.layout = value;
      } else {
        return std::nullopt;
      }
    }
  } catch (const std::exception&) {  // an unknown dtype
    return std::nullopt;
  }
  if (fields.size() != 8) return std::nullopt;
  return problem;
}

// Asked for every tuning and planning lookup; GetBuildInfo reads /proc/cpuinfo and probes CUDA,
// and neither the machine nor the build changes while the process runs.
namespace {
const BuildInfo& ProcessBuildInfo() {
  static const BuildInfo info = GetBuildInfo();
  return info;
}
}  // namespace

TuningEnvironment TuningEnvironment::ForCpu(int threads) {
  const BuildInfo& info = ProcessBuildInfo();
  if (threads <= 0) threads = cpu::IntraOpThreads();
  std::string device =
      info.cpu_model + " (" + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  std::string features;
  for (const std::string& feature : info.cpu_features) features += " " + feature;
  device += features.empty() ? ")" : "," + features + ")";
  return {device, "mxlite " + info.version + ", CPU kernels r" +
                      std::to_string(cpu::kCpuConvKernelsRevision)};
}

TuningEnvironment TuningEnvironment::ForGpu(int device_id) {
  const BuildInfo& info = ProcessBuildInfo();
  for (const GpuInfo& gpu : info.gpus) {
    if (gpu.id != device_id) continue;
    return {gpu.name + " (sm_" + std::to_string(gpu.compute_major) +
                std::to_string(gpu.compute_minor) + ")",
            "mxlite " + info.version + ", cuDNN " + info.cudnn_version + ", cuBLAS " +
                info.cublas_version};
  }
  MX_THROW() << "tuning environment: GPU " << device_id << " is not visible (" << info.gpus.size()
             << " GPUs" << (info.gpu_probe_error.empty() ? "" : ": " + info.gpu_probe_error) << ")";
}

const char* TuningDbModeName(TuningDbMode mode) {
  switch (mode) {
    case TuningDbMode::kOff:
      return "off";
    case TuningDbMode::kReadOnly:
      return "read_only";
    case TuningDbMode::kUpdate:
      return "update";
    case TuningDbMode::kRefresh:
      return "refresh";
    case TuningDbMode::kBackground:
      return "background";
  }
  return "unknown";
}

TuningDbMode ParseTuningDbMode(const std::string& text) {
  for (TuningDbMode mode : {TuningDbMode::kOff, TuningDbMode::kReadOnly, TuningDbMode::kUpdate,
                            TuningDbMode::kRefresh, TuningDbMode::kBackground}) {
    if (text == TuningDbModeName(mode)) return mode;
  }
  MX_THROW() << "tuning DB mode '" << text
             << "': expected off, read_only, update, refresh or background";
}

TuningDbOptions TuningDbOptions::FromSettings(const Settings& settings) {
  TuningDbOptions options;
  options.user_path = settings.GetString("MXNET_TUNING_DB_PATH");
  const std::string home_variable = "$MXNET_HOME";
  if (options.user_path.starts_with(home_variable)) {
    options.user_path =
        settings.GetString("MXNET_HOME") + options.user_path.substr(home_variable.size());
  }
  options.system_path = settings.GetString("MXNET_TUNING_SYSTEM_DB_PATH");
  options.mode = ParseTuningDbMode(settings.GetString("MXNET_TUNING_DB_MODE"));
  return options;
}

const char* TuningDbSourceName(TuningDbSource source) {
  switch (source) {
    case TuningDbSource::kCache:
      return "cache";
    case TuningDbSource::kUserDb:
      return "user DB";
    case TuningDbSource::kSystemDb:
      return "system DB";
  }
  return "unknown";
}

TuningDb::TuningDb(TuningDbOptions options) : options_(std::move(options)), mode_(options_.mode) {
  if (mode_ == TuningDbMode::kOff) return;
  if (!options_.user_path.empty()) user_ = OpenUser(options_.user_path, mode_);
  if (!options_.system_path.empty()) {
    std::string detail;
    system_ = SqliteStore::OpenReadOnly(options_.system_path, detail);
    if (!system_) {
      MX_LOG(WARNING) << "tuning system DB " << options_.system_path << " is not used (" << detail
                      << ")";
    }
  }
}

TuningDb::~TuningDb() = default;

std::unique_ptr<TuningDb::SqliteStore> TuningDb::OpenUser(const std::string& path,
                                                          TuningDbMode& mode) {
  const bool writes = Writes(mode);
  std::string detail;
  if (writes) {
    std::error_code error;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, error);
    if (error) {
      detail = "cannot create folder " + parent.string() + ": " + error.message();
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        std::unique_ptr<SqliteStore> store;
        const SqliteStore::OpenResult result = SqliteStore::OpenWritable(path, store, detail);
        if (result == SqliteStore::OpenResult::kOk) return store;
        if (result != SqliteStore::OpenResult::kForeign) break;
        store.reset();
        SetAside(path, detail);
      }
    }
  }
  // Read-only: requested, or the fallback when the file cannot be written.
  std::unique_ptr<SqliteStore> store;
  std::string read_detail;
  std::error_code error;
  if (fs::exists(path, error)) store = SqliteStore::OpenReadOnly(path, read_detail);
  if (writes) {
    mode = TuningDbMode::kReadOnly;
    MX_LOG(WARNING) << "tuning DB " << path << " cannot be written (" << detail << "); "
                    << (store ? "reading it only" : "tuning results will not be kept");
  } else if (!store && !read_detail.empty()) {
    MX_LOG(WARNING) << "tuning DB " << path << " is not used (" << read_detail << ")";
  }
  return store;
}

std::optional<TuningDbHit> TuningDb::Lookup(const ConvProblem& problem,
                                            const TuningEnvironment& environment) {
  return LookupKey(problem.ToString(), environment);
}

std::optional<TuningDbHit> TuningDb::LookupKey(const std::string& problem_text,
                                               const TuningEnvironment& environment) {
  const std::string key = problem_text + '\n' + environment.device + '\n' + environment.versions;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto cached = cache_.find(key); cached != cache_.end()) {
    if (!cached->second) return std::nullopt;
    return TuningDbHit{cached->second->record, TuningDbSource::kCache};
  }
  std::optional<TuningDbHit> hit;
  if (ReadsStores(mode_)) {
    hit = LookupStores(problem_text, environment);
  }
  cache_[key] = hit;
  return hit;
}

std::optional<TuningDbHit> TuningDb::LookupStores(const std::string& problem,
                                                  const TuningEnvironment& environment) {
  TuningRecord record;
  if (user_) {
    int rc = user_->Find(problem, environment, record);
    if (IsCorruption(rc)) {
      RecoverUserDb(user_->last_error());
      rc = user_ ? user_->Find(problem, environment, record) : SQLITE_DONE;
    }
    if (rc == SQLITE_ROW) return TuningDbHit{std::move(record), TuningDbSource::kUserDb};
    if (rc != SQLITE_DONE) {
      MX_LOG(WARNING) << "tuning DB " << options_.user_path << ": lookup failed ("
                      << sqlite3_errstr(rc) << "); treating it as a miss";
    }
  }
  if (system_) {
    const int rc = system_->Find(problem, environment, record);
    if (rc == SQLITE_ROW) return TuningDbHit{std::move(record), TuningDbSource::kSystemDb};
    if (rc != SQLITE_DONE) {
      MX_LOG(WARNING) << "tuning system DB " << options_.system_path << ": lookup failed ("
                      << sqlite3_errstr(rc) << "); treating it as a miss";
    }
  }
  return std::nullopt;
}

bool TuningDb::Store(const ConvProblem& problem, const TuningEnvironment& environment,
                     const TuningRecord& record) {
  return StoreKey(problem.ToString(), environment, record);
}

bool TuningDb::StoreKey(const std::string& problem_text, const TuningEnvironment& environment,
                        const TuningRecord& record) {
  const std::string key = problem_text + '\n' + environment.device + '\n' + environment.versions;
  std::lock_guard<std::mutex> lock(mutex_);
  cache_[key] = TuningDbHit{record, TuningDbSource::kCache};
  UpdateTunedSnapshot(problem_text, environment, record);
  const bool writes = Writes(mode_);
  if (!writes || !user_) return false;
  int rc = user_->Put(problem_text, environment, record);
  if (IsCorruption(rc)) {
    RecoverUserDb(user_->last_error());
    rc = user_ ? user_->Put(problem_text, environment, record) : SQLITE_CANTOPEN;
  }
  if (rc == SQLITE_OK) return true;
  MX_LOG(WARNING) << "tuning DB " << options_.user_path << ": storing the choice for "
                  << problem_text << " failed (" << sqlite3_errstr(rc) << ")";
  return false;
}

std::shared_ptr<const TunedProblems> TuningDb::Tuned(const TuningEnvironment& environment) {
  const std::string environment_key = environment.device + '\n' + environment.versions;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto made = tuned_.find(environment_key); made != tuned_.end()) return made->second;
  std::unordered_map<std::string, TuningRecord> found;
  // This process's stores first: they win over what the files held when it started.
  const std::string suffix = '\n' + environment_key;
  for (const auto& [key, hit] : cache_) {
    if (hit && hit->source == TuningDbSource::kCache && key.ends_with(suffix)) {
      found.try_emplace(key.substr(0, key.size() - suffix.size()), hit->record);
    }
  }
  if (ReadsStores(mode_)) {
    for (const auto& [store, path] : {std::pair{user_.get(), options_.user_path},
                                      std::pair{system_.get(), options_.system_path}}) {
      if (!store) continue;
      const int rc = store->ReadAll(environment, found);
      if (rc != SQLITE_DONE) {
        MX_LOG(WARNING) << "tuning DB " << path << ": reading its entries failed ("
                        << sqlite3_errstr(rc) << "); the heuristic learns without its entries";
      }
    }
  }
  auto tuned = std::make_shared<TunedProblems>();
  for (auto& [key, record] : found) {
    // The planner's transform, node and plan entries share the files: not problems.
    if (std::optional<ConvProblem> problem = ConvProblem::Parse(key)) {
      tuned->push_back({std::move(*problem), std::move(record)});
    }
  }
  tuned_[environment_key] = tuned;
  return tuned;
}

void TuningDb::UpdateTunedSnapshot(const std::string& key, const TuningEnvironment& environment,
                                   const TuningRecord& record) {
  auto made = tuned_.find(environment.device + '\n' + environment.versions);
  if (made == tuned_.end()) return;  // made on first use, from the cache and the files
  std::optional<ConvProblem> problem = ConvProblem::Parse(key);
  if (!problem) return;  // the planner's own entries are not kept there
  auto updated = std::make_shared<TunedProblems>(*made->second);
  auto same = std::find_if(updated->begin(), updated->end(),
                           [&](const TunedProblem& tuned) { return tuned.problem == *problem; });
  if (same != updated->end()) {
    same->record = record;
  } else {
    updated->push_back({std::move(*problem), record});
  }
  made->second = std::move(updated);
}

void TuningDb::RecoverUserDb(const std::string& reason) {
  user_.reset();
  const bool writes = Writes(mode_);
  if (!writes) {
    MX_LOG(WARNING) << "tuning DB " << options_.user_path << " is corrupt (" << reason
                    << "); not using it";
    return;
  }
  SetAside(options_.user_path, reason);
  user_ = OpenUser(options_.user_path, mode_);
}

TuningDbMode TuningDb::mode() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mode_;
}

bool TuningDb::has_user_db() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return user_ != nullptr;
}

bool TuningDb::has_system_db() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return system_ != nullptr;
}

namespace {

// Runs `sql` on `db` or throws naming `what`.
void ExecOrThrow(sqlite3* db, const std::string& sql, const std::string& what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  MX_CHECK(rc == SQLITE_OK) << what << ": " << detail;
}

}  // namespace

std::optional<std::string> TuningDbFileProblem(const std::string& path) {
  if (IsForeignFile(path)) return "not an SQLite file";
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::optional<std::string> problem;
  if (rc != SQLITE_OK) {
    problem = sqlite3_errstr(rc);
  } else {
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    const SchemaCheck check = CheckSchema(db);
    if (check.state == SchemaCheck::State::kForeign || check.state == SchemaCheck::State::kError) {
      problem = check.detail;
    }
  }
  sqlite3_close_v2(db);
  return problem;
}

namespace {

// Removes an SQLite file and the journal files beside it, quietly (on a failure path: never in
// place of the error being reported).
void RemoveDbFiles(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(path + suffix, ignored);
}

}  // namespace

void ExportTuningDb(const std::string& source, const std::string& destination) {
  MX_CHECK(fs::exists(source)) << "tuning DB " << source << " does not exist";
  if (std::optional<std::string> problem = TuningDbFileProblem(source)) {
    MX_THROW() << "tuning DB " << source << " cannot be exported: " << *problem;
  }
  const std::string temporary = destination + ".writing-" + std::to_string(getpid());
  RemoveDbFiles(temporary);
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(source.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (opened != SQLITE_OK) {
    sqlite3_close_v2(db);
    MX_THROW() << "tuning DB " << source << " cannot be exported: " << sqlite3_errstr(opened);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  char* quoted = sqlite3_mprintf("VACUUM INTO %Q", temporary.c_str());
  const std::string vacuum = quoted;
  sqlite3_free(quoted);
  try {
    ExecOrThrow(db, vacuum, "writing " + temporary);
  } catch (...) {
    sqlite3_close_v2(db);
    RemoveDbFiles(temporary);
    throw;
  }
  sqlite3_close_v2(db);
  // VACUUM INTO keeps the source's WAL mode in the file's header; a system DB is opened read-only,
  // where WAL would need a writable -shm file beside it.
  sqlite3* out = nullptr;
  const int rc = sqlite3_open_v2(temporary.c_str(), &out, SQLITE_OPEN_READWRITE, nullptr);
  try {
    MX_CHECK(rc == SQLITE_OK) << "opening " << temporary << ": " << sqlite3_errstr(rc);
    ExecOrThrow(out, "PRAGMA journal_mode=DELETE", "setting the journal mode of " + temporary);
  } catch (...) {
    sqlite3_close_v2(out);
    RemoveDbFiles(temporary);
    throw;
  }
  sqlite3_close_v2(out);
  std::error_code error;
  fs::rename(temporary, destination, error);
  if (error) {
    RemoveDbFiles(temporary);
    MX_THROW() << "cannot write " << destination << ": " << error.message();
  }
}

}  // namespace mxlite::conv
