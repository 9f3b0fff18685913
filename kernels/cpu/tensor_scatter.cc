// CPU kernels of the index-driven data movement ops and their kernel table: GatherElements,
// ScatterElements, GatherND, ScatterND (reductions none/add/mul/max/min), SpaceToDepth and
// ReverseSequence. Every index is checked against its dim (negative indices count from the end).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "ops/tensor_scatter_attrs.h"

namespace kernels::cpu {
namespace {

using ops::ScatterReduction;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// Index i of an axis of size dim, negative counting from the end; an error when out of range.
absl::StatusOr<int64_t> ResolveIndex(int64_t i, int64_t dim) {
  if (i < -dim || i >= dim) return Invalid(absl::StrCat("index ", i, " out of range for a dim of size ", dim));
  return i < 0 ? i + dim : i;
}

// Integer inputs as int64 (int32 or int64); an error otherwise.
absl::StatusOr<std::vector<int64_t>> IndexValues(const ir::Tensor& t) {
  if (t.dtype() != ir::DType::kInt64 && t.dtype() != ir::DType::kInt32) {
    return Invalid(absl::StrCat("indices must be int32 or int64, got ", ir::DTypeName(t.dtype())));
  }
  return t.ToInt64Vector();
}

// `into` combined with `update` by the reduction. Integers wrap (no signed overflow); fp16
// computes in float; bool results stay 0/1.
template <typename T>
T Reduce(T into, T update, ScatterReduction r) {
  if constexpr (ir::kIsHalfLike<T>) {
    return T(Reduce(static_cast<float>(into), static_cast<float>(update), r));
  } else {
    switch (r) {
      case ScatterReduction::kNone: return update;
      case ScatterReduction::kMax: return std::max(into, update);
      case ScatterReduction::kMin: return std::min(into, update);
      case ScatterReduction::kAdd:
        if constexpr (std::is_integral_v<T>) {
          return static_cast<T>(static_cast<uint64_t>(into) + static_cast<uint64_t>(update));
        } else {
          return into + update;
        }
      case ScatterReduction::kMul:
        if constexpr (std::is_integral_v<T>) {
          return static_cast<T>(static_cast<uint64_t>(into) * static_cast<uint64_t>(update));
        } else {
          return into * update;
        }
    }
    return update;
  }
}

// Bool tensors (stored as uint8) keep 0/1 after add/mul.
void NormalizeBool(ir::Tensor& t) {
  if (t.dtype() != ir::DType::kBool) return;
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] != 0;
}

// ---- GatherElements / ScatterElements ----

// For each element of indices (shape `ishape`), the data offset it addresses along `axis`.
absl::StatusOr<std::vector<int64_t>> ElementOffsets(const std::vector<int64_t>& dshape,
                                                    const std::vector<int64_t>& ishape, const std::vector<int64_t>& idx,
                                                    int64_t axis) {
  const int64_t rank = static_cast<int64_t>(dshape.size());
  if (static_cast<int64_t>(ishape.size()) != rank) {
    return Invalid(absl::StrCat("indices have rank ", ishape.size(), ", data has ", rank));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && ishape[d] > dshape[d]) {
      return Invalid(absl::StrCat("indices dim ", d, " (", ishape[d], ") exceeds data dim ", dshape[d]));
    }
  }
  const std::vector<int64_t> strides = ContiguousStrides(dshape);
  std::vector<int64_t> coord(rank, 0), offsets(idx.size());
  int64_t base = 0;  // offset of coord without the axis component
  for (size_t n = 0; n < idx.size(); ++n) {
    absl::StatusOr<int64_t> i = ResolveIndex(idx[n], dshape[axis]);
    if (!i.ok()) return i.status();
    offsets[n] = base + *i * strides[axis];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != axis) base += strides[d];
      if (++coord[d] < ishape[d]) break;
      if (d != axis) base -= strides[d] * ishape[d];
      coord[d] = 0;
    }
  }
  return offsets;
}

absl::StatusOr<std::vector<int64_t>> ElementsSetup(const KernelContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &data = *ctx.input(0), &indices = *ctx.input(1);
  const int64_t rank = data.rank();
  int64_t axis = ctx.attrs().GetInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return Invalid(absl::StrCat("axis ", axis, " out of range"));
  if (axis < 0) axis += rank;
  absl::StatusOr<std::vector<int64_t>> idx = IndexValues(indices);
  if (!idx.ok()) return idx.status();
  return ElementOffsets(data.shape(), indices.shape(), *idx, axis);
}

absl::Status GatherElementsKernel(KernelContext& ctx) {
  absl::StatusOr<std::vector<int64_t>> offsets = ElementsSetup(ctx);
  if (!offsets.ok()) return offsets.status();
  const ir::Tensor& data = *ctx.input(0);
  if (absl::Status s = CheckOutput(ctx, 0, data.dtype(), ctx.input(1)->shape()); !s.ok()) return s;
  const size_t es = ir::DTypeSize(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw_data());
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  for (size_t n = 0; n < offsets->size(); ++n) std::memcpy(dst + n * es, src + (*offsets)[n] * es, es);
  return absl::OkStatus();
}

