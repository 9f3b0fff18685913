// CPU kernels of the sequence and optional ops (ops/sequence.h). Sequences are immutable values
// (ir::Tensor::Sequence): an op that changes one builds a new element list sharing the tensors.
#include "ops/sequence.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/subgraph.h"
#include "ops/control_flow.h"
#include "ops/infer_util.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

absl::StatusOr<const ir::Tensor*> SequenceInput(const KernelContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr || !t->is_sequence() || t->is_map_sequence()) {
    return Invalid(
        absl::StrCat("input ", i, " must be a sequence of tensors, not ", t == nullptr ? "absent" : t->Describe()));
  }
  return t;
}

absl::StatusOr<const ir::Tensor*> DenseInput(const KernelContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr || !t->is_dense()) {
    return Invalid(absl::StrCat("input ", i, " must be a tensor, not ", t == nullptr ? "absent" : t->Describe()));
  }
  return t;
}

// The sequence `elements` as output `o`, after the length and dtype checks.
absl::Status SetSequence(KernelContext& ctx, size_t o, ir::DType dtype, std::vector<ir::Tensor> elements) {
  if (static_cast<int64_t>(elements.size()) > ops::kMaxSequenceLength) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a sequence of ", elements.size(), " elements is past the limit of ", ops::kMaxSequenceLength));
  }
  for (const ir::Tensor& e : elements) {
    if (!e.is_dense() || e.dtype() != dtype) {
      return Invalid(absl::StrCat("a sequence of ", ir::DTypeName(dtype), " cannot hold ", e.Describe()));
    }
  }
  if (ctx.output(o) != nullptr) *ctx.output(o) = ir::Tensor::Sequence(dtype, std::move(elements));
  return absl::OkStatus();
}

absl::Status SequenceEmpty(KernelContext& ctx) {
  const auto dtype = static_cast<ir::DType>(ctx.node.attrs.GetInt("dtype", static_cast<int64_t>(ir::DType::kFloat32)));
  return SetSequence(ctx, 0, dtype, {});
}

absl::Status SequenceConstruct(KernelContext& ctx) {
  std::vector<ir::Tensor> elements;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    absl::StatusOr<const ir::Tensor*> t = DenseInput(ctx, i);
    if (!t.ok()) return t.status();
    elements.push_back(**t);
  }
  return SetSequence(ctx, 0, ctx.input(0)->dtype(), std::move(elements));
}

absl::Status SequenceInsert(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> seq = SequenceInput(ctx, 0);
  if (!seq.ok()) return seq.status();
  absl::StatusOr<const ir::Tensor*> item = DenseInput(ctx, 1);
  if (!item.ok()) return item.status();
  std::vector<ir::Tensor> elements = (*seq)->elements();
  const auto length = static_cast<int64_t>(elements.size());
  absl::StatusOr<int64_t> at = ops::SequencePosition(ctx.input(2), length, length, /*inclusive_end=*/true);
  if (!at.ok()) return at.status();
  elements.insert(elements.begin() + *at, **item);
  return SetSequence(ctx, 0, (*seq)->dtype(), std::move(elements));
}

absl::Status SequenceAt(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> seq = SequenceInput(ctx, 0);
  if (!seq.ok()) return seq.status();
  const auto length = static_cast<int64_t>((*seq)->elements().size());
  if (ctx.input(1) == nullptr) return Invalid("'position' is required");
  absl::StatusOr<int64_t> at = ops::SequencePosition(ctx.input(1), length, 0, /*inclusive_end=*/false);
  if (!at.ok()) return at.status();
  *ctx.output(0) = (*seq)->elements()[*at];
  return absl::OkStatus();
}

absl::Status SequenceErase(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> seq = SequenceInput(ctx, 0);
  if (!seq.ok()) return seq.status();
  std::vector<ir::Tensor> elements = (*seq)->elements();
  const auto length = static_cast<int64_t>(elements.size());
  if (length == 0) return Invalid("cannot erase from an empty sequence");
  absl::StatusOr<int64_t> at = ops::SequencePosition(ctx.input(1), length, length - 1, /*inclusive_end=*/false);
  if (!at.ok()) return at.status();
  elements.erase(elements.begin() + *at);
  return SetSequence(ctx, 0, (*seq)->dtype(), std::move(elements));
}

absl::Status SequenceLength(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> seq = SequenceInput(ctx, 0);
  if (!seq.ok()) return seq.status();
  *ctx.output(0) = *ir::Tensor::FromInt64s({static_cast<int64_t>((*seq)->elements().size())}).Reshaped({});
  return absl::OkStatus();
}

