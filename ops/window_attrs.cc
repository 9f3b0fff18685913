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

absl::StatusOr<std::vector<int64_t>> ReadInts(const ir::Attributes& attrs, const std::string& name,
                                              size_t size, int64_t fill, int64_t min_value) {
  if (!attrs.Has(name)) return std::vector<int64_t>(size, fill);
  std::vector<int64_t> v = attrs.GetInts(name);
  if (v.size() != size) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has ", v.size(), " entries, expected ", size));
  }
  for (int64_t x : v) {
    if (x < min_value || x > kMaxWindowValue) {
      return absl::InvalidArgumentError(absl::StrCat(name, " [", absl::StrJoin(v, ","),
                                                     "] has an entry outside [", min_value, ", ",
                                                     kMaxWindowValue, "]"));
    }
  }
  return v;
}

}  // namespace ops