// Copies data to output 0 and applies updates at `offsets[n]` to `inner` elements each.
absl::Status ScatterInto(KernelContext& ctx, const std::vector<int64_t>& offsets, int64_t inner) {
  const ir::Tensor &data = *ctx.input(0), &updates = *ctx.input(2);
  absl::StatusOr<ScatterReduction> r = ops::ParseScatterReduction(ctx.attrs());
  if (!r.ok()) return r.status();
  if (updates.dtype() != data.dtype()) return Invalid("updates and data dtypes differ");
  if (updates.num_elements() != static_cast<int64_t>(offsets.size()) * inner) {
    return Invalid(absl::StrCat("updates ", ir::ShapeToString(updates.shape()), " do not match the indices"));
  }
  if (absl::Status s = CheckOutput(ctx, 0, data.dtype(), data.shape()); !s.ok()) return s;
  ir::Tensor& out = *ctx.output(0);
  if (data.byte_size() > 0) std::memcpy(out.raw_data(), data.raw_data(), data.byte_size());
  absl::Status status = DispatchNumeric(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* u = updates.data<T>();
    for (size_t n = 0; n < offsets.size(); ++n) {
      for (int64_t i = 0; i < inner; ++i) o[offsets[n] + i] = Reduce(o[offsets[n] + i], u[n * inner + i], *r);
    }
    return absl::OkStatus();
  });
  NormalizeBool(out);
  return status;
}

absl::Status ScatterElementsKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 2); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> offsets = ElementsSetup(ctx);
  if (!offsets.ok()) return offsets.status();
  if (ctx.input(2)->shape() != ctx.input(1)->shape()) return Invalid("updates and indices shapes differ");
  return ScatterInto(ctx, *offsets, 1);
}

// ---- GatherND / ScatterND ----

// The data offsets of the index tuples (the last dim of indices, length m) after `batch` batch
// dims shared by data and indices; each offset starts a slice of prod(data dims past b + m).
absl::StatusOr<std::vector<int64_t>> TupleOffsets(const ir::Tensor& data, const ir::Tensor& indices, int64_t batch) {
  const std::vector<int64_t>&dshape = data.shape(), &ishape = indices.shape();
  if (indices.rank() < 1) return Invalid("indices must have rank >= 1");
  if (indices.dtype() != ir::DType::kInt64) return Invalid("indices must be int64");
  const int64_t m = ishape.back();
  if (batch + m > data.rank()) {
    return Invalid(
        absl::StrCat("index tuples of length ", m, " after ", batch, " batch dims exceed data rank ", data.rank()));
  }
  for (int64_t d = 0; d < batch; ++d) {
    if (dshape[d] != ishape[d]) return Invalid(absl::StrCat("batch dim ", d, " of data and indices differ"));
  }
  const std::vector<int64_t> strides = ContiguousStrides(dshape);
  const int64_t batches = Product(dshape, 0, batch);
  const int64_t batch_stride = Product(dshape, batch, dshape.size());
  const int64_t tuples = indices.num_elements() / std::max<int64_t>(m, 1);
  if (m == 0) {
    const int64_t count = Product(ishape, 0, ishape.size() - 1);
    std::vector<int64_t> offsets(count);
    const int64_t per_batch = count / std::max<int64_t>(batches, 1);
    for (int64_t n = 0; n < count; ++n) offsets[n] = per_batch > 0 ? n / per_batch * batch_stride : 0;
    return offsets;
  }
  const int64_t per_batch = batches > 0 ? tuples / batches : 0;
  const int64_t* idx = indices.data<int64_t>();
  std::vector<int64_t> offsets(tuples);
  for (int64_t n = 0; n < tuples; ++n) {
    int64_t offset = (per_batch > 0 ? n / per_batch : 0) * batch_stride;
    for (int64_t j = 0; j < m; ++j) {
      absl::StatusOr<int64_t> i = ResolveIndex(idx[n * m + j], dshape[batch + j]);
      if (!i.ok()) return i.status();
      offset += *i * strides[batch + j];
    }
    offsets[n] = offset;
  }
  return offsets;
}

absl::Status GatherNDKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &data = *ctx.input(0), &indices = *ctx.input(1);
  absl::StatusOr<int64_t> b = ops::ParseGatherNDBatchDims(ctx.attrs(), data.rank(), indices.rank());
  if (!b.ok()) return b.status();
  absl::StatusOr<std::vector<int64_t>> offsets = TupleOffsets(data, indices, *b);
  if (!offsets.ok()) return offsets.status();
  const int64_t m = indices.shape().back();
  std::vector<int64_t> shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + *b + m, data.shape().end());
  if (absl::Status s = CheckOutput(ctx, 0, data.dtype(), shape); !s.ok()) return s;
  const size_t es = ir::DTypeSize(data.dtype());
  const size_t block = static_cast<size_t>(Product(data.shape(), *b + m, data.shape().size())) * es;
  const auto* src = static_cast<const uint8_t*>(data.raw_data());
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  for (size_t n = 0; block > 0 && n < offsets->size(); ++n) {
    std::memcpy(dst + n * block, src + (*offsets)[n] * es, block);
  }
  return absl::OkStatus();
}

