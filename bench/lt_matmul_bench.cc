// lt_matmul_bench: times cuBLASLt on transformer matmul shapes (BERT-base and ViT-B/16 rows at batch
// 32) in fp16 with the bias epilogue alone, with cuBLASLt's GELU epilogue (tanh form), and bias +
// the own erf-GELU pass (kernels/cuda/matmul_epilogue): what fast GELU saves. (The weight stored
// transposed, PyTorch's Linear layout, measured the same on the H200.) With `resnet`: resnet50's 1x1
// convs at batch 1 as matmuls with the bias + ReLU epilogue, against which cuDNN's fused graphs were
// compared (twenty-third session, H200: cuBLASLt 6.8-9.3 us fp16 against cuDNN's 4-7 us autotuned,
// so 1x1 convs stay on cuDNN). Each cell is the fastest of cuBLASLt's heuristic algorithms, the
// CUDA-event mean of 30 back-to-back runs. Usage: lt_matmul_bench [resnet]. Exits 0 without a GPU.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cublas/lt_matmul.h"
#include "kernels/cuda/kernel_testing.h"
#include "kernels/cuda/matmul_epilogue.h"

namespace {

using kernels::cublas::LtMatmul;
using kernels::cublas::LtMatmulShape;

struct Buffers {
  void *x = nullptr, *w = nullptr, *bias = nullptr, *d = nullptr, *ws = nullptr;
};

// The fastest algorithm's time for `shape`, plus the own erf-GELU pass when `erf_pass`.
double BestUs(const LtMatmulShape& shape, const Buffers& b, bool erf_pass) {
  absl::StatusOr<LtMatmul> lt = LtMatmul::Create(shape);
  if (!lt.ok()) return -1;
  double best = -1;
  for (int i = 0; i < lt->algorithm_count(); ++i) {
    const LtMatmul alg = lt->WithAlgorithm(i);
    if (alg.workspace_bytes() > (32u << 20)) continue;
    bool ok = true;
    const double us = 1000 * kernels::cuda::testing::MeanLaunchMs(
                                 [&] {
                                   ok = ok && alg.Run(b.x, b.w, nullptr, b.d, b.ws, nullptr).ok();
                                   if (!erf_pass) return;
                                   kernels::cuda::MatmulEpilogueParams p;
                                   p.rows = shape.m;
                                   p.n = shape.n;
                                   p.activation = kernels::cuda::MatmulEpilogueParams::kGelu;
                                   ok = ok && kernels::cuda::MatmulEpilogue(p, b.d, nullptr) == cudaSuccess;
                                 },
                                 30);
    if (ok && us > 0 && (best < 0 || us < best)) best = us;
  }
  return best;
}

// `lt_matmul_bench resnet`: resnet50's 1x1 convs at batch 1 in NHWC as matmuls (m = H x W), the weight
// stored [n, k] as a conv keeps it, with the bias + ReLU epilogue: what cuBLASLt would take for them.
int ResnetOneByOnes(Buffers& b) {
  struct Case {
    const char* name;
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {{"layer1 conv1", 3136, 64, 64},
                                   {"layer1 conv3", 3136, 64, 256},
                                   {"layer1 conv1 (256)", 3136, 256, 64},
                                   {"layer2 conv1", 3136, 256, 128},
                                   {"layer2 conv3", 784, 128, 512},
                                   {"layer2 conv1 (512)", 784, 512, 128},
                                   {"layer3 conv3", 196, 256, 1024},
                                   {"layer3 conv1", 196, 1024, 256},
                                   {"layer3.0 conv1", 784, 512, 256},
                                   {"layer4 conv3", 49, 512, 2048},
                                   {"layer4 conv1", 49, 2048, 512},
                                   {"layer4.0 conv1", 196, 1024, 512},
                                   {"fc", 1, 2048, 1000}};
  std::printf("| conv | m x k x n | fp16 bias+ReLU us | tf32 bias+ReLU us |\n|---|---|---|---|\n");
  for (const Case& c : cases) {
    LtMatmulShape s;
    s.m = c.m, s.k = c.k, s.n = c.n;
    s.bias = b.bias;
    s.w_transposed = true;
    s.activation = LtMatmulShape::Activation::kRelu;
    const double fp16_us = BestUs(s, b, false);
    s.type = CUDA_R_32F;
    s.tf32 = true;
    const double tf32_us = BestUs(s, b, false);
    std::printf("| %s | %ld x %ld x %ld | %.1f | %.1f |\n", c.name, static_cast<long>(c.m), static_cast<long>(c.k),
                static_cast<long>(c.n), fp16_us, tf32_us);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: nothing to time\n");
    return 0;
  }
  struct Case {
    const char* name;
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {{"BERT qkv", 4096, 768, 2304},    {"BERT out", 4096, 768, 768},
                                   {"BERT ffn-up", 4096, 768, 3072}, {"BERT ffn-down", 4096, 3072, 768},
                                   {"ViT qkv", 6304, 768, 2304},     {"ViT ffn-up", 6304, 768, 3072},
                                   {"ViT ffn-down", 6304, 3072, 768}};
  Buffers b;
  const size_t most = size_t{6304} * 3072 * 2;
  for (void** p : {&b.x, &b.w, &b.d}) cudaMalloc(p, most);
  cudaMalloc(&b.bias, 3072 * 4);
  cudaMalloc(&b.ws, 32u << 20);
  for (void* p : {b.x, b.w, b.d, b.bias}) cudaMemset(p, 0, p == b.bias ? 3072 * 4 : most);
  if (argc > 1 && std::string(argv[1]) == "resnet") return ResnetOneByOnes(b);
  std::printf("| shape | m x k x n | bias us | bias + GELU(tanh) epilogue us | bias + own erf-GELU pass us |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    LtMatmulShape s;
    s.m = c.m, s.k = c.k, s.n = c.n;
    s.bias = b.bias;
    const double bias_us = BestUs(s, b, false), erf_us = BestUs(s, b, true);
    s.activation = LtMatmulShape::Activation::kGeluTanh;
    const double gelu_us = BestUs(s, b, false);
    std::printf("| %s | %ld x %ld x %ld | %.1f | %.1f | %.1f |\n", c.name, static_cast<long>(c.m),
                static_cast<long>(c.k), static_cast<long>(c.n), bias_us, gelu_us, erf_us);
  }
  return 0;
}
