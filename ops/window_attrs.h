// Sliding-window attribute parsing shared by the nn-family inference (ops/nn.cc) and the CPU
// kernels (kernels/cpu/nn_util.cc): the auto_pad enum and parser, the bound on window values and
// the validated reader of int-list window attributes (strides, dilations, pads, ...).
#ifndef ONNXRUN_OPS_WINDOW_ATTRS_H_
#define ONNXRUN_OPS_WINDOW_ATTRS_H_

#include <cstdint>
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
absl::StatusOr<std::vector<int64_t>> ReadInts(const ir::Attributes& attrs, const std::string& name,
                                              size_t size, int64_t fill, int64_t min_value);

}  // namespace ops

#endif  // ONNXRUN_OPS_WINDOW_ATTRS_H_
