// The float32 2-D MaxPool of the CPU (no Indices output): planes on ParallelFor's threads, each
// output the maximum over its window's in-bounds taps with nn_pool.cc's rules (a NaN first tap
// gives NaN, later NaNs are skipped, an empty window gives the lowest float).
#ifndef ONNXRUN_KERNELS_CPU_MAX_POOL_2D_H_
#define ONNXRUN_KERNELS_CPU_MAX_POOL_2D_H_

#include <cstdint>

#include "kernels/cpu/nn_util.h"

namespace kernels::cpu::nn {

// x [planes, image h, image w] -> y [planes, grid h, grid w] (geo's image and grid).
void MaxPool2dFloat(const float* x, int64_t planes, const WindowGeometry& geo, float* y);

}  // namespace kernels::cpu::nn

#endif  // ONNXRUN_KERNELS_CPU_MAX_POOL_2D_H_
