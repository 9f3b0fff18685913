// Own CUDA kernels: pointwise unary ops and broadcasting binary ops on float32 or float16 storage
// (math in float). Binary operands are read through strides in the output's index space (stride 0
// on broadcast dims), so layouts and broadcasting need no copies. Plain C++ interface for nvcc.
#ifndef ONNXRUN_KERNELS_CUDA_ELEMENTWISE_H_
#define ONNXRUN_KERNELS_CUDA_ELEMENTWISE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

enum class UnaryOp {
  kRelu,
  kSigmoid,
  kTanh,
  kLeakyRelu,
  kElu,
  kSelu,
  kHardSigmoid,
  kHardSwish,
  kSoftplus,
  kGelu,
  kGeluTanh,
  kErf,
  kClip,
  kSqrt,
  kExp,
  kLog,
  kNeg,
  kAbs,
  kReciprocal,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSign,   // -1, 0 or 1; NaN stays NaN
  kSoftsign,
  kMish,             // x * tanh(softplus(x))
  kCelu,             // alpha
  kThresholdedRelu,  // alpha
  kShrink,           // alpha = lambd, beta = bias
  kSwish,            // x * sigmoid(alpha * x)
  kIdentity
};
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMin, kMax, kPRelu };
enum class FloatType { kFloat32, kFloat16, kBFloat16 };

// alpha/beta: LeakyRelu/Elu alpha; Selu alpha, gamma (beta); HardSigmoid alpha, beta; Clip min, max.
cudaError_t Unary(UnaryOp op, FloatType type, const void* in, void* out, int64_t count, float alpha, float beta,
                  cudaStream_t stream);

// out[i] = op(a[i . a_strides], b[i . b_strides]) over `shape.dims`; out is dense row-major.
// Uses shape.dims and shape.src_strides for a, `b_strides` for b (shape.dst_strides is ignored).
cudaError_t Binary(BinaryOp op, FloatType type, const void* a, const void* b, void* out, const CopyShape& shape,
                   const int64_t* b_strides, cudaStream_t stream);

// out[i] = in[i] converted between float32, float16 and bfloat16 (round to nearest even).
cudaError_t ConvertFloat(FloatType from, FloatType to, const void* in, void* out, int64_t count, cudaStream_t stream);

enum class IntegerType { kBool, kUint8, kInt8, kInt32, kInt64 };
// out[i] = in[i], an integer or bool, as a float (an image's uint8 pixels cast on the device). Exact
// for 8-bit sources; wider ones round to float32 first (as ONNX Runtime's Cast does), then to the
// 16-bit type.
cudaError_t IntegerToFloat(IntegerType from, FloatType to, const void* in, void* out, int64_t count,
                           cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_ELEMENTWISE_H_
