// onnxrun --version (see version.h).
#include "cli/version.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/strings/str_cat.h"
#include "importer/importer.h"

namespace cli {
namespace {

// "13.0" from CUDA's 13000-style version numbers.
std::string CudaVersion(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

// "9.19.0" from cuDNN's 91900-style version numbers.
std::string CudnnVersion(size_t v) { return absl::StrCat(v / 10000, ".", (v % 10000) / 100, ".", v % 100); }

std::string GpuLines() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return absl::StrCat("GPU: none usable (", cudaGetErrorString(error), ")\n");
  std::string out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    absl::StrAppend(&out, "GPU ", d, ": ", p.name, " (sm_", p.major, p.minor, ", ", p.multiProcessorCount, " SMs, ",
                    p.totalGlobalMem >> 20, " MiB)\n");
  }
  return out.empty() ? "GPU: none\n" : out;
}

}  // namespace

std::string VersionText() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  return absl::StrCat(
      "onnxrun ", runtime::kOnnxrunVersion, "\n", "ONNX opsets ", importer::kMinOpset, "-", importer::kMaxOpset,
      " (ai.onnx), ai.onnx.ml, ai.onnx.preview.training, com.microsoft (contrib ops)\n", "cuDNN ",
      CudnnVersion(cudnnGetVersion()), " (built against ", CudnnVersion(CUDNN_VERSION), "), CUDA runtime ",
      CudaVersion(runtime), ", driver ", driver > 0 ? CudaVersion(driver) : std::string("none"), "\n", GpuLines());
}

}  // namespace cli
