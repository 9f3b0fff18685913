// Attributes of the index-driven gather/scatter ops (ops/tensor_scatter.cc), parsed once and shared
// by the inference functions and the CPU kernels (kernels/cpu/tensor_scatter.cc): the scatter
// reduction, GatherND's batch_dims, ReverseSequence's axes and SpaceToDepth's blocksize.
#ifndef ONNXRUN_OPS_TENSOR_SCATTER_ATTRS_H_
#define ONNXRUN_OPS_TENSOR_SCATTER_ATTRS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/attribute.h"

namespace ops {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
// ScatterElements / ScatterND `reduction`: none (default), add, mul, max, min.
absl::StatusOr<ScatterReduction> ParseScatterReduction(const ir::Attributes& attrs);

// GatherND's `batch_dims`: an error unless 0 <= batch_dims < min(data rank, indices rank).
absl::StatusOr<int64_t> ParseGatherNDBatchDims(const ir::Attributes& attrs, int64_t data_rank, int64_t indices_rank);

struct ReverseSequenceAttrs {
  int64_t time_axis = 0, batch_axis = 1;  // one is 0, the other 1
};
absl::StatusOr<ReverseSequenceAttrs> ParseReverseSequenceAttrs(const ir::Attributes& attrs);

// SpaceToDepth's `blocksize`: an error unless in [1, 2^20].
absl::StatusOr<int64_t> ParseSpaceToDepthBlocksize(const ir::Attributes& attrs);

}  // namespace ops

#endif  // ONNXRUN_OPS_TENSOR_SCATTER_ATTRS_H_
