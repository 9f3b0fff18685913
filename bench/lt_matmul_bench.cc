// lt_matmul_bench: times cuBLASLt on transformer matmul shapes (BERT-base and ViT-B/16 rows at batch
// 32) in fp16 with the bias epilogue alone, with cuBLASLt's GELU epilogue (tanh form), and bias +
// the own erf-GELU pass (kernels/cuda/matmul_epilogue): what fast GELU saves. (The weight stored
// transposed, PyTorch's Linear layout, measured the same on the H200: not offered.) Each cell is the
// fastest of cuBLASLt's heuristic algorithms, the CUDA-event mean of 30 back-to-back runs. Usage: lt_matmul_bench.
// Exits 0 without a GPU.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
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

}  // namespace

int main() {
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
  cudaMalloc(&b.bias, 3072 * 2);
  cudaMalloc(&b.ws, 32u << 20);
  for (void* p : {b.x, b.w, b.d, b.bias}) cudaMemset(p, 0, p == b.bias ? 3072 * 2 : most);
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