// Concat of the elements along `axis` (the Concat kernel, so its checks), or with new_axis=1
// stacked along a new axis.
absl::Status ConcatFromSequence(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> seq = SequenceInput(ctx, 0);
  if (!seq.ok()) return seq.status();
  const std::vector<ir::Tensor>& elements = (*seq)->elements();
  if (elements.empty()) return Invalid("cannot concatenate an empty sequence");
  absl::StatusOr<bool> new_axis = ops::ParseFlagAttribute(ctx.node, "new_axis", false);
  if (!new_axis.ok()) return new_axis.status();
  const int64_t rank = elements[0].rank() + (*new_axis ? 1 : 0);
  absl::StatusOr<int64_t> axis = ops::NormalizeAxis(ctx.node.attrs.GetInt("axis", 0), rank);
  if (!axis.ok()) return axis.status();
  if (*new_axis) {
    absl::StatusOr<ir::Tensor> stacked = Stack(elements, *axis, false, (*seq)->dtype(), elements[0].shape());
    if (!stacked.ok()) return stacked.status();
    *ctx.output(0) = *std::move(stacked);
    return absl::OkStatus();
  }
  ir::Node concat{ctx.node.name, "Concat", ctx.node.opset, {}, {0}, {}};
  concat.attrs.Set("axis", *axis);
  std::vector<const ir::Tensor*> inputs;
  for (size_t i = 0; i < elements.size(); ++i) {
    concat.inputs.push_back(static_cast<ir::ValueId>(i));
    inputs.push_back(&elements[i]);
  }
  absl::StatusOr<std::vector<ir::Tensor>> out = RunNode(concat, inputs);
  if (!out.ok()) return out.status();
  *ctx.output(0) = (*out)[0];
  return absl::OkStatus();
}

// Elements [start, start + length) of `t` along `axis`.
absl::StatusOr<ir::Tensor> SliceAlong(const ir::Tensor& t, int64_t axis, int64_t start, int64_t length) {
  std::vector<int64_t> dims = t.shape();
  const int64_t extent = dims[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (d < axis) outer *= dims[d];
    if (d > axis) inner *= dims[d];
  }
  dims[axis] = length;
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(t.dtype(), dims);
  if (!out.ok()) return out.status();
  const size_t elem = ir::DTypeSize(t.dtype());
  const size_t block = static_cast<size_t>(length * inner) * elem;
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; o < outer && block > 0; ++o) {
    std::memcpy(dst + o * block, src + static_cast<size_t>((o * extent + start) * inner) * elem, block);
  }
  return out;
}

// SplitToSequence's piece lengths along an axis of `extent`: the `split` input (a scalar chunk
// size, or one length per piece), or pieces of 1 when absent.
absl::StatusOr<std::vector<int64_t>> SplitLengths(const ir::Tensor* split, int64_t extent) {
  std::vector<int64_t> lengths;
  if (split == nullptr || (split->rank() == 0 && split->GetAsInt64(0) > 0)) {
    const int64_t chunk = split == nullptr ? 1 : split->GetAsInt64(0);
    for (int64_t at = 0; at < extent; at += chunk) lengths.push_back(std::min(chunk, extent - at));
    return lengths;
  }
  if (split->rank() != 1) return Invalid("'split' must be a positive scalar or a 1-D tensor");
  int64_t total = 0;
  for (int64_t v : split->ToInt64Vector()) {
    if (v < 0) return Invalid(absl::StrCat("'split' holds a negative length ", v));
    total += v;
    lengths.push_back(v);
  }
  if (total != extent) return Invalid(absl::StrCat("'split' sums to ", total, ", the axis has ", extent));
  return lengths;
}

absl::Status SplitToSequence(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> input = DenseInput(ctx, 0);
  if (!input.ok()) return input.status();
  const ir::Tensor& t = **input;
  absl::StatusOr<int64_t> axis = ops::NormalizeAxis(ctx.node.attrs.GetInt("axis", 0), t.rank());
  if (!axis.ok()) return axis.status();
  absl::StatusOr<bool> keepdims = ops::ParseFlagAttribute(ctx.node, "keepdims", true);
  if (!keepdims.ok()) return keepdims.status();
  absl::StatusOr<std::vector<int64_t>> lengths = SplitLengths(ctx.input(1), t.shape()[*axis]);
  if (!lengths.ok()) return lengths.status();
  std::vector<ir::Tensor> pieces;
  int64_t start = 0;
  for (int64_t length : *lengths) {
    absl::StatusOr<ir::Tensor> piece = SliceAlong(t, *axis, start, length);
    if (!piece.ok()) return piece.status();
    start += length;
    if (ctx.input(1) == nullptr && !*keepdims) {
      std::vector<int64_t> dims = piece->shape();
      dims.erase(dims.begin() + *axis);
      piece = piece->Reshaped(dims);
    }
    pieces.push_back(*std::move(piece));
  }
  return SetSequence(ctx, 0, t.dtype(), std::move(pieces));
}

}  // namespace

std::vector<KernelDef> SequenceKernels() {
  return {
      {"SequenceEmpty", SequenceEmpty},           {"SequenceConstruct", SequenceConstruct},
      {"SequenceInsert", SequenceInsert},         {"SequenceAt", SequenceAt},
      {"SequenceErase", SequenceErase},           {"SequenceLength", SequenceLength},
      {"ConcatFromSequence", ConcatFromSequence}, {"SplitToSequence", SplitToSequence},
  };
}

}  // namespace kernels::cpu
