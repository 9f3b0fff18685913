// ScaledWeights (scaled_weights.h): one thread per output element, consecutive threads along
// Cout, so the writes coalesce (the reads of w are strided but w is small and stays in L2).
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/scaled_weights.h"

namespace kernels::cuda {
namespace {

template <typename T>
__global__ void ScaledWeightsKernel(const T* __restrict__ w, const T* __restrict__ s, T* __restrict__ out,
                                    int64_t samples, int64_t cin, int64_t cout) {
  const int64_t total = samples * cin * cout;
  for (int64_t i = GlobalThreadIndex(); i < total; i += GlobalThreadCount()) {
    const int64_t co = i % cout, row = i / cout;  // row = n * cin + ci
    const int64_t ci = row % cin;
    out[i] = FromFloat<T>(ToFloat(w[co * cin + ci]) * ToFloat(s[row]));
  }
}

template <typename T>
cudaError_t Launch(const ScaledWeightsParams& p, const void* w, const void* s, void* out, cudaStream_t stream) {
  ScaledWeightsKernel<T><<<GridSize(p.samples * p.cin * p.cout), kBlockSize, 0, stream>>>(
      static_cast<const T*>(w), static_cast<const T*>(s), static_cast<T*>(out), p.samples, p.cin, p.cout);
  return cudaGetLastError();
}

}  // namespace

cudaError_t ScaledWeights(const ScaledWeightsParams& p, const void* w, const void* s, void* out, cudaStream_t stream) {
  if (p.samples <= 0 || p.cin <= 0 || p.cout <= 0) return cudaErrorInvalidValue;
  switch (p.type) {
    case FloatType::kFloat16: return Launch<__half>(p, w, s, out, stream);
    case FloatType::kBFloat16: return Launch<__nv_bfloat16>(p, w, s, out, stream);
    case FloatType::kFloat32: return Launch<float>(p, w, s, out, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::cuda
