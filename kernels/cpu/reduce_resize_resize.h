// The CPU Resize kernel (canonical inputs X, roi?, scales?, sizes?; opset-13 attributes), part of
// the reduce_resize kernel family (kernels/cpu/reduce_resize.cc registers it).
#ifndef ONNXRUN_KERNELS_CPU_REDUCE_RESIZE_RESIZE_H_
#define ONNXRUN_KERNELS_CPU_REDUCE_RESIZE_RESIZE_H_

#include "absl/status/status.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {

// Modes nearest (every nearest_mode; any supported dtype), linear and cubic (floating point, N-d,
// separable); every coordinate_transformation_mode including tf_crop_and_resize.
absl::Status ResizeKernel(KernelContext& ctx);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_REDUCE_RESIZE_RESIZE_H_
