// Attributes of the vision ops, parsed once and validated, shared by their inference
// (ops/vision.cc) and CPU kernels (kernels/cpu/vision*.cc): RoiAlign, MaxRoiPool, GridSample and
// LpPool's p.
#ifndef ONNXRUN_OPS_VISION_ATTRS_H_
#define ONNXRUN_OPS_VISION_ATTRS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace ops {

struct RoiAlignAttrs {
  bool max = false;        // mode "max" (else "avg")
  bool half_pixel = true;  // coordinate_transformation_mode "half_pixel" (else "output_half_pixel")
  int64_t output_height = 1, output_width = 1;
  int64_t sampling_ratio = 0;  // 0: ceil(roi extent / output extent) samples per bin
  float spatial_scale = 1.0f;
};
absl::StatusOr<RoiAlignAttrs> ParseRoiAlignAttrs(const ir::Node& node);

struct MaxRoiPoolAttrs {
  int64_t pooled_height = 0, pooled_width = 0;
  float spatial_scale = 1.0f;
};
absl::StatusOr<MaxRoiPoolAttrs> ParseMaxRoiPoolAttrs(const ir::Node& node);

enum class GridSampleMode { kLinear, kNearest, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

// Canonical mode names (opset 20): "linear", "nearest", "cubic"; the importer renames opset 16's
// "bilinear" and "bicubic".
struct GridSampleAttrs {
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};
absl::StatusOr<GridSampleAttrs> ParseGridSampleAttrs(const ir::Node& node);

// LpPool / GlobalLpPool's p (>= 1).
absl::StatusOr<int64_t> ParseLpPoolP(const ir::Node& node);

}  // namespace ops

#endif  // ONNXRUN_OPS_VISION_ATTRS_H_
