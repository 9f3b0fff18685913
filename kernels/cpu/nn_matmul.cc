// CPU kernels of MatMul (numpy semantics: 1-D promotion, broadcast batch dims) and Gemm
// (alpha, beta, transA, transB, unidirectional C broadcast), both on BLAS gemm.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu::nn {
namespace {

// MatMul operands viewed as [batch..., rows, cols] with their broadcast batch shape.
struct MatMulPlan {
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> batch;           // broadcast batch dims
  std::vector<int64_t> a_batch_stride;  // per batch dim, in matrices (0 when broadcast)
  std::vector<int64_t> b_batch_stride;
  std::vector<int64_t> y_shape;
};

// Strides (in matrices) of `dims` right-aligned to `rank` batch dims; 0 where broadcast.
std::vector<int64_t> BatchStrides(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t j = dims.size(); j-- > 0;) {
    strides[j + rank - dims.size()] = dims[j] == 1 ? 0 : stride;
    stride *= dims[j];
  }
  return strides;
}

absl::StatusOr<MatMulPlan> PlanMatMul(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.rank() < 1 || b.rank() < 1) {
    return absl::InvalidArgumentError("MatMul inputs must have rank >= 1");
  }
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  MatMulPlan p;
  p.m = as[as.size() - 2];
  p.k = as.back();
  p.n = bs.back();
  if (bs[bs.size() - 2] != p.k) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul shapes ", ir::ShapeToString(a.shape()), " and ",
                                                   ir::ShapeToString(b.shape()), " have mismatched inner dims"));
  }
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  p.batch.assign(rank, 1);
  for (size_t j = 0; j < rank; ++j) {
    const int64_t da = j + ab.size() >= rank ? ab[j + ab.size() - rank] : 1;
    const int64_t db = j + bb.size() >= rank ? bb[j + bb.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat("MatMul batch dims of ", ir::ShapeToString(a.shape()), " and ",
                                                     ir::ShapeToString(b.shape()), " do not broadcast"));
    }
    p.batch[j] = da == 1 ? db : da;
  }
  p.a_batch_stride = BatchStrides(ab, rank);
  p.b_batch_stride = BatchStrides(bb, rank);
  p.y_shape = p.batch;
  if (a.rank() > 1) p.y_shape.push_back(p.m);
  if (b.rank() > 1) p.y_shape.push_back(p.n);
  return p;
}

