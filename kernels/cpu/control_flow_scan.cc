// Scan on the CPU: the body once per slice of the scan inputs, states carried, scan outputs
// stacked; Scan-8 runs that once per batch entry.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/control_flow.h"
#include "kernels/cpu/subgraph.h"
#include "ops/control_flow.h"
#include "ops/infer_util.h"

namespace kernels::cpu {
namespace {

using Tensors = std::vector<ir::Tensor>;
using Pointers = std::vector<const ir::Tensor*>;

// One unbatched scan's inputs.
struct ScanInputs {
  Tensors states;
  Tensors scans;
  Pointers implicit;
};

// The scan inputs' axes normalised, and their common length.
absl::StatusOr<int64_t> ScanLength(const ops::ScanAttrs& attrs, const Tensors& scans, std::vector<int64_t>& axes) {
  int64_t length = -1;
  for (size_t j = 0; j < scans.size(); ++j) {
    absl::StatusOr<int64_t> axis = ops::NormalizeAxis(attrs.input_axes[j], scans[j].rank());
    if (!axis.ok()) return axis.status();
    axes.push_back(*axis);
    const int64_t n = scans[j].shape()[*axis];
    if (length >= 0 && n != length) {
      return absl::InvalidArgumentError(absl::StrCat("scan inputs have different lengths (", length, " and ", n, ")"));
    }
    length = n;
  }
  if (length > ops::kMaxControlFlowIterations) {
    return absl::ResourceExhaustedError(absl::StrCat("Scan would run ", length, " iterations, more than the limit of ",
                                                     ops::kMaxControlFlowIterations));
  }
  return length;
}

absl::StatusOr<Tensors> StackScanOutputs(const ir::Graph& body, const ops::ScanAttrs& attrs,
                                         const std::vector<Tensors>& parts) {
  Tensors outputs;
  for (size_t k = 0; k < parts.size(); ++k) {
    const ir::TensorType& declared = body.value(body.outputs()[attrs.num_state + k]).type;
    std::vector<int64_t> empty_dims;
    if (declared.shape) {
      for (const ir::Dim& d : *declared.shape) empty_dims.push_back(d.known() ? d.value : 0);
    }
    const int64_t rank = parts[k].empty() ? static_cast<int64_t>(empty_dims.size()) : parts[k][0].rank();
    absl::StatusOr<int64_t> axis = ops::NormalizeAxis(attrs.output_axes[k], rank + 1);
    if (!axis.ok()) return axis.status();
    const ir::DType dtype = parts[k].empty() ? declared.dtype : parts[k][0].dtype();
    absl::StatusOr<ir::Tensor> stacked = Stack(parts[k], *axis, attrs.output_directions[k] == 1, dtype, empty_dims);
    if (!stacked.ok()) return stacked.status();
    outputs.push_back(*std::move(stacked));
  }
  return outputs;
}

// The body once per step along the scan axes: final states, then the stacked scan outputs.
absl::StatusOr<Tensors> ScanOnce(const ir::Graph& body, const ops::ScanAttrs& attrs, ScanInputs in) {
  std::vector<int64_t> axes;
  absl::StatusOr<int64_t> length = ScanLength(attrs, in.scans, axes);
  if (!length.ok()) return length.status();
  std::vector<Tensors> parts(attrs.num_scan_outputs);
  for (int64_t t = 0; t < *length; ++t) {
    Tensors slices;
    for (size_t j = 0; j < in.scans.size(); ++j) {
      absl::StatusOr<ir::Tensor> slice =
          SliceAt(in.scans[j], axes[j], attrs.input_directions[j] == 1 ? *length - 1 - t : t);
      if (!slice.ok()) return slice.status();
      slices.push_back(*std::move(slice));
    }
    Pointers inputs;
    for (const ir::Tensor& s : in.states) inputs.push_back(&s);
    for (const ir::Tensor& s : slices) inputs.push_back(&s);
    for (const ir::Tensor* s : in.implicit) inputs.push_back(s);
    absl::StatusOr<Tensors> outputs = RunBody(body, inputs);
    if (!outputs.ok()) {
      return absl::Status(outputs.status().code(), absl::StrCat("step ", t, ": ", outputs.status().message()));
    }
    for (size_t i = 0; i < attrs.num_state; ++i) in.states[i] = std::move((*outputs)[i]);
    for (size_t k = 0; k < parts.size(); ++k) parts[k].push_back(std::move((*outputs)[attrs.num_state + k]));
  }
  absl::StatusOr<Tensors> stacked = StackScanOutputs(body, attrs, parts);
  if (!stacked.ok()) return stacked.status();
  Tensors outputs = std::move(in.states);
  for (ir::Tensor& t : *stacked) outputs.push_back(std::move(t));
  return outputs;
}

absl::StatusOr<ScanInputs> UnbatchedInputs(const KernelContext& ctx, const ops::ScanAttrs& attrs,
                                           size_t explicit_inputs) {
  ScanInputs in;
  for (size_t i = 0; i < attrs.num_state + attrs.num_scan_inputs; ++i) {
    const ir::Tensor* t = ctx.input(attrs.first_input + i);
    if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat("input ", attrs.first_input + i, " is missing"));
    (i < attrs.num_state ? in.states : in.scans).push_back(*t);
  }
  for (size_t i = explicit_inputs; i < ctx.inputs.size(); ++i) in.implicit.push_back(ctx.input(i));
  return in;
}

// Scan-8: entry b of every state and scan input, scanned alone; the outputs stacked along batch.
absl::StatusOr<Tensors> ScanBatched(const ir::Graph& body, const ops::ScanAttrs& attrs, const ScanInputs& all) {
  const ir::Tensor& first = all.states.empty() ? all.scans[0] : all.states[0];
  const int64_t batch = first.rank() > 0 ? first.shape()[0] : 0;
  std::vector<Tensors> per_output(attrs.num_state + attrs.num_scan_outputs);
  for (int64_t b = 0; b < batch; ++b) {
    ScanInputs in{{}, {}, all.implicit};
    for (const Tensors* from : {&all.states, &all.scans}) {
      for (const ir::Tensor& t : *from) {
        absl::StatusOr<ir::Tensor> entry = SliceAt(t, 0, b);
        if (!entry.ok())
          return absl::InvalidArgumentError(absl::StrCat("batch dims differ: ", entry.status().message()));
        (from == &all.states ? in.states : in.scans).push_back(*std::move(entry));
      }
    }
    absl::StatusOr<Tensors> outputs = ScanOnce(body, attrs, std::move(in));
    if (!outputs.ok()) return outputs.status();
    for (size_t i = 0; i < outputs->size(); ++i) per_output[i].push_back(std::move((*outputs)[i]));
  }
  Tensors outputs;
  for (size_t i = 0; i < per_output.size(); ++i) {
    if (per_output[i].empty()) return absl::UnimplementedError("Scan-8 with an empty batch");
    absl::StatusOr<ir::Tensor> stacked = Stack(per_output[i], 0, false, per_output[i][0].dtype(), {});
    if (!stacked.ok()) return stacked.status();
    outputs.push_back(*std::move(stacked));
  }
  return outputs;
}

// Scan-8's sequence_lens: supported when absent or every entry is the full length.
absl::Status CheckSequenceLens(const KernelContext& ctx, const ScanInputs& in) {
  const ir::Tensor* lens = ctx.input(0);
  if (lens == nullptr) return absl::OkStatus();
  const ir::Tensor& scan = in.scans[0];
  const int64_t full = scan.rank() > 1 ? scan.shape()[1] : -1;
  for (int64_t i = 0; i < lens->num_elements(); ++i) {
    if (lens->GetAsInt64(i) != full) {
      return absl::UnimplementedError("Scan-8 with sequence_lens shorter than the sequence");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunScan(KernelContext& ctx) {
  absl::StatusOr<ops::ScanAttrs> attrs = ops::ParseScanAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<const ir::Graph*> body = ops::BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = ops::NumExplicitInputs(ctx.node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  absl::StatusOr<ScanInputs> in = UnbatchedInputs(ctx, *attrs, *explicit_inputs);
  if (!in.ok()) return in.status();
  absl::StatusOr<Tensors> outputs;
  if (attrs->batched) {
    if (absl::Status lens = CheckSequenceLens(ctx, *in); !lens.ok()) return lens;
    outputs = ScanBatched(**body, *attrs, *in);
  } else {
    outputs = ScanOnce(**body, *attrs, *std::move(in));
  }
  if (!outputs.ok()) return outputs.status();
  for (size_t i = 0; i < outputs->size(); ++i) {
    if (ir::Tensor* out = ctx.output(i)) *out = std::move((*outputs)[i]);
  }
  return absl::OkStatus();
}

}  // namespace kernels::cpu
