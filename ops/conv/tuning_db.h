// The persistent convolution tuning database (docs/design.md, Convolution tuning): what the tuner
// chose for a convolution problem on this device with these library versions, kept across
// processes.
//
//   TuningDb db(TuningDbOptions::FromSettings(settings()));
//   TuningEnvironment here = TuningEnvironment::ForCpu();
//   if (auto hit = db.Lookup(problem, here)) use(hit->record);      // cache, user DB, system DB
//   else db.Store(problem, here, Tune(problem));                      // caller falls back / tunes
//
// Keys. An entry is keyed by the problem's canonical text (ConvProblem::ToString()) together with
// the device model and the library versions (TuningEnvironment). Entries stored under another
// device or other versions never match: they are ignored, never trusted.
//
// Stores. The user DB (read-write, MXNET_TUNING_DB_PATH, default $MXNET_HOME/mxlite/tuning.sqlite)
// is looked up first, then the optional read-only system DB (MXNET_TUNING_SYSTEM_DB_PATH); a miss
// in both is the caller's cue to use its heuristic or to tune. MXNET_TUNING_DB_MODE selects
//   off         nothing is read or written (the in-process cache still serves this process's
//               stores);
//   read_only   both DBs are read, nothing is written;
//   update      hits are used, Store() writes (the default);
//   refresh     stored entries are ignored (lookups miss until this process stores), Store()
//               overwrites;
//   background  the DB behaves as in update; what changes is the tuner's answer to a miss
//               (ops/conv/tuner.h: the heuristic's pick now, the tuning on a background thread).
//
// Durability and concurrency. Files are SQLite in WAL mode with a busy timeout; each Store() is one
// IMMEDIATE transaction, so several processes may tune into one file at once and a process killed
// mid-write loses nothing that was already committed. A file that is not SQLite, or is SQLite
// without our schema at our version, is reported with one warning naming it, renamed aside to
// "<path>.corrupt-<timestamp>" and replaced by a fresh DB; a corrupt system DB is ignored with a
// warning. An unusable location (no parent folder can be made, the file cannot be opened for
// writing) degrades to read-only or to no user DB, with a warning. No DB problem ever throws: the
// worst case is a miss.
//
// Thread safety: every method may be called concurrently; one mutex guards the cache and the SQLite
// connections. A TuningDb must not be used across fork(): a child process opens its own.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/settings.h"
#include "core/shape.h"
#include "ops/conv_direction.h"

namespace mxlite::conv {


// One convolution to tune. Forward, backward-data and backward-filter are separate problems.
struct ConvProblem {
  ConvDirection direction = ConvDirection::kForward;
  Shape data;    // input activation, in `layout`
  Shape weight;  // (num_filter, channels / groups, kernel...)
  std::vector<int64_t> stride;
  std::vector<int64_t> pad;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
  DType dtype = DType::kFloat32;
  std::string layout = "NCHW";
  // Forward with the weight prepared once for many calls (a CPU inference executor keeps its
  // convolutions' weights packed, MXNET_CONV_PREPACK_WEIGHTS): timed so, and keyed apart from the
  // forward that prepares it on every call (training).
  bool prepared_weight = false;
  // The tuning policy the record answers to (ConvTuner: mode, workspace limit, determinism), or
  // empty. Part of the key: a pick under one policy is not the answer under another.
  std::string policy;

  // Canonical text, equal for equal problems, e.g. "forward data=(32,64,56,56)
  // weight=(64,64,3,3) stride=1x1 pad=1x1 dilation=1x1 groups=1 dtype=float32 layout=NCHW",
  // followed by " weight=prepared" for a prepared weight and " policy=..." when a policy is set.
  std::string ToString() const;
  bool operator==(const ConvProblem&) const = default;
  // The problem whose ToString() is `text`, or nullopt when `text` is not a convolution problem's
  // key (the planner's transform, node and plan entries share the DB).
  static std::optional<ConvProblem> Parse(std::string_view text);
};

// Where a choice was measured: the device model and the versions of the libraries that ran it.
struct TuningEnvironment {
  std::string device;    // "AMD EPYC 7B13 (2 threads, avx2 fma)" or "NVIDIA H100 (sm_90)"
  std::string versions;  // "mxlite 0.1.0, CPU kernels r2" or "mxlite 0.1.0, cuDNN 9.19.0, ..."

  // This CPU with `threads` intra-op threads (0: cpu::IntraOpThreads()), its SIMD features,
  // mxlite's version and the CPU kernels' revision (cpu::kCpuConvKernelsRevision).
  static TuningEnvironment ForCpu(int threads = 0);
  // GPU `device_id` (name and compute capability) with mxlite's, cuDNN's and cuBLAS's versions.
  // Throws mxlite::Error when that GPU is not visible.
  static TuningEnvironment ForGpu(int device_id);
};

// One candidate the tuner considered: measured (time_ms >= 0, skip_reason empty) or skipped.
struct MeasuredCandidate {
  std::string algorithm;
  std::string layout;
  double time_ms = -1.0;  // median time; negative when skipped
  uint64_t workspace_bytes = 0;
  std::string skip_reason;  // "workspace", "determinism", "unsupported", ... ; empty when measured

  bool operator==(const MeasuredCandidate&) const = default;
};

// The tuner's result for one problem.
struct TuningRecord {
  std::string algorithm;  // the pick
  std::string layout;
  double time_ms = 0.0;
  uint64_t workspace_bytes = 0;
  std::vector<MeasuredCandidate> candidates;
  std::string tuning_mode;  // "limited_workspace" or "fastest"
  int64_t timestamp = 0;    // seconds since the Unix epoch when tuned