template <typename T>
absl::Status MatMulTyped(const ir::Tensor& a, const ir::Tensor& b, const MatMulPlan& p, ir::Tensor& y) {
  const T* ad = a.data<T>();
  const T* bd = b.data<T>();
  T* yd = y.data<T>();
  const int64_t batches = Product(p.batch);
  const bool b_shared = std::all_of(p.b_batch_stride.begin(), p.b_batch_stride.end(), [](int64_t s) { return s == 0; });
  const bool a_full = Product(p.batch) * p.m * p.k == a.num_elements();
  if (b_shared && a_full) {  // one gemm over every row of A
    return Gemm(false, false, batches * p.m, p.n, p.k, T{1}, ad, bd, T{0}, yd);
  }
  std::vector<int64_t> idx(p.batch.size(), 0);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t ai = 0, bi = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      ai += idx[j] * p.a_batch_stride[j];
      bi += idx[j] * p.b_batch_stride[j];
    }
    absl::Status s =
        Gemm(false, false, p.m, p.n, p.k, T{1}, ad + ai * p.m * p.k, bd + bi * p.k * p.n, T{0}, yd + i * p.m * p.n);
    if (!s.ok()) return s;
    for (size_t j = idx.size(); j-- > 0;) {
      if (++idx[j] < p.batch[j]) break;
      idx[j] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status MatMulImpl(KernelContext& ctx) {
  const ir::Tensor* a = ctx.input(0);
  const ir::Tensor* b = ctx.input(1);
  ir::Tensor* y = ctx.output(0);
  if (a == nullptr || b == nullptr || y == nullptr) {
    return absl::InvalidArgumentError("A, B and Y are required");
  }
  if (b->dtype() != a->dtype() || y->dtype() != a->dtype()) {
    return absl::InvalidArgumentError("A, B and Y must have the same dtype");
  }
  absl::StatusOr<MatMulPlan> plan = PlanMatMul(*a, *b);
  if (!plan.ok()) return plan.status();
  if (absl::Status s = ExpectShape(*y, plan->y_shape, "Y"); !s.ok()) return s;
  switch (a->dtype()) {
    case ir::DType::kFloat32: return MatMulTyped<float>(*a, *b, *plan, *y);
    case ir::DType::kFloat64: return MatMulTyped<double>(*a, *b, *plan, *y);
    default:
      return absl::UnimplementedError(absl::StrCat("MatMul: dtype ", ir::DTypeName(a->dtype()), " not supported"));
  }
}

// y[i, j] = beta * c[broadcast(i, j)] over y [m, n].
template <typename T>
absl::Status FillBroadcastC(const ir::Tensor& c, int64_t m, int64_t n, T beta, T* y) {
  if (c.rank() > 2) return absl::InvalidArgumentError("C must have rank <= 2");
  std::vector<int64_t> cs = c.shape();
  while (cs.size() < 2) cs.insert(cs.begin(), 1);
  if ((cs[0] != 1 && cs[0] != m) || (cs[1] != 1 && cs[1] != n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("C shape ", ir::ShapeToString(c.shape()), " does not broadcast to [", m, ",", n, "]"));
  }
  const int64_t row_stride = cs[0] == 1 ? 0 : cs[1], col_stride = cs[1] == 1 ? 0 : 1;
  const T* cd = c.data<T>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) y[i * n + j] = beta * cd[i * row_stride + j * col_stride];
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GemmTyped(KernelContext& ctx) {
  const ir::Tensor& a = *ctx.input(0);
  const ir::Tensor& b = *ctx.input(1);
  const ir::Tensor* c = ctx.input(2);
  ir::Tensor& y = *ctx.output(0);
  const bool ta = ctx.attrs().GetInt("transA", 0) != 0;
  const bool tb = ctx.attrs().GetInt("transB", 0) != 0;
  const T alpha = static_cast<T>(ctx.attrs().GetFloat("alpha", 1.0f));
  const T beta = static_cast<T>(ctx.attrs().GetFloat("beta", 1.0f));
  if (a.rank() != 2 || b.rank() != 2) return absl::InvalidArgumentError("A and B must be 2-D");
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t kb = tb ? b.shape()[1] : b.shape()[0], n = tb ? b.shape()[0] : b.shape()[1];
  if (k != kb) {
    return absl::InvalidArgumentError(absl::StrCat("Gemm inner dims differ: ", k, " vs ", kb));
  }
  if (absl::Status s = ExpectShape(y, {m, n}, "Y"); !s.ok()) return s;
  if (c != nullptr) {
    if (absl::Status s = FillBroadcastC(*c, m, n, beta, y.data<T>()); !s.ok()) return s;
  }
  return Gemm(ta, tb, m, n, k, alpha, a.data<T>(), b.data<T>(), c != nullptr ? T{1} : T{0}, y.data<T>());
}

absl::Status GemmImpl(KernelContext& ctx) {
  const ir::Tensor* a = ctx.input(0);
  if (a == nullptr || ctx.input(1) == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError("A, B and Y are required");
  }
  for (const ir::Tensor* t : {ctx.input(1), ctx.input(2), static_cast<const ir::Tensor*>(ctx.output(0))}) {
    if (t != nullptr && t->dtype() != a->dtype()) {
      return absl::InvalidArgumentError("A, B, C and Y must have the same dtype");
    }
  }
  switch (a->dtype()) {
    case ir::DType::kFloat32: return GemmTyped<float>(ctx);
    case ir::DType::kFloat64: return GemmTyped<double>(ctx);
    default: return absl::UnimplementedError(absl::StrCat("Gemm: dtype ", ir::DTypeName(a->dtype()), " not supported"));
  }
}

}  // namespace

absl::Status MatMul(KernelContext& ctx) {
  if (IsHalf(ctx)) return RunAsFloat32(ctx, &MatMul);
  return MatMulImpl(ctx);
}

absl::Status GemmOp(KernelContext& ctx) {
  if (IsHalf(ctx)) return RunAsFloat32(ctx, &GemmOp);
  return GemmImpl(ctx);
}

}  // namespace kernels::cpu::nn
