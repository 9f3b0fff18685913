// CPU kernels of the selection ops and their kernel table: TopK, NonZero and Compress here, Unique
// in tensor_unique.cc. NonZero and Compress size their output from the data (SetCreatedOutput).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "kernels/cpu/tensor_select_util.h"
#include "ops/tensor_select_attrs.h"

namespace kernels::cpu {

absl::Status UniqueKernel(KernelContext& ctx);  // tensor_unique.cc

absl::Status SetCreatedOutput(KernelContext& ctx, size_t i, ir::Tensor created) {
  ir::Tensor* out = ctx.output(i);
  if (out == nullptr) return absl::OkStatus();
  if (out->valid() && (out->dtype() != created.dtype() || out->shape() != created.shape())) {
    return absl::InternalError(absl::StrCat("output ", i, " was inferred as ", ir::DTypeName(out->dtype()),
                                            ir::ShapeToString(out->shape()), " but is ", ir::DTypeName(created.dtype()),
                                            ir::ShapeToString(created.shape())));
  }
  *out = std::move(created);
  return absl::OkStatus();
}

namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// ---- TopK ----

// Writes the k first of each slice along the axis, ordered by value (ties: lower index first).
template <typename T>
void TopKSlices(const T* x, T* values, int64_t* indices, int64_t outer, int64_t dim, int64_t inner, int64_t k,
                bool largest) {
  std::vector<int64_t> order(dim);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = x + o * dim * inner + i;
      auto before = [&](int64_t a, int64_t b) {
        const T va = base[a * inner], vb = base[b * inner];
        if (largest ? OrderLess(vb, va) : OrderLess(va, vb)) return true;
        if (largest ? OrderLess(va, vb) : OrderLess(vb, va)) return false;
        return a < b;
      };
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        values[at] = base[order[j] * inner];
        indices[at] = order[j];
      }
    }
  }
}

absl::Status TopKKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = RequireInput(ctx, 1); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  absl::StatusOr<ops::TopKAttrs> attrs = ops::ParseTopKAttrs(ctx.attrs(), x.rank());
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<int64_t> k = ops::TopKCount(*ctx.input(1));
  if (!k.ok()) return k.status();
  const int64_t axis = attrs->axis, dim = x.shape()[axis];
  if (*k > dim) return Invalid(absl::StrCat("K ", *k, " is larger than axis ", axis, " of size ", dim));
  std::vector<int64_t> shape = x.shape();
  shape[axis] = *k;
  if (absl::Status s = CheckOutput(ctx, 0, x.dtype(), shape); !s.ok()) return s;
  if (absl::Status s = CheckOutput(ctx, 1, ir::DType::kInt64, shape); !s.ok()) return s;
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1, x.shape().size());
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    TopKSlices(x.data<T>(), ctx.output(0)->data<T>(), ctx.output(1)->data<int64_t>(), outer, dim, inner, *k,
               attrs->largest);
    return absl::OkStatus();
  });
}

// ---- NonZero ----

template <typename T>
bool IsNonZero(T v) {
  return static_cast<double>(v) != 0;  // NaN counts, as in numpy
}

template <typename T>
absl::StatusOr<ir::Tensor> NonZeroIndices(const ir::Tensor& x) {
  const T* v = x.data<T>();
  int64_t count = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) count += IsNonZero(v[i]);
  // A scalar reads as a one-element vector, as numpy does.
  const std::vector<int64_t> dims = x.rank() == 0 ? std::vector<int64_t>{1} : x.shape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(ir::DType::kInt64, {rank, count});
  if (!out.ok()) return out.status();
  int64_t* dst = out->data<int64_t>();
  std::vector<int64_t> coord(rank, 0);
  int64_t n = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (IsNonZero(v[i])) {
      for (int64_t r = 0; r < rank; ++r) dst[r * count + n] = coord[r];
      ++n;
    }
    for (int64_t r = rank - 1; r >= 0 && ++coord[r] == dims[r]; --r) coord[r] = 0;
  }
  return out;
}

absl::Status NonZeroKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  return DispatchNumeric(x.dtype(), [&](auto tag) -> absl::Status {
    absl::StatusOr<ir::Tensor> out = NonZeroIndices<decltype(tag)>(x);
    if (!out.ok()) return out.status();
    return SetCreatedOutput(ctx, 0, *std::move(out));
  });
}

// ---- Compress ----

absl::Status CompressKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = RequireInput(ctx, 1); !s.ok()) return s;
  const ir::Tensor &x = *ctx.input(0), &cond = *ctx.input(1);
  if (cond.dtype() != ir::DType::kBool || cond.rank() != 1) return Invalid("condition must be a 1-D bool tensor");
  absl::StatusOr<std::optional<int64_t>> axis = ops::ParseCompressAxis(ctx.attrs(), x.rank());
  if (!axis.ok()) return axis.status();
  // The flattened input is one slice of num_elements items of one element.
  const int64_t outer = *axis ? Product(x.shape(), 0, **axis) : 1;
  const int64_t dim = *axis ? x.shape()[**axis] : x.num_elements();
  const int64_t inner = *axis ? Product(x.shape(), **axis + 1, x.shape().size()) : 1;
  std::vector<int64_t> selected;
  for (int64_t j = 0; j < std::min(dim, cond.num_elements()); ++j) {
    if (cond.data<uint8_t>()[j] != 0) selected.push_back(j);
  }
  std::vector<int64_t> shape{static_cast<int64_t>(selected.size())};
  if (*axis) {
    shape = x.shape();
    shape[**axis] = static_cast<int64_t>(selected.size());
  }
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(x.dtype(), shape);
  if (!out.ok()) return out.status();
  const size_t block = static_cast<size_t>(inner) * ir::DTypeSize(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; block > 0 && o < outer; ++o) {
    for (int64_t j : selected) {
      std::memcpy(dst, src + (o * dim + j) * block, block);
      dst += block;
    }
  }
  return SetCreatedOutput(ctx, 0, *std::move(out));
}

}  // namespace

std::vector<KernelDef> TensorSelectKernels() {
  return {
      {"TopK", TopKKernel},
      {"NonZero", NonZeroKernel},
      {"Compress", CompressKernel},
      {"Unique", UniqueKernel},
  };
}

}  // namespace kernels::cpu