  bool operator==(const TuningRecord&) const = default;
};

enum class TuningDbMode { kOff, kReadOnly, kUpdate, kRefresh, kBackground };
// "off", "read_only", "update", "refresh", "background"; ParseTuningDbMode throws mxlite::Error on
// other text.
const char* TuningDbModeName(TuningDbMode mode);
TuningDbMode ParseTuningDbMode(const std::string& text);

struct TuningDbOptions {
  std::string user_path;    // empty: no user DB
  std::string system_path;  // empty: no system DB
  TuningDbMode mode = TuningDbMode::kUpdate;

  // MXNET_TUNING_DB_PATH (a leading "$MXNET_HOME" replaced by MXNET_HOME), MXNET_TUNING_DB_MODE and
  // MXNET_TUNING_SYSTEM_DB_PATH.
  static TuningDbOptions FromSettings(const Settings& settings);
};

enum class TuningDbSource { kCache, kUserDb, kSystemDb };
// "cache", "user DB", "system DB".
const char* TuningDbSourceName(TuningDbSource source);

struct TuningDbHit {
  TuningRecord record;
  TuningDbSource source;
};

// A convolution problem the DB holds, with its record.
struct TunedProblem {
  ConvProblem problem;
  TuningRecord record;
};
using TunedProblems = std::vector<TunedProblem>;

class TuningDb {
 public:
  // Opens (creating folders and file as needed) the user DB and the system DB. Never throws for a
  // DB problem: it warns and degrades (see the header comment).
  explicit TuningDb(TuningDbOptions options);
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  // The stored record for `problem` measured in `environment`: from the in-process cache (no SQL),
  // else the user DB, else the system DB. nullopt on a miss (and always, for stored entries, in
  // refresh mode).
  std::optional<TuningDbHit> Lookup(const ConvProblem& problem,
                                    const TuningEnvironment& environment);

  // Records `record` in the cache and, in update and refresh modes, in the user DB (replacing an
  // entry with the same key) in one transaction. Returns true when the user DB holds it afterwards;
  // false in off and read_only modes, without a writable user DB, or when the write failed
  // (warned).
  bool Store(const ConvProblem& problem, const TuningEnvironment& environment,
             const TuningRecord& record);

  // The same for a measured entry that is not a convolution problem, keyed by its own canonical
  // text (the convolution planner's layout transforms: "transform NCHW->NHWC data=(...)
  // dtype=float32"). The text must not start with a ConvDirectionName, so it never collides with
  // a ConvProblem's.
  std::optional<TuningDbHit> LookupKey(const std::string& key_text,
                                       const TuningEnvironment& environment);
  bool StoreKey(const std::string& key_text, const TuningEnvironment& environment,
                const TuningRecord& record);

  // Every convolution problem held for `environment` (entries whose keys ConvProblem::Parse
  // reads, parsed once): the user DB's, the system DB's the user DB lacks, and this process's
  // stores (replacing equal problems), in no particular order. What the heuristic tier learns
  // from (ops/conv/measured_heuristic.h). The files are read once per environment; a later
  // Store() of a problem makes a new snapshot, so the one returned never changes. Where the mode
  // reads no files (off, refresh) only this process's stores.
  std::shared_ptr<const TunedProblems> Tuned(const TuningEnvironment& environment);

  // The mode in effect: the requested one, or read_only/off when the user DB could not be written.
  TuningDbMode mode() const;
  bool has_user_db() const;
  bool has_system_db() const;
  const TuningDbOptions& options() const { return options_; }

 private:
  class SqliteStore;

  // Opens the user DB: creates folders, sets a foreign file aside, and degrades `mode` to
  // read_only (with a warning) when the file cannot be written. nullptr when there is none to read.
  static std::unique_ptr<SqliteStore> OpenUser(const std::string& path, TuningDbMode& mode);
  std::optional<TuningDbHit> LookupStores(const std::string& problem,
                                          const TuningEnvironment& environment);
  // A store of `record` under `key`: the environment's Tuned() snapshot, if made and `key` is a
  // problem's, is replaced by one that holds it. Called with mutex_ held.
  void UpdateTunedSnapshot(const std::string& key, const TuningEnvironment& environment,
                           const TuningRecord& record);
  // The user DB turned out corrupt while in use: set it aside and open a fresh one.
  void RecoverUserDb(const std::string& reason);

  const TuningDbOptions options_;
  mutable std::mutex mutex_;
  TuningDbMode mode_;                                                  // GUARDED_BY(mutex_)
  std::unique_ptr<SqliteStore> user_;                                  // GUARDED_BY(mutex_)
  std::unique_ptr<SqliteStore> system_;                                // GUARDED_BY(mutex_)
  std::unordered_map<std::string, std::optional<TuningDbHit>> cache_;  // GUARDED_BY(mutex_)
  // Tuned() snapshots by environment key ("device\nversions"), made on first use.
  std::unordered_map<std::string, std::shared_ptr<const TunedProblems>>
      tuned_;  // GUARDED_BY(mutex_)
};

// Writes the user DB at `source` (WAL mode, what was committed to its -wal file included) to
// `destination` as one self-contained file in rollback-journal mode, fit to be installed as a
// read-only system DB (MXNET_TUNING_SYSTEM_DB_PATH) on machines of the same type: compacted,
// written under a temporary name beside `destination` and renamed over it, so a reader never
// meets half a file. Throws mxlite::Error naming the file when `source` is not a tuning DB or
// `destination` cannot be written.
void ExportTuningDb(const std::string& source, const std::string& destination);

// Why the existing file at `path` is not a tuning DB mxlite can use ("not an SQLite file", "schema
// version 1, expected 3", an SQLite error), or nullopt when it is one (an empty file counts).
std::optional<std::string> TuningDbFileProblem(const std::string& path);

}  // namespace mxlite::conv
