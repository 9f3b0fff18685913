// CPU kernels of the tensor family that index into their input: Slice, Gather and Pad
// (constant/reflect/edge/wrap, negative pads crop). Every dtype is moved as raw bytes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "ops/tensor_ops_slice.h"

namespace kernels::cpu {

using ops::FullPads;
using ops::IsFullSlice;
using ops::PlanSlice;
using ops::SliceAxis;
using ops::SliceAxisSize;
using ops::SliceRange;
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// Input i as int64s; nullopt when absent. An error when present but not an integer tensor.
absl::StatusOr<std::optional<std::vector<int64_t>>> IntsInput(const KernelContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr || !t->valid()) return std::optional<std::vector<int64_t>>();
  if (t->dtype() != ir::DType::kInt64 && t->dtype() != ir::DType::kInt32) {
    return Invalid(absl::StrCat("input ", i, " must be int32 or int64, got ", ir::DTypeName(t->dtype())));
  }
  return std::optional<std::vector<int64_t>>(t->ToInt64Vector());
}

// ---- Slice ----

absl::Status SliceKernelImpl(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  std::optional<std::vector<int64_t>> v[5];
  for (size_t i = 1; i < 5; ++i) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> r = IntsInput(ctx, i);
    if (!r.ok()) return r.status();
    v[i] = *std::move(r);
  }
  if (!v[1] || !v[2]) return Invalid("Slice needs starts and ends");
  absl::StatusOr<std::vector<SliceAxis>> plan =
      PlanSlice(in.rank(), *v[1], *v[2], v[3] ? &*v[3] : nullptr, v[4] ? &*v[4] : nullptr);
  if (!plan.ok()) return plan.status();
  std::vector<int64_t> shape = in.shape();
  std::vector<int64_t> strides = ContiguousStrides(in.shape());
  int64_t offset = 0;
  for (const SliceAxis& a : *plan) {
    const SliceRange r = SliceAxisSize(a, in.shape()[a.axis]);
    shape[a.axis] = r.count;
    offset += r.start * strides[a.axis];
    // count > 1 implies |step| < dim, so this cannot overflow; a stride of a size-1 dim is unused.
    strides[a.axis] = r.count > 1 ? strides[a.axis] * a.step : 0;
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), shape); !s.ok()) return s;
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  const size_t es = ir::DTypeSize(in.dtype());
  StridedCopy(ctx.output(0)->raw_data(), static_cast<const uint8_t*>(in.raw_data()) + offset * es, es, shape, strides);
  return absl::OkStatus();
}

// ---- Gather ----

absl::Status GatherKernelImpl(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = RequireInput(ctx, 1); !s.ok()) return s;
  const ir::Tensor& data = *ctx.input(0);
  const ir::Tensor& indices = *ctx.input(1);
  const int64_t rank = data.rank();
  int64_t axis = ctx.attrs().GetInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) {
    return Invalid(absl::StrCat("Gather axis ", axis, " out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  absl::StatusOr<std::optional<std::vector<int64_t>>> idx = IntsInput(ctx, 1);
  if (!idx.ok()) return idx.status();
  std::vector<int64_t>& ids = **idx;
  const int64_t dim = data.shape()[axis];
  for (int64_t& i : ids) {
    if (i < -dim || i >= dim) {
      return Invalid(absl::StrCat("Gather index ", i, " out of range for axis ", axis, " of size ", dim));
    }
    if (i < 0) i += dim;
  }
  std::vector<int64_t> shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  if (absl::Status s = CheckOutput(ctx, 0, data.dtype(), shape); !s.ok()) return s;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= data.shape()[k];
  for (int64_t k = axis + 1; k < rank; ++k) inner *= data.shape()[k];
  const size_t block = static_cast<size_t>(inner) * ir::DTypeSize(data.dtype());
  if (block == 0) return absl::OkStatus();
  const auto* src = static_cast<const uint8_t*>(data.raw_data());
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* base = src + o * dim * block;
    for (int64_t i : ids) {
      std::memcpy(dst, base + i * block, block);
      dst += block;
    }
  }
  return absl::OkStatus();
}

// ---- Pad ----

// Larger pads are rejected before any arithmetic on them.
constexpr int64_t kMaxPad = int64_t{1} << 40;

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

absl::StatusOr<PadMode> ParsePadMode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return Invalid(absl::StrCat("unsupported pad mode '", mode, "'"));
}

// For each output position along one axis: the input index it reads, or -1 for the constant.
// Negative pads crop first; the other mode then pads the cropped range.
absl::StatusOr<std::vector<int64_t>> PadAxisMap(int64_t dim, int64_t begin, int64_t end, PadMode mode) {
  const int64_t crop_begin = std::max<int64_t>(0, -begin), crop_end = std::max<int64_t>(0, -end);
  const int64_t kept = dim - crop_begin - crop_end;
  const int64_t pad_begin = std::max<int64_t>(0, begin), pad_end = std::max<int64_t>(0, end);
  if (kept < 0) return Invalid(absl::StrCat("pads ", begin, ",", end, " crop past dim ", dim));
  if (kept == 0 && mode != PadMode::kConstant && pad_begin + pad_end > 0) {
    return Invalid("cannot reflect, edge or wrap-pad an empty dim");
  }
  std::vector<int64_t> map(kept + pad_begin + pad_end);
  for (int64_t o = 0; o < static_cast<int64_t>(map.size()); ++o) {
    int64_t i = o - pad_begin;
    if (i < 0 || i >= kept) {
      switch (mode) {
        case PadMode::kConstant: map[o] = -1; continue;
        case PadMode::kEdge: i = i < 0 ? 0 : kept - 1; break;
        case PadMode::kWrap: i = ((i % kept) + kept) % kept; break;
        case PadMode::kReflect: {
          if (kept == 1) {
            i = 0;
            break;
          }
          const int64_t period = 2 * (kept - 1);
          i = ((i % period) + period) % period;
          if (i >= kept) i = period - i;
          break;
        }
      }
    }
    map[o] = i + crop_begin;
  }
  return map;
}

