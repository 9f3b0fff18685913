// Own CUDA kernel: ONNX Mod with numpy broadcasting of both operands. Floats (float32, float16
// computed in float) take C fmod, the dividend's sign; integers take C's remainder (fmod) or the
// divisor's sign (no fmod, as Python). Operands are read through strides in the output's index
// space (kernels/cuda/broadcast.h). Plain C++ interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_MOD_H_
#define ONNXRUN_KERNELS_CUDA_MOD_H_

#include <cuda_runtime_api.h>

#include "kernels/cuda/broadcast.h"

namespace kernels::cuda {

// out[i] = a[i . a_strides] mod b[i . b_strides]; out is dense and of the operands' type. An
// integer divisor of 0 gives 0 (the host reference reports an error: callers keep such divisors
// off the device), x mod -1 gives 0. Floats ignore `fmod` (always C fmod). cudaErrorInvalidValue
// for a bad shape or for kBool.
cudaError_t Mod(ElementType type, bool fmod, const void* a, const void* b, void* out, const BroadcastShape& shape,
                cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_MOD_H_
