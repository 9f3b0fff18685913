// Attributes of the vision ops, parsed once and validated, shared by their inference
// (ops/vision.cc) and CPU kernels (kernels/cpu/vision*.cc): RoiAlign, MaxRoiPool, GridSample,
// AffineGrid and LpPool's p.
#ifndef ONNXRUN_OPS_VISION_ATTRS_H_
#define ONNXRUN_OPS_VISION_ATTRS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

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

// AffineGrid (opset 20): theta [N, r, r + 1] (r = 2 or 3) and the int64 size [N, C, D1..Dr] give
// the grid [N, D1..Dr, r]; point (i1..ir) is theta[n] applied to (x_r, .., x_1, 1), where x_k is
// i_k's position in [-1, 1] along D_k (align_corners: -1 + 2 i / (D - 1), and -1 when D is 1; else
// the pixel centre -1 + (2 i + 1) / D), the last dim first, as ONNX's reference orders them.
struct AffineGridExtents {
  int64_t batch = 0;
  std::vector<int64_t> spatial;  // D1..Dr
  bool align_corners = false;
};
// Checks theta's dims against size's values (N must agree; no size is negative).
absl::StatusOr<AffineGridExtents> AffineGridExtentsOf(const ir::Node& node, const std::vector<int64_t>& theta_dims,
                                                      const ir::Tensor& size);

// LpPool / GlobalLpPool's p (>= 1).
absl::StatusOr<int64_t> ParseLpPoolP(const ir::Node& node);

}  // namespace ops

#endif  // ONNXRUN_OPS_VISION_ATTRS_H_
