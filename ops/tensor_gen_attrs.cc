// Parsing and size checks of the generator ops' attributes and size inputs (see tensor_gen_attrs.h).
#include "ops/tensor_gen_attrs.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ops {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

bool IsIntegral(ir::DType d) {
  switch (d) {
    case ir::DType::kInt8:
    case ir::DType::kInt16:
    case ir::DType::kInt32:
    case ir::DType::kInt64:
    case ir::DType::kUint8:
    case ir::DType::kUint16:
    case ir::DType::kUint32:
    case ir::DType::kUint64: return true;
    default: return false;
  }
}

// The most elements of `dtype` one tensor may hold.
int64_t MaxElements(ir::DType dtype) {
  const int64_t size = static_cast<int64_t>(ir::DTypeSize(dtype));
  return ir::kMaxTensorBytes / (size > 0 ? size : 1);
}

int64_t IntegerRangeCount(int64_t start, int64_t limit, int64_t delta) {
  const __int128 diff = static_cast<__int128>(limit) - start;
  __int128 q = diff / delta;
  if (diff % delta != 0 && ((diff < 0) == (delta < 0))) ++q;
  if (q <= 0) return 0;
  if (q > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(q);
}

}  // namespace

absl::StatusOr<ir::Tensor> ParseConstantOfShapeValue(const ir::Attributes& attrs) {
  const ir::Tensor* value = attrs.GetTensor("value");
  if (value == nullptr) return ir::Tensor::Scalar(0.0f);
  if (value->num_elements() != 1) {
    return Invalid(absl::StrCat("value must have one element, has ", value->num_elements()));
  }
  if (!ir::IsSupportedDType(value->dtype())) {
    return Invalid(absl::StrCat("value has unsupported dtype ", ir::DTypeName(value->dtype())));
  }
  return *value;
}

absl::StatusOr<int64_t> RangeCount(const ir::Tensor& start, const ir::Tensor& limit, const ir::Tensor& delta) {
  const ir::DType dtype = start.dtype();
  for (const ir::Tensor* t : {&start, &limit, &delta}) {
    if (t->num_elements() != 1) {
      return Invalid(absl::StrCat("start, limit and delta must be scalars, got shape ", ir::ShapeToString(t->shape())));
    }
    if (t->dtype() != dtype) return Invalid("start, limit and delta must have one dtype");
  }
  int64_t count = 0;
  if (dtype == ir::DType::kInt16 || dtype == ir::DType::kInt32 || dtype == ir::DType::kInt64) {
    const int64_t d = delta.GetAsInt64(0);
    if (d == 0) return Invalid("delta is 0");
    count = IntegerRangeCount(start.GetAsInt64(0), limit.GetAsInt64(0), d);
  } else if (ir::IsFloatingPoint(dtype)) {
    const double s = start.GetAsDouble(0), l = limit.GetAsDouble(0), d = delta.GetAsDouble(0);
    if (d == 0) return Invalid("delta is 0");
    if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
      return Invalid(absl::StrCat("start ", s, ", limit ", l, " and delta ", d, " must be finite"));
    }
    const double c = std::ceil((l - s) / d);
    if (!(c < 9.0e18)) {  // also catches an overflow of (l - s) / d to inf
      return Invalid(absl::StrCat("Range from ", s, " to ", l, " by ", d, " has too many elements"));
    }
    count = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    return Invalid(absl::StrCat("unsupported dtype ", ir::DTypeName(dtype)));
  }
  if (count > MaxElements(dtype)) {
    return Invalid(absl::StrCat("Range would produce ", count, " elements, more than a tensor may hold"));
  }
  return count;
}

absl::StatusOr<EyeLikeAttrs> ParseEyeLikeAttrs(const ir::Attributes& attrs, ir::DType input_dtype) {
  EyeLikeAttrs out;
  out.dtype = attrs.Has("dtype") ? static_cast<ir::DType>(attrs.GetInt("dtype", 0)) : input_dtype;
  if (!ir::IsSupportedDType(out.dtype) || out.dtype == ir::DType::kBFloat16) {
    return Invalid(absl::StrCat("unsupported output dtype ", ir::DTypeName(out.dtype)));
  }
  out.k = attrs.GetInt("k", 0);
  return out;
}

absl::StatusOr<int64_t> OneHotDepth(const ir::Tensor& depth) {
  if (depth.num_elements() != 1) {
    return Invalid(absl::StrCat("depth must have one element, has ", depth.num_elements()));
  }
  if (!ir::IsSupportedDType(depth.dtype()) || depth.dtype() == ir::DType::kBool) {
    return Invalid(absl::StrCat("depth has unsupported dtype ", ir::DTypeName(depth.dtype())));
  }
  const double d = depth.GetAsDouble(0);
  if (!(d >= 1) || d > static_cast<double>(ir::kMaxTensorBytes)) {
    return Invalid(absl::StrCat("depth ", d, " out of range"));
  }
  return static_cast<int64_t>(d);
}

absl::StatusOr<WindowFnAttrs> ParseWindowFnAttrs(const ir::Attributes& attrs) {
  WindowFnAttrs out;
  out.dtype = static_cast<ir::DType>(attrs.GetInt("output_datatype", 1));
  if (!ir::IsSupportedDType(out.dtype) || out.dtype == ir::DType::kBool || out.dtype == ir::DType::kBFloat16) {
    return Invalid(absl::StrCat("unsupported output_datatype ", static_cast<int>(out.dtype)));
  }
  out.periodic = attrs.GetInt("periodic", 1) != 0;
  return out;
}

absl::StatusOr<int64_t> WindowLength(const ir::Tensor& size) {
  if (size.num_elements() != 1 || !IsIntegral(size.dtype())) {
    return Invalid("size must be one integer");
  }
  const int64_t n = size.GetAsInt64(0);
  if (n < 0 || n > MaxElements(ir::DType::kFloat64)) return Invalid(absl::StrCat("window size ", n, " out of range"));
  return n;
}

}  // namespace ops
