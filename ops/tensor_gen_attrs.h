// Attributes and value-derived sizes of the generator ops (ops/tensor_gen.cc), parsed once and shared
// by the inference functions and the CPU kernels (kernels/cpu/tensor_gen.cc): ConstantOfShape's fill
// value, Range's element count, EyeLike's dtype and diagonal, OneHot's depth and the window
// functions' dtype and periodicity.
#ifndef ONNXRUN_OPS_TENSOR_GEN_ATTRS_H_
#define ONNXRUN_OPS_TENSOR_GEN_ATTRS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace ops {

// ConstantOfShape's `value`: a one-element tensor (float32 0 when absent); an error for another
// element count or an unsupported dtype.
absl::StatusOr<ir::Tensor> ParseConstantOfShapeValue(const ir::Attributes& attrs);

// Range's element count max(ceil((limit - start) / delta), 0), computed exactly for integer
// dtypes. Errors: the three are not one-element tensors of one numeric dtype, delta is 0, a bound
// is not finite, or the output would be larger than a tensor may be (ir::kMaxTensorBytes).
absl::StatusOr<int64_t> RangeCount(const ir::Tensor& start, const ir::Tensor& limit, const ir::Tensor& delta);

struct EyeLikeAttrs {
  ir::DType dtype = ir::DType::kUndefined;  // output dtype
  int64_t k = 0;                            // diagonal offset (> 0: above the main diagonal)
};
// `dtype` (default: the input's dtype) and `k`; an error for an unsupported dtype.
absl::StatusOr<EyeLikeAttrs> ParseEyeLikeAttrs(const ir::Attributes& attrs, ir::DType input_dtype);

// OneHot's depth from its one-element `depth` input (any numeric dtype): an error unless it is a
// finite value >= 1 that fits a tensor dim (fractions truncate, as ONNX Runtime does).
absl::StatusOr<int64_t> OneHotDepth(const ir::Tensor& depth);

struct WindowFnAttrs {
  ir::DType dtype = ir::DType::kFloat32;  // `output_datatype`
  bool periodic = true;
};
// HannWindow / HammingWindow / BlackmanWindow attributes; an error for a non-numeric output dtype.
absl::StatusOr<WindowFnAttrs> ParseWindowFnAttrs(const ir::Attributes& attrs);
// The window length from the one-element integer `size` input; an error when negative or huge.
absl::StatusOr<int64_t> WindowLength(const ir::Tensor& size);

}  // namespace ops

#endif  // ONNXRUN_OPS_TENSOR_GEN_ATTRS_H_