struct PadPlan {
  std::vector<std::vector<int64_t>> maps;  // per axis, see PadAxisMap
  std::vector<int64_t> in_strides;         // elements
  std::vector<int64_t> out_block;          // output elements per step of each axis
  std::vector<uint8_t> value;              // one element's bytes
  size_t es = 0;
};

// n copies of the pad value: a memset for zero, else one element doubled by memcpy.
void FillValue(uint8_t* dst, int64_t n, const PadPlan& p) {
  if (n <= 0) return;
  if (std::all_of(p.value.begin(), p.value.end(), [](uint8_t b) { return b == 0; })) {
    std::memset(dst, 0, static_cast<size_t>(n) * p.es);
    return;
  }
  std::memcpy(dst, p.value.data(), p.es);
  for (int64_t done = 1; done < n;) {
    const int64_t copy = std::min(done, n - done);
    std::memcpy(dst + done * p.es, dst, static_cast<size_t>(copy) * p.es);
    done += copy;
  }
}

// Writes the output sub-block of axis k (and inner axes) from the input sub-block at src.
void PadFill(const PadPlan& p, size_t k, const uint8_t* src, uint8_t*& dst) {
  const std::vector<int64_t>& map = p.maps[k];
  const int64_t n = static_cast<int64_t>(map.size());
  if (k + 1 == p.maps.size()) {
    for (int64_t o = 0; o < n;) {
      if (map[o] < 0) {
        FillValue(dst, 1, p);
        dst += p.es;
        ++o;
        continue;
      }
      int64_t run = 1;
      while (o + run < n && map[o + run] == map[o] + run) ++run;
      std::memcpy(dst, src + map[o] * p.es, run * p.es);
      dst += run * p.es;
      o += run;
    }
    return;
  }
  for (int64_t o = 0; o < n; ++o) {
    if (map[o] < 0) {
      FillValue(dst, p.out_block[k], p);
      dst += p.out_block[k] * p.es;
    } else {
      PadFill(p, k + 1, src + map[o] * p.in_strides[k] * p.es, dst);
    }
  }
}

// The constant to pad with, as one element of the data's dtype (zero when absent or empty).
absl::StatusOr<std::vector<uint8_t>> PadValue(const KernelContext& ctx, const ir::Tensor& data) {
  std::vector<uint8_t> value(ir::DTypeSize(data.dtype()), 0);
  const ir::Tensor* c = ctx.input(2);
  if (c == nullptr || !c->valid() || c->num_elements() == 0) return value;
  if (c->dtype() != data.dtype()) {
    return Invalid(absl::StrCat("Pad constant_value has dtype ", ir::DTypeName(c->dtype()), ", data has ",
                                ir::DTypeName(data.dtype())));
  }
  std::memcpy(value.data(), c->raw_data(), value.size());
  return value;
}

absl::Status PadKernelImpl(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  const int64_t rank = in.rank();
  absl::StatusOr<PadMode> mode = ParsePadMode(ctx.attrs().GetString("mode", "constant"));
  if (!mode.ok()) return mode.status();
  absl::StatusOr<std::optional<std::vector<int64_t>>> pads = IntsInput(ctx, 1), axes = IntsInput(ctx, 3);
  if (!pads.ok()) return pads.status();
  if (!axes.ok()) return axes.status();
  if (!*pads) return Invalid("Pad needs pads");
  absl::StatusOr<std::vector<int64_t>> full = FullPads(rank, **pads, *axes ? &**axes : nullptr);
  if (!full.ok()) return full.status();
  PadPlan p;
  p.es = ir::DTypeSize(in.dtype());
  absl::StatusOr<std::vector<uint8_t>> value = PadValue(ctx, in);
  if (!value.ok()) return value.status();
  p.value = *std::move(value);
  p.in_strides = ContiguousStrides(in.shape());
  std::vector<int64_t> shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t b = (*full)[i], e = (*full)[i + rank];
    if (b < -kMaxPad || b > kMaxPad || e < -kMaxPad || e > kMaxPad) {
      return Invalid(absl::StrCat("pads ", b, ",", e, " are out of range"));
    }
    shape[i] = in.shape()[i] + b + e;
  }
  // The output's size bounds the per-axis maps built next.
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), shape); !s.ok()) return s;
  for (int64_t i = 0; i < rank; ++i) {
    absl::StatusOr<std::vector<int64_t>> map = PadAxisMap(in.shape()[i], (*full)[i], (*full)[i + rank], *mode);
    if (!map.ok()) return map.status();
    p.maps.push_back(*std::move(map));
  }
  p.out_block = ContiguousStrides(shape);
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  if (rank == 0) {
    std::memcpy(dst, in.raw_data(), p.es);
  } else if (ctx.output(0)->num_elements() > 0) {
    PadFill(p, 0, static_cast<const uint8_t*>(in.raw_data()), dst);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SliceKernel(KernelContext& ctx) { return SliceKernelImpl(ctx); }
absl::Status GatherKernel(KernelContext& ctx) { return GatherKernelImpl(ctx); }
absl::Status PadKernel(KernelContext& ctx) { return PadKernelImpl(ctx); }

}  // namespace kernels::cpu
