// ChooseLayoutUse: the elementwise rule (every operand a channels-last value of one set of dims or
// a broadcast operand whose NHWC view has the same bytes) and the Conv rule; TransposeAsView.
#include "runtime/cpu_layout.h"

#include "kernels/cpu/kernel_traits.h"
#include "ops/infer_util.h"

namespace exec {
namespace {

std::vector<int64_t> PaddedTo4(const std::vector<int64_t>& dims) {
  std::vector<int64_t> padded(4 - dims.size(), 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  return padded;
}

// A non-channels-last operand broadcast against `full` (rank 4) whose bytes read the same in NCHW
// and NHWC order: dims of rank <= 4, each 1 or full's, and not both C and a spatial dim above 1.
bool BroadcastsUnchanged(const ir::Tensor& t, const std::vector<int64_t>& full) {
  if (t.rank() > 4) return false;
  const std::vector<int64_t> dims = PaddedTo4(t.shape());
  for (size_t i = 0; i < 4; ++i) {
    if (dims[i] != 1 && dims[i] != full[i]) return false;
  }
  return dims[1] == 1 || (dims[2] == 1 && dims[3] == 1);
}

bool FitsNhwcView(const std::vector<const ir::Tensor*>& inputs, uint32_t channels_last) {
  const std::vector<int64_t>* full = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if ((channels_last >> i & 1) != 0 && full == nullptr) full = &inputs[i]->shape();
  }
  if (full == nullptr) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Tensor* t = inputs[i];
    if (t == nullptr) continue;
    if (!t->is_dense()) return false;
    const bool fits = (channels_last >> i & 1) != 0 ? t->shape() == *full : BroadcastsUnchanged(*t, *full);
    if (!fits) return false;
  }
  return true;
}

}  // namespace

LayoutUse ChooseLayoutUse(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs, uint32_t channels_last) {
  if (node.op_type == "Conv" && (channels_last & ~uint32_t{1}) == 0 && !inputs.empty() && inputs[0] != nullptr &&
      inputs[0]->dtype() == ir::DType::kFloat32 && inputs[0]->rank() == 4) {
    return LayoutUse::kConv;
  }
  if (node.op_type == "GlobalAveragePool" && channels_last == 1) return LayoutUse::kReadsInput;
  if (channels_last != 0 && kernels::cpu::IsElementwise(node.op_type) && node.outputs.size() == 1 &&
      FitsNhwcView(inputs, channels_last)) {
    return LayoutUse::kNhwcView;
  }
  return LayoutUse::kNchwCopies;
}

std::optional<TransposeView> TransposeAsView(const ir::Graph& graph, const ir::Node& node, const ir::Tensor& input,
                                             bool input_channels_last) {
  if (node.op_type != "Transpose" || input.rank() != 4 || !input.is_dense()) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> perm = ops::ResolvePermutation(node.attrs, 4);
  if (!perm.ok()) return std::nullopt;
  const std::vector<int64_t>& d = input.shape();
  if (input_channels_last && *perm == std::vector<int64_t>{0, 2, 3, 1}) {
    absl::StatusOr<ir::Tensor> view = input.Reshaped({d[0], d[2], d[3], d[1]});
    if (view.ok()) return TransposeView{*std::move(view), false};
  }
  const bool stored_nhwc = node.outputs[0] != ir::kNoValue && graph.value(node.outputs[0]).layout == "NHWC";
  if (!input_channels_last && stored_nhwc && input.dtype() == ir::DType::kFloat32 &&
      *perm == std::vector<int64_t>{0, 3, 1, 2}) {
    absl::StatusOr<ir::Tensor> view = input.Reshaped({d[0], d[3], d[1], d[2]});
    if (view.ok()) return TransposeView{*std::move(view), true};
  }
  return std::nullopt;
}

std::vector<int64_t> ToNhwcDims(const std::vector<int64_t>& nchw) {
  const std::vector<int64_t> d = PaddedTo4(nchw);
  return {d[0], d[2], d[3], d[1]};
}

std::vector<int64_t> ToNchwDims(const std::vector<int64_t>& nhwc) { return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]}; }

}  // namespace exec
