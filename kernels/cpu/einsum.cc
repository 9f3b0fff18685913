// Owns the CPU kernel of Einsum (ops/einsum.h): one walk over every combination of label values
// (output labels, then summed ones), multiplying the inputs' elements into the output's
// accumulator. Floats accumulate in double, integers in wrapping int64.
#include "ops/einsum.h"

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

// Most label combinations one Einsum may visit (the product of every label's size).
constexpr int64_t kMaxEinsumSteps = int64_t{1} << 34;

// The walk: the labels in visiting order, their sizes, and per label the element stride of each
// input and of the output (0 where the label is absent or broadcast).
struct EinsumWalk {
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> in_strides;  // [input][label position]
  std::vector<int64_t> out_strides;              // [label position]
  int64_t steps = 1;
};

absl::StatusOr<EinsumWalk> MakeWalk(const ops::EinsumSpec& spec, const std::vector<const ir::Tensor*>& inputs,
                                    const std::vector<int64_t>& label_dims) {
  std::vector<int> order = spec.output;
  std::vector<bool> used(spec.num_labels, false);
  for (int label : spec.output) used[label] = true;
  for (const std::vector<int>& term : spec.inputs) {
    for (int label : term) {
      if (!used[label]) order.push_back(label);
      used[label] = true;
    }
  }
  std::vector<int> position(spec.num_labels, -1);
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<int>(p);
  EinsumWalk walk;
  for (int label : order) {
    walk.sizes.push_back(label_dims[label]);
    if (label_dims[label] == 0) walk.steps = 0;
    if (walk.steps > 0 && label_dims[label] > kMaxEinsumSteps / walk.steps) {
      return absl::InvalidArgumentError("Einsum: too many label combinations to visit");
    }
    walk.steps *= label_dims[label];
  }
  walk.out_strides.assign(order.size(), 0);
  int64_t stride = 1;
  for (size_t a = spec.output.size(); a-- > 0;) {
    walk.out_strides[position[spec.output[a]]] = stride;
    stride *= label_dims[spec.output[a]];
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> strides(order.size(), 0);
    const std::vector<int64_t>& shape = inputs[i]->shape();
    int64_t s = 1;
    for (size_t a = shape.size(); a-- > 0;) {
      const int label = spec.inputs[i][a];
      if (shape[a] == label_dims[label]) strides[position[label]] += s;  // repeats: the diagonal
      s *= shape[a];
    }
    walk.in_strides.push_back(std::move(strides));
  }
  return walk;
}

template <typename T>
void RunWalk(const EinsumWalk& walk, const std::vector<const ir::Tensor*>& inputs, ir::Tensor& out) {
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  std::vector<Acc> acc(out.num_elements(), Acc{0});
  const size_t n = inputs.size();
  const size_t rank = walk.sizes.size();
  std::vector<const T*> data;
  for (const ir::Tensor* t : inputs) data.push_back(t->data<T>());
  std::vector<int64_t> index(rank, 0), offsets(n, 0);
  int64_t o = 0;
  for (int64_t step = 0; step < walk.steps; ++step) {
    if constexpr (std::is_integral_v<Acc>) {
      uint64_t product = 1;
      for (size_t k = 0; k < n; ++k) product *= static_cast<uint64_t>(static_cast<int64_t>(data[k][offsets[k]]));
      acc[o] = static_cast<Acc>(static_cast<uint64_t>(acc[o]) + product);
    } else {
      double product = 1;
      for (size_t k = 0; k < n; ++k) product *= elementwise::Convert<double>(data[k][offsets[k]]);
      acc[o] += product;
    }
    for (size_t d = rank; d-- > 0;) {  // advance the odometer and every offset
      o += walk.out_strides[d];
      for (size_t k = 0; k < n; ++k) offsets[k] += walk.in_strides[k][d];
      if (++index[d] < walk.sizes[d]) break;
      o -= walk.out_strides[d] * walk.sizes[d];
      for (size_t k = 0; k < n; ++k) offsets[k] -= walk.in_strides[k][d] * walk.sizes[d];
      index[d] = 0;
    }
  }
  T* y = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) y[i] = elementwise::Convert<T>(acc[i]);
}

absl::Status Einsum(KernelContext& ctx) {
  ir::Tensor* out = ctx.output(0);
  if (out == nullptr || ctx.inputs.empty()) return absl::InvalidArgumentError("Einsum: missing input or output");
  std::vector<const ir::Tensor*> inputs;
  std::vector<int64_t> ranks;
  std::vector<ir::Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const ir::Tensor* t = ctx.input(i);
    if (t == nullptr || t->dtype() != out->dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum: input ", i, " is missing or not of the output's dtype"));
    }
    inputs.push_back(t);
    ranks.push_back(t->rank());
    shapes.emplace_back(t->shape().begin(), t->shape().end());
  }
  absl::StatusOr<ops::EinsumSpec> spec = ops::ParseEinsum(ctx.attrs().GetString("equation", ""), ranks);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::vector<ir::Dim>> dims = ops::EinsumLabelDims(*spec, shapes);
  if (!dims.ok()) return dims.status();
  std::vector<int64_t> label_dims;
  for (const ir::Dim& d : *dims) label_dims.push_back(d.value);
  int64_t out_count = 1;
  for (int label : spec->output) out_count *= label_dims[label];
  if (out_count != out->num_elements()) return absl::InvalidArgumentError("Einsum: output shape mismatch");
  absl::StatusOr<EinsumWalk> walk = MakeWalk(*spec, inputs, label_dims);
  if (!walk.ok()) return walk.status();
  return DispatchNumeric(out->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    RunWalk<T>(*walk, inputs, *out);
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> EinsumKernels() { return {{"Einsum", Einsum}}; }

}  // namespace kernels::cpu
