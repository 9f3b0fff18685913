// Precision: fp16 / bf16 conversion of constants, Casts and the graph's float32 interface.
#include "partitioner/precision.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "ops/control_flow.h"
#include "ops/infer_graph.h"

namespace partitioner {
namespace {

constexpr int64_t kOnnxFloat = static_cast<int64_t>(ir::DType::kFloat32);

// Inputs kept float32 whatever the data's type: Resize's roi and scales (ONNX types them float),
// and GridSample's grid (typed apart from X: a 16-bit grid moves samples by up to 1/2048 of the
// image, enough to pick another nearest pixel; PyTorch's autocast keeps grid_sample in float32).
bool IsFloat32Slot(const ir::Node& node, size_t i) {
  return (node.op_type == "Resize" && (i == 1 || i == 2)) || (node.op_type == "GridSample" && i == 1);
}

bool IsQuantizationOp(const std::string& op_type) {
  return op_type == "QuantizeLinear" || op_type == "DequantizeLinear" || op_type == "DynamicQuantizeLinear" ||
         op_type == "QLinearConv" || op_type == "QLinearMatMul";
}

bool IsFloat32(const ir::Value& value) { return value.type.dtype == ir::DType::kFloat32; }

int64_t OnnxType(ir::DType dtype) { return static_cast<int64_t>(dtype); }

// "__fp16" / "__bf16": the suffix of names this pass makes for values of the 16-bit type.
std::string Suffix(ir::DType half) { return half == ir::DType::kBFloat16 ? "__bf16" : "__fp16"; }

// The largest finite value of the 16-bit type.
float MaxFinite(ir::DType half_dtype) { return half_dtype == ir::DType::kBFloat16 ? 3.38953139e38f : 65504.0f; }

// Converts float32 constants; large weights on several threads (start-up time: ResNet-50 has 25M
// weights). A finite value beyond the 16-bit type's range saturates to its largest finite value
// rather than becoming an infinity: exporters write attention masks as (1 - mask) *
// finfo(float32).min, where an infinity times a kept position's 0 would give NaN (ONNX Runtime's
// float16 converter clamps likewise).
ir::Tensor ToHalf(const ir::Tensor& t, ir::DType half_dtype) {
  ir::Tensor half = *ir::Tensor::Create(half_dtype, t.shape());
  const float* src = t.data<float>();
  uint16_t* dst = half.data<uint16_t>();
  const float max_finite = MaxFinite(half_dtype);
  auto convert = [&](int64_t begin, int64_t end) {
    if (half_dtype == ir::DType::kFloat16) return ir::FloatsToHalfBitsSaturated(src + begin, dst + begin, end - begin);
    for (int64_t i = begin; i < end; ++i) {
      const float v = src[i];
      dst[i] = ir::FloatToBFloat16Bits(std::isfinite(v) ? std::clamp(v, -max_finite, max_finite) : v);
    }
  };
  const int64_t n = t.num_elements();
  const int64_t threads = n < (int64_t{1} << 20) ? 1 : std::min<int64_t>(8, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int64_t p = 1; p < threads; ++p) pool.emplace_back(convert, n * p / threads, n * (p + 1) / threads);
  convert(0, n / std::max<int64_t>(threads, 1));
  for (std::thread& th : pool) th.join();
  return half;
}

ir::Node MakeCast(const std::string& name, int opset, ir::ValueId in, ir::ValueId out, int64_t to) {
  ir::Node cast;
  cast.name = name;
  cast.op_type = "Cast";
  cast.opset = opset;
  cast.inputs = {in};
  cast.outputs = {out};
  cast.attrs.Set("to", to);
  return cast;
}

// Ops whose output dtype an attribute names (Cast's `to`, EyeLike's `dtype`, ConstantOfShape's
// `value`): float32 there becomes the 16-bit type, as every other computed float32 value does.
// Returns true when the node changed.
bool RetypeFloat32Attribute(ir::Node& node, ir::DType half) {
  if (node.op_type == "Cast" && node.attrs.GetInt("to", 0) == kOnnxFloat) {
    node.attrs.Set("to", OnnxType(half));
    return true;
  }
  if (node.op_type == "EyeLike" && node.attrs.GetInt("dtype", 0) == kOnnxFloat) {
    node.attrs.Set("dtype", OnnxType(half));
    return true;
  }
  const ir::Tensor* value = node.op_type == "ConstantOfShape" ? node.attrs.GetTensor("value") : nullptr;
  if (value != nullptr && value->dtype() == ir::DType::kFloat32) {
    node.attrs.Set("value", ToHalf(*value, half));
    return true;
  }
  return false;
}

// Every float32 constant read by a 16-bit-capable input becomes the 16-bit type: in place when
// nothing needs it as float32 (a float32-only input, the graph interface), else through a copy.
// Returns true when any constant was converted.
bool ConvertConstants(ir::Graph& graph, ir::DType half_dtype) {
  bool changed = false;
  std::vector<bool> pinned(graph.values().size(), false);
  for (ir::ValueId id : graph.outputs()) pinned[id] = true;
  for (ir::ValueId id : graph.inputs()) pinned[id] = true;
  for (const ir::Node& node : graph.nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != ir::kNoValue && IsFloat32Slot(node, i)) pinned[node.inputs[i]] = true;
    }
  }
  std::map<ir::ValueId, ir::ValueId> copies;
  const size_t num_values = graph.values().size();
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(num_values); ++id) {
    ir::Value& value = graph.value(id);
    if (!value.constant || !IsFloat32(value) || pinned[id]) continue;
    value.constant = ToHalf(*value.constant, half_dtype);
    value.type.dtype = half_dtype;
    changed = true;
  }
  for (ir::Node& node : graph.mutable_nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::ValueId in = node.inputs[i];
      if (in == ir::kNoValue || !pinned[in] || IsFloat32Slot(node, i)) continue;
      if (!graph.value(in).constant || !IsFloat32(graph.value(in))) continue;
      auto [it, inserted] = copies.try_emplace(in, ir::kNoValue);
      if (inserted) {
        const ir::Tensor half = ToHalf(*graph.value(in).constant, half_dtype);
        it->second = graph.AddConstant(absl::StrCat(graph.value(in).name, Suffix(half_dtype)), half);
      }
      node.inputs[i] = it->second;
      changed = true;
    }
  }
  return changed;
}