absl::Status ScatterNDKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &data = *ctx.input(0), &indices = *ctx.input(1), &updates = *ctx.input(2);
  absl::StatusOr<std::vector<int64_t>> offsets = TupleOffsets(data, indices, 0);
  if (!offsets.ok()) return offsets.status();
  const int64_t m = indices.shape().back();
  std::vector<int64_t> expected(indices.shape().begin(), indices.shape().end() - 1);
  expected.insert(expected.end(), data.shape().begin() + m, data.shape().end());
  if (updates.shape() != expected) {
    return Invalid(absl::StrCat("updates have shape ", ir::ShapeToString(updates.shape()), ", expected ",
                                ir::ShapeToString(expected)));
  }
  return ScatterInto(ctx, *offsets, Product(data.shape(), m, data.shape().size()));
}

// ---- SpaceToDepth ----

absl::Status SpaceToDepthKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  absl::StatusOr<int64_t> b = ops::ParseSpaceToDepthBlocksize(ctx.attrs());
  if (!b.ok()) return b.status();
  if (in.rank() != 4 || in.shape()[2] % *b != 0 || in.shape()[3] % *b != 0) {
    return Invalid(absl::StrCat("SpaceToDepth cannot map ", ir::ShapeToString(in.shape()), " with blocksize ", *b));
  }
  const int64_t n = in.shape()[0], c = in.shape()[1], h = in.shape()[2], w = in.shape()[3];
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), {n, c * *b * *b, h / *b, w / *b}); !s.ok()) return s;
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  // The output viewed as [N, b (row offset), b (column offset), C, H/b, W/b] (DCR), or with the
  // channel first, [N, C, b, b, H/b, W/b] (CRD, opset 28).
  const std::string mode = ctx.attrs().GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return Invalid(absl::StrCat("SpaceToDepth mode '", mode, "' is not DCR or CRD"));
  const bool crd = mode == "CRD";
  const std::vector<int64_t> shape =
      crd ? std::vector<int64_t>{n, c, *b, *b, h / *b, w / *b} : std::vector<int64_t>{n, *b, *b, c, h / *b, w / *b};
  const std::vector<int64_t> strides = crd ? std::vector<int64_t>{c * h * w, h * w, w, 1, *b * w, *b}
                                           : std::vector<int64_t>{c * h * w, w, 1, h * w, *b * w, *b};
  StridedCopy(ctx.output(0)->raw_data(), in.raw_data(), ir::DTypeSize(in.dtype()), shape, strides);
  return absl::OkStatus();
}

// ---- ReverseSequence ----

absl::Status ReverseSequenceKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &in = *ctx.input(0), &lens_t = *ctx.input(1);
  absl::StatusOr<ops::ReverseSequenceAttrs> attrs = ops::ParseReverseSequenceAttrs(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  if (in.rank() < 2) return Invalid("input must have rank >= 2");
  if (lens_t.dtype() != ir::DType::kInt64) return Invalid("sequence_lens must be int64");
  const int64_t steps = in.shape()[attrs->time_axis], batch = in.shape()[attrs->batch_axis];
  if (lens_t.num_elements() != batch) {
    return Invalid(absl::StrCat("sequence_lens has ", lens_t.num_elements(), " entries for batch ", batch));
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), in.shape()); !s.ok()) return s;
  if (in.byte_size() == 0) return absl::OkStatus();
  std::memcpy(ctx.output(0)->raw_data(), in.raw_data(), in.byte_size());
  const size_t block = static_cast<size_t>(Product(in.shape(), 2, in.shape().size())) * ir::DTypeSize(in.dtype());
  // Element (t, b) of the two leading axes starts at block (t * time_stride + b * batch_stride).
  const int64_t time_stride = attrs->time_axis == 0 ? batch : 1;
  const int64_t batch_stride = attrs->time_axis == 0 ? 1 : steps;
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens_t.data<int64_t>()[b];
    if (len < 0 || len > steps) return Invalid(absl::StrCat("sequence length ", len, " out of range [0, ", steps, "]"));
    for (int64_t t = 0; t < len; ++t) {
      std::memcpy(dst + (t * time_stride + b * batch_stride) * block,
                  src + ((len - 1 - t) * time_stride + b * batch_stride) * block, block);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> TensorScatterKernels() {
  return {
      {"GatherElements", GatherElementsKernel},
      {"ScatterElements", ScatterElementsKernel},
      {"GatherND", GatherNDKernel},
      {"ScatterND", ScatterNDKernel},
      {"SpaceToDepth", SpaceToDepthKernel},
      {"ReverseSequence", ReverseSequenceKernel},
  };
}

}  // namespace kernels::cpu
