// Attributes of the selection ops (ops/tensor_select.cc), parsed once and shared by the inference
// functions and the CPU kernels (kernels/cpu/tensor_select.cc, tensor_unique.cc): TopK's axis,
// direction, order and count; Unique's order and axis; Compress's axis.
#ifndef ONNXRUN_OPS_TENSOR_SELECT_ATTRS_H_
#define ONNXRUN_OPS_TENSOR_SELECT_ATTRS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/tensor.h"

namespace ops {

struct TopKAttrs {
  int64_t axis = -1;  // normalised to [0, rank)
  bool largest = true;
  bool sorted = true;  // the kernel always sorts (ONNX leaves the order open otherwise)
};
// `axis` (default -1, normalised against `rank`), `largest`, `sorted`.
absl::StatusOr<TopKAttrs> ParseTopKAttrs(const ir::Attributes& attrs, int64_t rank);
// k from TopK's `K` input (one int64 element); an error when negative.
absl::StatusOr<int64_t> TopKCount(const ir::Tensor& k);

struct UniqueAttrs {
  bool sorted = true;
  std::optional<int64_t> axis;  // normalised to [0, rank); nullopt: the flattened input
};
absl::StatusOr<UniqueAttrs> ParseUniqueAttrs(const ir::Attributes& attrs, int64_t rank);

// Compress's `axis`, normalised to [0, rank); nullopt when absent (the flattened input).
absl::StatusOr<std::optional<int64_t>> ParseCompressAxis(const ir::Attributes& attrs, int64_t rank);

}  // namespace ops

#endif  // ONNXRUN_OPS_TENSOR_SELECT_ATTRS_H_
