// Sequence and optional ops (ONNX's seq(tensor) and optional(...) values): SequenceEmpty,
// SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
// ConcatFromSequence, SplitToSequence, SequenceMap, Optional, OptionalHasElement,
// OptionalGetElement. Their attributes, position handling and type inference; the values
// themselves ride in ir::Tensor (ir/tensor.h).
#ifndef ONNXRUN_OPS_SEQUENCE_H_
#define ONNXRUN_OPS_SEQUENCE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace ops {

// Elements one sequence may hold. Sequences are immutable, so a loop that appends one element per
// iteration copies the element list each time: the cap keeps that quadratic work under a second
// (a model that inserts in a loop without end fails instead of running for hours).
inline constexpr int64_t kMaxSequenceLength = int64_t{1} << 12;

// The `position` input of SequenceAt/Insert/Erase (a scalar int32/int64; nullptr when absent,
// giving `default_position`), normalised against `length`: valid positions are [-length, length)
// or, when `inclusive_end` (Insert), [-length, length].
absl::StatusOr<int64_t> SequencePosition(const ir::Tensor* position, int64_t length, int64_t default_position,
                                         bool inclusive_end);

// Optional's `type` attribute (a TypeProto) as the importer stores it: {kind, elem dtype} where
// kind is 0 for a tensor and 1 for a sequence.
absl::StatusOr<ir::TensorType> OptionalTypeAttribute(const ir::Node& node);

}  // namespace ops

#endif  // ONNXRUN_OPS_SEQUENCE_H_
