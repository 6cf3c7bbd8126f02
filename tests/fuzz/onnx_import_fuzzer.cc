// libFuzzer target: the ONNX importer on arbitrary bytes, as if they were a model file.
//
// ImportOnnxBytes must answer every input with a model or an mxlite::Error. Anything else — a
// crash, a sanitizer report, another exception type, a huge allocation (libFuzzer's -rss_limit_mb)
// or a hang (-timeout) — is a bug in the loader: fix it there and add the input as a unit test in
// tests/scheduler/onnx_import_test.cc. How to run it: docs/onnx.md, "Fuzzing the ONNX loader".
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/logging.h"
#include "scheduler/onnx/onnx_import.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  mxlite::SetLogLevel(mxlite::LogLevel::kError);  // rejected models are the norm here, not news
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    // No model folder: external data is refused, so the fuzzer never reads the file system.
    mxlite::ImportOnnxBytes(bytes, "fuzz.onnx", /*model_dir=*/"");
  } catch (const mxlite::Error&) {
    // A clear rejection is the right answer to a malformed model.
  }
  return 0;
}
