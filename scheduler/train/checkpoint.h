// Checkpoints: named arrays (parameters, auxiliary states), optional named optimizer-state arrays
// and a small string metadata map (epoch, learning rate, ...) in one binary file.
//
//   Checkpoint saved{.arrays = {{"fc0_weight", w}}, .metadata = {{"epoch", "3"}}};
//   SaveCheckpoint("model-0003.mxckpt", saved);
//   Checkpoint loaded = LoadCheckpoint("model-0003.mxckpt");        // fresh CPU arrays
//   LoadCheckpointInto("model-0003.mxckpt", &bound);                 // into existing arrays
//
// Writing is atomic: the file is written to a temporary file in the same folder, fsync'd, renamed
// over `path`, and the folder is fsync'd. A crash or an error at any point (a failed write, an
// array that cannot be read) leaves `path` as it was, old checkpoint or none, and removes the
// temporary file.
//
// Format (version 1, little-endian):
//   file      header | body
//   header    "MXLCKPT\0" | u32 version | u32 CRC32 of the body | u64 body bytes
//   body      u32 count, that many (string key | string value)      metadata
//             u32 count, that many arrays                             arrays
//             u32 count, that many arrays                             optimizer states
//   array     string name | string dtype ("float32") | u8 ndim | i64 dims[ndim] | elements,
//             row-major, in the dtype's little-endian bytes
//   string    u32 length | bytes
// Loading reads the file into memory (bounded by its size) and rejects, with an mxlite::Error
// naming the file and the problem: a bad magic (not a checkpoint), an unknown version, a size
// other than the header says (truncated), a CRC mismatch, and shapes or lengths that do not fit
// in the body.
//
// Thread safety: the functions are reentrant. Saving reads the arrays (waiting for pending
// writes); loading into arrays writes them (waiting for pending uses).
#pragma once

#include <map>
#include <string>

#include "engine/ndarray.h"

namespace mxlite {

struct Checkpoint {
  std::map<std::string, NDArray> arrays;            // parameters and auxiliary states
  std::map<std::string, NDArray> optimizer_states;  // e.g. "fc0_weight_momentum"
  std::map<std::string, std::string> metadata;      // e.g. "epoch" -> "3"
};

// Writes `checkpoint` to `path` atomically (see above). Arrays may live on any device.
void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint);

// Reads `path` into new CPU arrays.
Checkpoint LoadCheckpoint(const std::string& path);

// As in MXNet's set_params: by default the file must hold exactly the arrays asked for.
struct CheckpointLoadOptions {
  bool allow_missing = false;  // arrays of the target that the file lacks keep their values
  bool allow_extra = false;    // arrays in the file that the target lacks are ignored
};

// Reads `path` and copies its arrays into the arrays already in `target` (whose handles may be
// shared, e.g. with an executor, which then sees the loaded values), then replaces
// target->metadata. target->optimizer_states is filled only when it is non-empty (a caller that
// only infers passes none and the file's optimizer states are ignored). Names, shapes and dtypes
// must match; every mismatch is listed in one error, and then no array has been written.
void LoadCheckpointInto(const std::string& path, Checkpoint* target,
                        const CheckpointLoadOptions& options = {});

}  // namespace mxlite
