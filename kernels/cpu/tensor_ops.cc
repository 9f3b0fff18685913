// CPU kernels of the tensor (shape and data movement) family and its kernel table: Flatten,
// Reshape, Squeeze, Unsqueeze, Shape, Transpose, Concat, Split, Expand, DepthToSpace here; Slice,
// Gather and Pad in tensor_ops_index.cc. Every dtype is moved as raw bytes; the shape-only kernels
// (Flatten, Reshape, Squeeze, Unsqueeze, Shape) also take string tensors.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "ops/infer_util.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return Invalid(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// Flatten, Reshape, Squeeze, Unsqueeze: same elements (strings too), the output shape inference
// computed.
absl::Status CopyKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor* out = ctx.output(0);
  if (out == nullptr) return Invalid("output 0 is missing");
  if (out->dtype() != in.dtype() || out->num_elements() != in.num_elements()) {
    return Invalid(
        absl::StrCat("cannot reshape ", ir::ShapeToString(in.shape()), " to ", ir::ShapeToString(out->shape())));
  }
  return out->CopyDataFrom(in);
}

absl::Status ShapeKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const std::vector<int64_t>& shape = ctx.input(0)->shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(ctx.attrs().GetInt("start", 0));
  const int64_t end = std::max(start, clamp(ctx.attrs().GetInt("end", rank)));
  if (absl::Status s = CheckOutput(ctx, 0, ir::DType::kInt64, {end - start}); !s.ok()) return s;
  int64_t* out = ctx.output(0)->data<int64_t>();
  for (int64_t i = start; i < end; ++i) out[i - start] = shape[i];
  return absl::OkStatus();
}

absl::Status TransposeKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  const int64_t rank = in.rank();
  absl::StatusOr<std::vector<int64_t>> resolved = ops::ResolvePermutation(ctx.attrs(), rank);
  if (!resolved.ok()) return resolved.status();
  const std::vector<int64_t>& perm = *resolved;
  const std::vector<int64_t> in_strides = ContiguousStrides(in.shape());
  std::vector<int64_t> shape(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    shape[i] = in.shape()[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), shape); !s.ok()) return s;
  StridedCopy(ctx.output(0)->raw_data(), in.raw_data(), ir::DTypeSize(in.dtype()), shape, strides);
  return absl::OkStatus();
}

// An error unless every input has the output's dtype and rank and matches it off the axis.
absl::Status CheckConcatInputs(const KernelContext& ctx, const ir::Tensor& out, int64_t axis) {
  int64_t axis_sum = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
    const ir::Tensor& in = *ctx.input(i);
    bool ok = in.dtype() == out.dtype() && in.rank() == out.rank();
    for (int64_t k = 0; ok && k < in.rank(); ++k) ok = k == axis || in.shape()[k] == out.shape()[k];
    if (!ok) {
      return Invalid(absl::StrCat("Concat input ", i, " ", ir::DTypeName(in.dtype()), ir::ShapeToString(in.shape()),
                                  " does not match output ", ir::DTypeName(out.dtype()), ir::ShapeToString(out.shape()),
                                  " off axis ", axis));
    }
    axis_sum += in.shape()[axis];
  }
  if (axis_sum != out.shape()[axis]) {
    return Invalid(
        absl::StrCat("Concat inputs sum to ", axis_sum, " along axis ", axis, ", output has ", out.shape()[axis]));
  }
  return absl::OkStatus();
}

absl::Status ConcatKernel(KernelContext& ctx) {
  ir::Tensor* out = ctx.output(0);
  if (out == nullptr) return Invalid("output 0 is missing");
  if (ctx.inputs.empty()) return Invalid("Concat has no inputs");
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), out->rank());
  if (!axis.ok()) return axis.status();
  if (absl::Status s = CheckConcatInputs(ctx, *out, *axis); !s.ok()) return s;
  const size_t es = ir::DTypeSize(out->dtype());
  const int64_t outer = Product(absl::MakeSpan(out->shape()).subspan(0, *axis));
  const int64_t inner = Product(absl::MakeSpan(out->shape()).subspan(*axis + 1));
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (const ir::Tensor* in : ctx.inputs) {
      const size_t bytes = static_cast<size_t>(in->shape()[*axis] * inner) * es;
      if (bytes == 0) continue;
      std::memcpy(dst, static_cast<const uint8_t*>(in->raw_data()) + o * bytes, bytes);
      dst += bytes;
    }
  }
  return absl::OkStatus();
}

