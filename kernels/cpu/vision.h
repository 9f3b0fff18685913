// Entry points of the vision-family CPU kernels (one .cc per group; the table is in vision.cc).
#ifndef ONNXRUN_KERNELS_CPU_VISION_H_
#define ONNXRUN_KERNELS_CPU_VISION_H_

#include "absl/status/status.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu::vision {

absl::Status NonMaxSuppression(KernelContext& ctx);  // vision.cc
absl::Status RoiAlign(KernelContext& ctx);           // vision_roi.cc
absl::Status MaxRoiPool(KernelContext& ctx);         // vision_roi.cc
absl::Status GridSample(KernelContext& ctx);         // vision_grid_sample.cc
absl::Status AffineGrid(KernelContext& ctx);         // vision_affine_grid.cc

}  // namespace kernels::cpu::vision

#endif  // ONNXRUN_KERNELS_CPU_VISION_H_
