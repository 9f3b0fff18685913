// Sliding-window attribute parsing shared by ops/nn.cc and kernels/cpu/nn_util.cc.
#include "ops/window_attrs.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ops {

absl::StatusOr<AutoPad> ParseAutoPad(const ir::Attributes& attrs) {
  const std::string s = attrs.GetString("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return absl::InvalidArgumentError(absl::StrCat("unknown auto_pad \"", s, "\""));
}

absl::StatusOr<std::vector<int64_t>> ReadInts(const ir::Attributes& attrs, const std::string& name, size_t size,
                                              int64_t fill, int64_t min_value) {
  if (!attrs.Has(name)) return std::vector<int64_t>(size, fill);
  std::vector<int64_t> v = attrs.GetInts(name);
  if (v.size() != size) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has ", v.size(), " entries, expected ", size));
  }
  for (int64_t x : v) {
    if (x < min_value || x > kMaxWindowValue) {
      return absl::InvalidArgumentError(absl::StrCat(name, " [", absl::StrJoin(v, ","), "] has an entry outside [",
                                                     min_value, ", ", kMaxWindowValue, "]"));
    }
  }
  return v;
}

absl::StatusOr<Window> ReadWindow(const ir::Attributes& attrs, size_t spatial,
                                  const std::optional<std::vector<int64_t>>& weights_kernel, bool require_kernel) {
  Window w;
  absl::StatusOr<AutoPad> auto_pad = ParseAutoPad(attrs);
  if (!auto_pad.ok()) return auto_pad.status();
  w.auto_pad = *auto_pad;
  if (attrs.Has("kernel_shape")) {
    w.kernel = attrs.GetInts("kernel_shape");
    if (weights_kernel && *weights_kernel != *w.kernel) {
      return absl::InvalidArgumentError(absl::StrCat("kernel_shape [", absl::StrJoin(*w.kernel, ","),
                                                     "] does not match the weight's spatial dims [",
                                                     absl::StrJoin(*weights_kernel, ","), "]"));
    }
  } else if (require_kernel) {
    return absl::InvalidArgumentError("kernel_shape is required");
  } else {
    w.kernel = weights_kernel;
  }
  if (w.kernel) {
    if (w.kernel->size() != spatial) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel_shape has ", w.kernel->size(), " dims, input has ", spatial, " spatial dims"));
    }
    for (int64_t k : *w.kernel) {
      if (k <= 0 || k > kMaxWindowValue) {
        return absl::InvalidArgumentError(absl::StrCat("kernel dim ", k, " out of range"));
      }
    }
  }
  absl::StatusOr<std::vector<int64_t>> strides = ReadInts(attrs, "strides", spatial, 1, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilations = ReadInts(attrs, "dilations", spatial, 1, 1);
  if (!dilations.ok()) return dilations.status();
  absl::StatusOr<std::vector<int64_t>> pads = ReadInts(attrs, "pads", 2 * spatial, 0, 0);
  if (!pads.ok()) return pads.status();
  w.strides = *std::move(strides);
  w.dilations = *std::move(dilations);
  w.pads = *std::move(pads);
  w.ceil_mode = attrs.GetInt("ceil_mode", 0) != 0;
  return w;
}

}  // namespace ops
