// onnxrun --version: the release, the ONNX opsets it reads, and the CUDA / cuDNN libraries and GPU
// it runs with.
#ifndef ONNXRUN_CLI_VERSION_H_
#define ONNXRUN_CLI_VERSION_H_

#include <string>

#include "runtime/version.h"

namespace cli {

// What --version prints: "onnxrun 0.1.0", the opsets, the libraries (loaded and built against) and
// the GPUs, or why none is usable.
std::string VersionText();

}  // namespace cli

#endif  // ONNXRUN_CLI_VERSION_H_
