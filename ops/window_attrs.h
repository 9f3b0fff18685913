// Sliding-window attribute parsing shared by the nn-family inference (ops/nn.cc) and the CPU
// kernels (kernels/cpu/nn_util.cc): the auto_pad enum and parser, the bound on window values, the
// validated reader of int-list window attributes, and the whole window of a conv or pool.
#ifndef ONNXRUN_OPS_WINDOW_ATTRS_H_
#define ONNXRUN_OPS_WINDOW_ATTRS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attribute.h"

namespace ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Bound on kernel dims, strides, dilations and pads, so window arithmetic cannot overflow.
inline constexpr int64_t kMaxWindowValue = int64_t{1} << 24;

// The auto_pad attribute (NOTSET when absent or empty); an error for an unknown value.
absl::StatusOr<AutoPad> ParseAutoPad(const ir::Attributes& attrs);

// Reads an int list attribute of `size` entries, each in [min_value, kMaxWindowValue]; `size`
// copies of `fill` when absent.
absl::StatusOr<std::vector<int64_t>> ReadInts(const ir::Attributes& attrs, const std::string& name, size_t size,
                                              int64_t fill, int64_t min_value);

// The window attributes of a conv or pool, validated.
struct Window {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::optional<std::vector<int64_t>> kernel;     // nullopt when not known yet
  std::vector<int64_t> strides, dilations, pads;  // pads: begins, then ends
  bool ceil_mode = false;
};

// Reads auto_pad, kernel_shape, strides, dilations, pads and ceil_mode for `spatial` dims.
// weights_kernel: for Conv/ConvTranspose, the kernel W implies (when known); kernel_shape must
// match it. Pools pass require_kernel: kernel_shape must be present.
absl::StatusOr<Window> ReadWindow(const ir::Attributes& attrs, size_t spatial,
                                  const std::optional<std::vector<int64_t>>& weights_kernel, bool require_kernel);

}  // namespace ops

#endif  // ONNXRUN_OPS_WINDOW_ATTRS_H_
