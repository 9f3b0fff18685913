// Owns the numpy-broadcast iteration shared by the elementwise CPU kernels (binary, variadic,
// Where, PRelu): a plan that maps N input shapes onto an output shape with merged dims and
// per-input element strides (0 along broadcast dims), and a row-major walk over it that hands out
// contiguous inner runs, keeping offsets incrementally (no per-element division).
#ifndef ONNXRUN_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_
#define ONNXRUN_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::elementwise {

struct BroadcastPlan {
  std::vector<int64_t> dims;                  // merged output dims, at least one
  std::vector<std::vector<int64_t>> strides;  // per input, per merged dim, in elements
  int64_t num_elements = 0;                   // of the output
};

// An error unless every input shape broadcasts (unidirectionally) to out_shape: right-aligned,
// each input dim equal to the output dim or 1, and no input of higher rank than the output.
absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(absl::Span<const int64_t> out_shape,
                                                const std::vector<absl::Span<const int64_t>>& inputs);

// Calls fn(out_offset, in_offsets, length, in_steps) for each contiguous run of the output, in
// row-major order: output elements [out_offset, out_offset + length) read input k at
// in_offsets[k] + i * in_steps[k]. N must equal the number of inputs of the plan.
template <size_t N, typename Fn>
void ForEachRun(const BroadcastPlan& plan, Fn&& fn) {
  if (plan.num_elements == 0 || plan.strides.size() != N) return;
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims.back();
  std::array<int64_t, N> offsets{};
  std::array<int64_t, N> steps{};
  for (size_t k = 0; k < N; ++k) steps[k] = plan.strides[k].back();
  std::vector<int64_t> index(rank, 0);
  for (int64_t out = 0; out < plan.num_elements; out += inner) {
    fn(out, offsets, inner, steps);
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) offsets[k] += plan.strides[k][d];
      if (++index[d] < plan.dims[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= plan.strides[k][d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// out[i] = op(a[i], b[i]) with broadcasting; plan has two inputs (a, b). out may alias a when a
// is not broadcast (same shape as out).
// A plan of one merged dim (same shapes, or one operand a scalar) runs in chunks on ParallelFor's
// threads.
template <typename A, typename B, typename R, typename Op>
void BroadcastBinary(const BroadcastPlan& plan, const A* a, const B* b, R* out, Op op) {
  auto run = [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& step) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    R* po = out + o;
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
    } else if (step[0] == 1 && step[1] == 0) {
      const B vb = *pb;
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], vb);
    } else if (step[0] == 0 && step[1] == 1) {
      const A va = *pa;
      for (int64_t i = 0; i < n; ++i) po[i] = op(va, pb[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i * step[0]], pb[i * step[1]]);
    }
  };
  if (plan.dims.size() == 1 && plan.strides.size() == 2) {
    const std::array<int64_t, 2> step = {plan.strides[0][0], plan.strides[1][0]};
    ParallelFor(plan.num_elements, kElementwiseChunk, [&](int64_t begin, int64_t end) {
      run(begin, {begin * step[0], begin * step[1]}, end - begin, step);
    });
    return;
  }
  ForEachRun<2>(plan, run);
}

// out[i] = op(a[i], b[i], c[i]) with broadcasting; plan has three inputs.
template <typename A, typename B, typename C, typename R, typename Op>
void BroadcastTernary(const BroadcastPlan& plan, const A* a, const B* b, const C* c, R* out, Op op) {
  ForEachRun<3>(plan, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& step) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    const C* pc = c + off[2];
    R* po = out + o;
    if (step[0] == 1 && step[1] == 1 && step[2] == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i], pc[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i * step[0]], pb[i * step[1]], pc[i * step[2]]);
    }
  });
}

}  // namespace kernels::cpu::elementwise

#endif  // ONNXRUN_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_
