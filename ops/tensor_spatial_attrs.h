// Attributes and geometry of the spatial rearrangement ops (ops/tensor_spatial.cc), parsed once and
// shared by the inference functions and the CPU kernels (kernels/cpu/tensor_spatial.cc): MaxUnpool's
// window and default output size, Col2Im's block grid, CenterCropPad's axes.
#ifndef ONNXRUN_OPS_TENSOR_SPATIAL_ATTRS_H_
#define ONNXRUN_OPS_TENSOR_SPATIAL_ATTRS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ops/window_attrs.h"

namespace ops {

// MaxUnpool's `kernel_shape` (required), `strides`, `pads` for `spatial` dims.
absl::StatusOr<Window> ParseMaxUnpoolWindow(const ir::Attributes& attrs, size_t spatial);
// The default output size of spatial dim i for an input of size `in`:
// (in - 1) * stride + kernel - pad_begin - pad_end; an error when negative.
absl::StatusOr<int64_t> MaxUnpoolDim(const Window& window, size_t i, int64_t in);

// Col2Im: image dims, block dims, strides, dilations, pads (begins, then ends), and the grid of
// block positions per spatial dim (their product is the input's last dim L).
struct Col2ImGeometry {
  std::vector<int64_t> image, block, strides, dilations, pads, grid;
  int64_t block_size = 1;  // prod(block)
  int64_t positions = 1;   // prod(grid)
};
// From the values of the image_shape and block_shape inputs and the attributes; an error on
// mismatched lengths, non-positive blocks, or blocks that do not fit the padded image.
absl::StatusOr<Col2ImGeometry> ParseCol2ImGeometry(const ir::Attributes& attrs, const std::vector<int64_t>& image,
                                                   const std::vector<int64_t>& block);

// CenterCropPad's `axes` normalised against `rank` (default: all); an error unless there are
// `count` of them (the length of the shape input), distinct.
absl::StatusOr<std::vector<int64_t>> ParseCenterCropPadAxes(const ir::Attributes& attrs, int64_t rank, int64_t count);

}  // namespace ops

#endif  // ONNXRUN_OPS_TENSOR_SPATIAL_ATTRS_H_
