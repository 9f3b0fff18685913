// CPU kernel of MaxUnpool: Y is zero except at the elements I points to, which get X's values. I
// holds offsets (as MaxPool's Indices) into the unpooled shape the pool geometry implies; with
// output_shape, Y has that shape and each offset goes to the same (n, c, spatial) position in it
// (extra rows and columns stay zero). Y is created here when inference could not know its shape.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cpu/vision.h"

namespace kernels::cpu::vision {
namespace {

// The unpooled shape the pool geometry implies: [N, C, (in - 1) * stride + kernel - pads, ...].
absl::StatusOr<std::vector<int64_t>> DefaultShape(const KernelContext& ctx, const ir::Tensor& x) {
  absl::StatusOr<nn::WindowAttrs> w = nn::ReadWindowAttrs(ctx.attrs(), static_cast<size_t>(x.rank() - 2), {});
  if (!w.ok()) return w.status();
  const size_t nd = w->kernel.size();
  std::vector<int64_t> out = {x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < nd; ++i) {
    const int64_t d = (x.shape()[i + 2] - 1) * w->strides[i] + w->kernel[i] - w->pads[i] - w->pads[i + nd];
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative output extent ", d));
    out.push_back(d);
  }
  return out;
}

// Offset in Y (shape `y`) of the element at offset `i` of the default shape `d`; -1 when it lies
// outside Y.
int64_t MapOffset(int64_t i, const std::vector<int64_t>& d, const std::vector<int64_t>& y) {
  int64_t out = 0, stride = 1;
  for (size_t j = d.size(); j-- > 0;) {
    const int64_t c = i % d[j];
    i /= d[j];
    if (c >= y[j]) return -1;
    out += c * stride;
    stride *= y[j];
  }
  return out;
}

}  // namespace

absl::Status MaxUnpool(KernelContext& ctx) {
  const ir::Tensor *x = ctx.input(0), *indices = ctx.input(1);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || indices == nullptr || y == nullptr) return absl::InvalidArgumentError("X, I and Y are required");
  if (x->rank() < 3) return absl::InvalidArgumentError("X must have rank >= 3");
  if (indices->dtype() != ir::DType::kInt64 || indices->shape() != x->shape()) {
    return absl::InvalidArgumentError("I must be int64 of X's shape");
  }
  absl::StatusOr<std::vector<int64_t>> dflt = DefaultShape(ctx, *x);
  if (!dflt.ok()) return dflt.status();
  std::vector<int64_t> shape = *dflt;
  if (const ir::Tensor* given = ctx.input(2); given != nullptr) {
    shape = given->ToInt64Vector();
    if (given->rank() != 1 || static_cast<int64_t>(shape.size()) != x->rank()) {
      return absl::InvalidArgumentError("output_shape must list one size per dim of X");
    }
  }
  if (!y->valid()) {
    absl::StatusOr<ir::Tensor> created = ir::Tensor::Create(x->dtype(), shape);
    if (!created.ok()) return created.status();
    *y = *std::move(created);
  }
  if (absl::Status s = nn::ExpectShape(*y, shape, "Y"); !s.ok()) return s;
  if (y->dtype() != x->dtype()) return absl::InvalidArgumentError("Y dtype differs from X");
  const int64_t dflt_size = nn::Product(*dflt);
  const bool same = shape == *dflt;
  return DispatchNumeric(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y->data<T>();
    std::fill(out, out + y->num_elements(), T{});
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const int64_t at = indices->data<int64_t>()[i];
      const int64_t to = at < 0 || at >= dflt_size ? -1 : same ? at : MapOffset(at, *dflt, shape);
      if (to < 0) {
        return absl::InvalidArgumentError(absl::StrCat("I[", i, "] = ", at, " is outside the unpooled tensor"));
      }
      out[to] = x->data<T>()[i];
    }
    return absl::OkStatus();
  });
}

}  // namespace kernels::cpu::vision
