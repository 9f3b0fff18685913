// Device runner of RotaryEmbedding (kernels/cuda/rotary.h): LLM exports (opset 23's op, or ORT's
// com.microsoft one rewritten into it at import) rotate Q and K of every layer, and on the host it
// kept the whole decoder out of a CUDA graph. X [B, heads, seq, head] or [B, seq, hidden] in
// float32 / float16 / bfloat16, caches of X's dtype, int64 position ids. A form the host kernel
// reports (a cache of the wrong shape, an odd rotary dim) runs there, for its error.
#include <cstdint>

#include "kernels/cuda/rotary.h"
#include "ops/attention.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;

bool SupportsRotary(const ir::Graph& g, const ir::Node& n) {
  const DType x = InputDType(g, n, 0);
  const int64_t rank = g.value(n.inputs[0]).type.rank();
  absl::StatusOr<ops::RotaryAttrs> attrs = ops::ParseRotaryAttrs(n);
  return IsFloat(x) && n.inputs.size() >= 3 && InputDType(g, n, 1) == x && InputDType(g, n, 2) == x &&
         (n.input(3) == ir::kNoValue || InputDType(g, n, 3) == DType::kInt64) && attrs.ok() &&
         (rank == 4 || (rank == 3 && attrs->num_heads > 0));
}

// The kernel's shape for X's dims, or Unimplemented (the host reports) for an inconsistent form.
absl::StatusOr<kernels::cuda::RotaryShape> RotaryShapeOf(const Call& c, const DeviceTensor& x, const DeviceTensor& cos,
                                                         const DeviceTensor& sin) {
  absl::StatusOr<ops::RotaryAttrs> attrs = ops::ParseRotaryAttrs(c.node);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  kernels::cuda::RotaryShape p;
  p.heads_first = x.dims.size() == 4;
  if (!p.heads_first && (x.dims.size() != 3 || attrs->num_heads <= 0 || x.dims[2] % attrs->num_heads != 0)) {
    return c.Unsupported("X is not [B, heads, seq, head] or [B, seq, heads * head]");
  }
  p.batch = x.dims[0];
  p.heads = p.heads_first ? x.dims[1] : attrs->num_heads;
  p.seq = p.heads_first ? x.dims[2] : x.dims[1];
  p.head = p.heads_first ? x.dims[3] : x.dims[2] / p.heads;
  const int64_t rotated = attrs->rotary_dim == 0 ? p.head : attrs->rotary_dim;
  if (rotated > p.head || rotated % 2 != 0) return c.Unsupported("rotary_embedding_dim is odd or exceeds the head");
  p.half = rotated / 2;
  p.interleaved = attrs->interleaved;
  if (cos.dims != sin.dims || cos.dims.size() < 2 || cos.dims.back() != p.half) {
    return c.Unsupported("the caches differ or do not end in rotary_dim / 2");
  }
  const bool with_positions = c.has(3);
  if (with_positions ? cos.dims.size() != 2 || c.in(3).num_elements() != p.batch * p.seq
                     : cos.num_elements() != p.batch * p.seq * p.half) {
    return c.Unsupported("cache and position ids shapes disagree");
  }
  p.cache_rows = with_positions ? cos.dims[0] : p.batch * p.seq;
  return p;
}

Outputs RunRotary(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  absl::StatusOr<DeviceTensor> cos = ToLayout(c.in(1), false, c.stream), sin = ToLayout(c.in(2), false, c.stream);
  for (const auto* t : {&x, &cos, &sin}) {
    if (!t->ok()) return t->status();
  }
  absl::StatusOr<kernels::cuda::RotaryShape> shape = RotaryShapeOf(c, *x, *cos, *sin);
  if (!shape.ok()) return shape.status();
  DeviceTensor positions;
  if (c.has(3)) {
    absl::StatusOr<DeviceTensor> dense = ToLayout(c.in(3), false, c.stream);
    if (!dense.ok()) return dense.status();
    positions = *std::move(dense);
    shape->positions = static_cast<const int64_t*>(positions.data());
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != x->dims || out->dtype != x->dtype) return c.Unsupported("inferred output differs from X");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::RotaryEmbedding(ToFloatType(x->dtype), x->data(), cos->data(),
                                                              sin->data(), out->data(), *shape, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> RotaryRunners() { return {{"RotaryEmbedding", SupportsRotary, RunRotary}}; }

}  // namespace exec
