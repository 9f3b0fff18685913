// FusableActivation: the activation ops a oneDNN convolution's eltwise post-op computes the same way
// as the CPU kernels (elementwise.cc's Clip: NaN kept, bounds applied as v < lo ? lo : v > hi ? hi : v).
#include "kernels/cpu/fused_activation.h"

#include <limits>

namespace kernels::cpu {
namespace {

// Clip's bound input i: its constant value, +-infinity when absent, nullopt when computed at run time.
std::optional<float> ClipBound(const ir::Graph& graph, const ir::Node& node, size_t i, float absent) {
  if (i >= node.inputs.size() || node.inputs[i] == ir::kNoValue) return absent;
  const std::optional<ir::Tensor>& value = graph.value(node.inputs[i]).constant;
  if (!value || value->dtype() != ir::DType::kFloat32 || value->num_elements() != 1) return std::nullopt;
  return static_cast<float>(value->GetAsDouble(0));
}

}  // namespace

std::optional<FusedActivation> FusableActivation(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1) return std::nullopt;
  if (node.op_type == "Relu") return FusedActivation{FusedActivation::Kind::kRelu};
  if (node.op_type == "LeakyRelu") {
    return FusedActivation{FusedActivation::Kind::kLeakyRelu, node.attrs.GetFloat("alpha", 0.01f)};
  }
  if (node.op_type != "Clip") return std::nullopt;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::optional<float> lo = ClipBound(graph, node, 1, -kInf);
  const std::optional<float> hi = ClipBound(graph, node, 2, kInf);
  if (!lo || !hi || !(*lo <= *hi)) return std::nullopt;
  return FusedActivation{FusedActivation::Kind::kClip, *lo, *hi};
}

}  // namespace kernels::cpu