// True when a node reads `value` outside float32-only inputs.
bool ReadAsData(const std::vector<ir::Node>& nodes, ir::ValueId value) {
  for (const ir::Node& node : nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == value && !IsFloat32Slot(node, i)) return true;
    }
  }
  return false;
}

// Nodes reading `from` (outside float32-only inputs) read `to` instead.
void Redirect(std::vector<ir::Node>& nodes, ir::ValueId from, ir::ValueId to) {
  for (ir::Node& node : nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == from && !IsFloat32Slot(node, i)) node.inputs[i] = to;
    }
  }
}

// A value like `like` (same shape), of `dtype`.
ir::ValueId AddLike(ir::Graph& graph, ir::ValueId like, const std::string& suffix, ir::DType dtype) {
  ir::TensorType type = graph.value(like).type;
  type.dtype = dtype;
  return graph.AddValue(absl::StrCat(graph.value(like).name, suffix), std::move(type));
}

// Whether graph input `in` can itself become 16-bit (half_inputs): read, and only as data, and not
// a graph output too.
bool CanRetypeInput(const ir::Graph& graph, const std::vector<ir::Node>& nodes, ir::ValueId in) {
  for (const ir::Node& node : nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == in && IsFloat32Slot(node, i)) return false;
    }
  }
  const std::vector<ir::ValueId>& outputs = graph.outputs();
  return std::find(outputs.begin(), outputs.end(), in) == outputs.end();
}