absl::Status SplitKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return axis.status();
  const int64_t dim = in.shape()[*axis];
  const size_t es = ir::DTypeSize(in.dtype());
  const int64_t outer = Product(absl::MakeSpan(in.shape()).subspan(0, *axis));
  const int64_t inner = Product(absl::MakeSpan(in.shape()).subspan(*axis + 1));
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    ir::Tensor* out = ctx.output(i);
    if (out == nullptr) return Invalid(absl::StrCat("output ", i, " is missing"));
    std::vector<int64_t> shape = in.shape();
    shape[*axis] = out->rank() == in.rank() ? out->shape()[*axis] : 0;
    if (absl::Status s = CheckOutput(ctx, i, in.dtype(), shape); !s.ok()) return s;
    const int64_t len = shape[*axis];
    if (offset + len > dim) return Invalid("Split outputs exceed the input along the axis");
    const size_t run = static_cast<size_t>(len * inner) * es;
    const auto* src = static_cast<const uint8_t*>(in.raw_data()) + offset * inner * es;
    auto* dst = static_cast<uint8_t*>(out->raw_data());
    for (int64_t o = 0; run > 0 && o < outer; ++o) {
      std::memcpy(dst + o * run, src + o * dim * inner * es, run);
    }
    offset += len;
  }
  if (offset != dim) {
    return Invalid(absl::StrCat("Split outputs cover ", offset, " of ", dim, " along the axis"));
  }
  return absl::OkStatus();
}

absl::Status ExpandKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor* out = ctx.output(0);
  if (out == nullptr) return Invalid("output 0 is missing");
  const int64_t rank = out->rank(), shift = rank - in.rank();
  if (shift < 0 || out->dtype() != in.dtype()) {
    return Invalid(
        absl::StrCat("cannot expand ", ir::ShapeToString(in.shape()), " to ", ir::ShapeToString(out->shape())));
  }
  const std::vector<int64_t> in_strides = ContiguousStrides(in.shape());
  std::vector<int64_t> strides(rank, 0);
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t d = in.shape()[i], o = out->shape()[i + shift];
    if (d != o && d != 1) {
      return Invalid(
          absl::StrCat("cannot expand ", ir::ShapeToString(in.shape()), " to ", ir::ShapeToString(out->shape())));
    }
    strides[i + shift] = d == 1 ? 0 : in_strides[i];
  }
  if (out->num_elements() == 0) return absl::OkStatus();
  StridedCopy(out->raw_data(), in.raw_data(), ir::DTypeSize(in.dtype()), out->shape(), strides);
  return absl::OkStatus();
}

absl::Status DepthToSpaceKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  const int64_t b = ctx.attrs().GetInt("blocksize", 0);
  const std::string mode = ctx.attrs().GetString("mode", "DCR");
  if (in.rank() != 4 || b <= 0 || b > (int64_t{1} << 20) || in.shape()[1] % (b * b) != 0 ||
      (mode != "DCR" && mode != "CRD")) {
    return Invalid(absl::StrCat("DepthToSpace cannot map ", ir::ShapeToString(in.shape()), " with blocksize ", b,
                                " and mode ", mode));
  }
  const int64_t n = in.shape()[0], c = in.shape()[1] / (b * b), h = in.shape()[2], w = in.shape()[3];
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), {n, c, h * b, w * b}); !s.ok()) return s;
  const int64_t s_c = h * w;  // stride of one input channel
  // The output viewed as [N, C', H, b, W, b] reads these input strides.
  std::vector<int64_t> shape = {n, c, h, b, w, b};
  std::vector<int64_t> strides = mode == "DCR"
                                     ? std::vector<int64_t>{in.shape()[1] * s_c, s_c, w, b * c * s_c, 1, c * s_c}
                                     : std::vector<int64_t>{in.shape()[1] * s_c, b * b * s_c, w, b * s_c, 1, s_c};
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  StridedCopy(ctx.output(0)->raw_data(), in.raw_data(), ir::DTypeSize(in.dtype()), shape, strides);
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> TensorKernels() {
  return {
      {"Flatten", CopyKernel},
      {"Reshape", CopyKernel},
      {"Squeeze", CopyKernel},
      {"Unsqueeze", CopyKernel},
      {"Shape", ShapeKernel},
      {"Transpose", TransposeKernel},
      {"Concat", ConcatKernel},
      {"Split", SplitKernel},
      {"Slice", SliceKernel},
      {"Gather", GatherKernel},
      {"Pad", PadKernel},
      {"Expand", ExpandKernel},
      {"DepthToSpace", DepthToSpaceKernel},
  };
}

}  // namespace kernels::cpu
