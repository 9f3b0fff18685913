// The shared-memory tile kernel of the depthwise convolution (depthwise_conv_shared.cu), used by
// DepthwiseConvNhwc (depthwise_conv.h) for 5x5 and 7x7 filters when asked (DepthwiseConvParams::kernel);
// internal to kernels/cuda.
#ifndef ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_SHARED_H_
#define ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_SHARED_H_

#include <cuda_runtime_api.h>

#include "kernels/cuda/depthwise_conv.h"

namespace kernels::cuda {

// Whether the kernel computes p (already DepthwiseConvSupported): square 5x5 or 7x7 filters, equal
// strides of 1 or 2, no dilation, and one filter's input rows fitting its shared-memory tile.
bool DepthwiseSharedTileShape(const DepthwiseConvParams& p);

// y = activation(depthwise_conv(x, w) + bias) on `stream`, as DepthwiseConvNhwc; requires
// DepthwiseSharedTileShape(p) (else cudaErrorInvalidValue).
cudaError_t DepthwiseConvSharedTile(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias,
                                    void* y, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_SHARED_H_
