// The release of onnxrun: what `onnxrun --version`, onnxrun_version() (the C API), onnxrun.__version__
// (Python) and the installed onnxrun.pc (tools/install.sh reads it from here) say.
#ifndef ONNXRUN_RUNTIME_VERSION_H_
#define ONNXRUN_RUNTIME_VERSION_H_

namespace runtime {

inline constexpr char kOnnxrunVersion[] = "0.1.0";

}  // namespace runtime

#endif  // ONNXRUN_RUNTIME_VERSION_H_