// Returns true when the graph changed.
absl::StatusOr<bool> ConvertToHalf(ir::Graph& graph, ir::DType half_dtype, bool half_inputs) {
  bool changed = false;
  const int opset = graph.nodes().empty() ? 0 : graph.nodes()[0].opset;
  // Float32 node outputs before the conversion: these become the 16-bit type.
  std::vector<bool> computed_f32(graph.values().size(), false);
  for (const ir::Node& node : graph.nodes()) {
    for (ir::ValueId out : node.outputs) {
      if (out != ir::kNoValue && IsFloat32(graph.value(out))) computed_f32[out] = true;
    }
  }
  for (ir::Node& node : graph.mutable_nodes()) {
    if (RetypeFloat32Attribute(node, half_dtype)) changed = true;
  }
  if (ConvertConstants(graph, half_dtype)) changed = true;

  std::vector<ir::Node> body = graph.nodes();
  std::vector<ir::Node> nodes;
  for (ir::ValueId in : graph.inputs()) {
    if (!IsFloat32(graph.value(in)) || graph.value(in).constant) continue;
    if (!ReadAsData(body, in)) continue;
    if (half_inputs && CanRetypeInput(graph, body, in)) {
      graph.value(in).type.dtype = half_dtype;
      changed = true;
      continue;
    }
    const ir::ValueId half = AddLike(graph, in, Suffix(half_dtype), half_dtype);
    nodes.push_back(MakeCast(absl::StrCat(graph.value(in).name, "__to", Suffix(half_dtype).substr(1)), opset, in, half,
                             OnnxType(half_dtype)));
    Redirect(body, in, half);
    changed = true;
  }
  for (ir::Node& node : body) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::ValueId in = node.inputs[i];
      if (in == ir::kNoValue || !IsFloat32Slot(node, i)) continue;
      if (in >= static_cast<ir::ValueId>(computed_f32.size()) || !computed_f32[in]) continue;
      const ir::ValueId f32 = AddLike(graph, in, absl::StrCat("__", node.name, "_f32"), ir::DType::kFloat32);
      nodes.push_back(MakeCast(absl::StrCat(node.name, "__in", i, "_to_f32"), node.opset, in, f32, kOnnxFloat));
      node.inputs[i] = f32;
      changed = true;
    }
    nodes.push_back(std::move(node));
  }
  std::map<ir::ValueId, bool> done;
  for (ir::ValueId out : std::vector<ir::ValueId>(graph.outputs())) {
    if (!computed_f32[out] || done[out]) continue;
    done[out] = true;
    const ir::ValueId half = AddLike(graph, out, Suffix(half_dtype), half_dtype);
    for (ir::Node& node : nodes) {
      for (ir::ValueId& o : node.outputs) {
        if (o == out) o = half;
      }
      for (ir::ValueId& in : node.inputs) {
        if (in == out) in = half;
      }
    }
    nodes.push_back(MakeCast(absl::StrCat(graph.value(out).name, "__to_f32"), opset, half, out, kOnnxFloat));
    changed = true;
  }
  if (!changed) return false;
  graph.ReplaceNodes(std::move(nodes));
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace

absl::StatusOr<PrecisionMode> ParsePrecisionMode(std::string_view name) {
  if (name == "fp32") return PrecisionMode::kFp32;
  if (name == "tf32") return PrecisionMode::kTf32;
  if (name == "fp16") return PrecisionMode::kFp16;
  if (name == "bf16") return PrecisionMode::kBf16;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision '", std::string(name), "' (expected fp32, tf32, fp16 or bf16)"));
}

absl::StatusOr<Precision> Precision::Create(std::string_view precision, bool half_inputs) {
  absl::StatusOr<PrecisionMode> mode = ParsePrecisionMode(precision);
  if (!mode.ok()) return mode.status();
  return Precision(*mode, half_inputs);
}

absl::StatusOr<bool> Precision::Run(ir::Graph& graph) {
  if (mode_ != PrecisionMode::kFp16 && mode_ != PrecisionMode::kBf16) return false;
  // Control-flow bodies are typed float32 and run on the host, and sequence, optional and string
  // values live on the host; quantized ops read float32 scales (QLinearConv's and
  // DynamicQuantizeLinear's only float32) and round float32 values, and the ai.onnx.ml ops take
  // float32 or float64 only: such a graph stays float32.
  for (const ir::Node& node : graph.nodes()) {
    const bool has_body = ops::IsControlFlowOp(node.op_type) || node.op_type == "SequenceMap";
    const bool classical_ml = absl::StartsWith(node.op_type, "ai.onnx.ml.");
    if (has_body || IsQuantizationOp(node.op_type) || classical_ml) {
      kept_fp32_reason_ = absl::StrCat("node '", node.name, "' (", node.op_type, ") ",
                                       has_body       ? "has a body, which runs in float32"
                                       : classical_ml ? "is a classical-ML op: it runs on the host in float32"
                                                      : "is quantized: its scales stay float32");
      return false;
    }
  }
  for (const ir::Value& value : graph.values()) {
    if (!value.type.is_tensor() || value.type.dtype == ir::DType::kString) {
      kept_fp32_reason_ = absl::StrCat("value '", value.name, "' is ", value.type.ToString(), ", kept on the host");
      return false;
    }
  }
  return ConvertToHalf(graph, mode_ == PrecisionMode::kBf16 ? ir::DType::kBFloat16 : ir::DType::kFloat16, half_inputs_);
}

}  // namespace partitioner
