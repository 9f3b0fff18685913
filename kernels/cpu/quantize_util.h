// Helpers shared by the quantization kernels (quantize.cc, quantize_gemm.cc): scale and
// zero-point parameters that are per-tensor or per-slice along one dim, and saturating
// round-to-nearest-even conversion to a quantized integer type.
#ifndef ONNXRUN_KERNELS_CPU_QUANTIZE_UTIL_H_
#define ONNXRUN_KERNELS_CPU_QUANTIZE_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor.h"

namespace kernels::cpu::quant {

// A parameter tensor (scale or zero point) read as doubles, with how it maps onto the elements of
// the tensor it applies to: per tensor (one value), per slice along an axis (element i uses
// values[(i / inner) % values.size()]), or blocked (opset 21: the parameter has the data's rank,
// and along the axis one value per `block` consecutive elements).
struct Param {
  std::vector<double> values;
  int64_t inner = 1;
  int64_t block = 0;                          // > 0 when blocked
  int64_t axis_extent = 1, param_extent = 1;  // blocked: the data's and the parameter's axis dims

  double at(int64_t i) const {
    if (values.size() == 1) return values[0];
    if (block == 0) return values[(i / inner) % values.size()];
    const int64_t outer = i / (axis_extent * inner), a = (i / inner) % axis_extent, rest = i % inner;
    return values[(outer * param_extent + a / block) * inner + rest];
  }
};

// `t` as a blocked parameter of a tensor of shape `shape` along `axis` (normalized).
inline absl::StatusOr<Param> ReadBlockedParam(const ir::Tensor& t, const std::vector<int64_t>& shape, int64_t axis,
                                              int64_t block, const char* name) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  bool ok = t.rank() == rank && axis >= 0 && axis < rank;
  for (int64_t j = 0; ok && j < rank; ++j) {
    ok = j == axis ? t.shape()[j] > 0 && (t.shape()[j] - 1) * block < shape[j] && t.shape()[j] * block >= shape[j]
                   : t.shape()[j] == shape[j];
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has shape ", ir::ShapeToString(t.shape()),
                                                   ", not blocks of ", block, " along axis ", axis, " of ",
                                                   ir::ShapeToString(shape)));
  }
  Param p;
  p.block = block;
  p.axis_extent = shape[axis];
  p.param_extent = t.shape()[axis];
  for (int64_t j = axis + 1; j < rank; ++j) p.inner *= shape[j];
  p.values.resize(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) p.values[i] = t.GetAsDouble(i);
  if (p.values.size() == 1) p.block = 0;
  return p;
}

// `t` (nullptr: the single value `absent`) as a parameter of a tensor of shape `shape`, either
// per-tensor (a scalar or one element) or one value per index of `shape[axis]` (axis may be
// negative), or with block > 0, blocked along `axis`. An error for any other shape.
inline absl::StatusOr<Param> ReadParam(const ir::Tensor* t, const std::vector<int64_t>& shape, int64_t axis,
                                       double absent, const char* name, int64_t block = 0) {
  Param p;
  if (t == nullptr) {
    p.values = {absent};
    return p;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (block > 0) {
    if (axis < 0) axis += rank;
    return ReadBlockedParam(*t, shape, axis, block, name);
  }
  if (t->rank() > 1) return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar or 1-D"));
  if (t->num_elements() != 1) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || t->num_elements() != shape[axis]) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has shape ", ir::ShapeToString(t->shape()),
                                                     ", expected one element or one per index of axis ", axis, " of ",
                                                     ir::ShapeToString(shape)));
    }
    for (int64_t j = axis + 1; j < rank; ++j) p.inner *= shape[j];
  }
  if (t->num_elements() == 0) return absl::InvalidArgumentError(absl::StrCat(name, " is empty"));
  p.values.resize(t->num_elements());
  for (int64_t i = 0; i < t->num_elements(); ++i) p.values[i] = t->GetAsDouble(i);
  return p;
}

// round-half-to-even(v) + zero_point, saturated to Q's range; NaN gives the zero point.
template <typename Q, typename F>
Q Saturate(F v, double zero_point) {
  F r = std::nearbyint(v);
  if (std::isnan(r)) r = 0;
  const double q = std::clamp(static_cast<double>(r) + zero_point, static_cast<double>(std::numeric_limits<Q>::min()),
                              static_cast<double>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(q);
}

}  // namespace kernels::cpu::quant

#endif  // ONNXRUN_KERNELS_CPU_QUANTIZE_UTIL_H_
