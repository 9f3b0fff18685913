// Graph builder, random tensors and CPU comparison runs for the pass tests.
#include "tests/util/pass_test_util.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "exec/plan.h"
#include "ir/half.h"
#include "ops/infer_graph.h"
#include "runtime/cpu_executor.h"

namespace partitioner::test {

ir::Attributes Attrs(std::initializer_list<std::pair<std::string, ir::AttributeValue>> attrs) {
  ir::Attributes result;
  for (const auto& [name, value] : attrs) result.Set(name, value);
  return result;
}

ir::Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed, float lo, float hi, ir::DType dtype) {
  ir::Tensor t = *ir::Tensor::Create(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float v = dist(rng);
    switch (dtype) {
      case ir::DType::kFloat16: t.data<ir::Half>()[i] = ir::Half(v); break;
      case ir::DType::kFloat64: t.data<double>()[i] = v; break;
      default: t.data<float>()[i] = v; break;
    }
  }
  return t;
}

ir::ValueId GraphBuilder::Input(const std::string& name, std::vector<int64_t> shape, ir::DType dtype) {
  return SymbolicInput(name, ir::ShapeFromInts(shape), dtype);
}

ir::ValueId GraphBuilder::SymbolicInput(const std::string& name, ir::Shape shape, ir::DType dtype) {
  ir::ValueId id = graph_.AddValue(name, ir::TensorType{dtype, std::move(shape)});
  graph_.inputs().push_back(id);
  return id;
}

ir::ValueId GraphBuilder::Constant(const std::string& name, ir::Tensor tensor) {
  return graph_.AddConstant(name, std::move(tensor));
}

ir::ValueId GraphBuilder::Op(const std::string& name, const std::string& op_type, std::vector<ir::ValueId> inputs,
                             ir::Attributes attrs) {
  ir::Node node;
  node.name = name;
  node.op_type = op_type;
  node.opset = opset_;
  node.inputs = std::move(inputs);
  node.outputs = {graph_.AddValue(name)};
  node.attrs = std::move(attrs);
  const ir::ValueId out = node.outputs[0];
  ir::NodeId id = graph_.AddNode(std::move(node));
  if (status_.ok()) status_ = ops::InferNodeTypes(graph_, id);
  return out;
}

std::vector<ir::ValueId> GraphBuilder::OpMulti(const std::string& name, const std::string& op_type,
                                               std::vector<ir::ValueId> inputs, int num_outputs, ir::Attributes attrs) {
  ir::Node node;
  node.name = name;
  node.op_type = op_type;
  node.opset = opset_;
  node.inputs = std::move(inputs);
  for (int i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(graph_.AddValue(absl::StrCat(name, "_", i)));
  }
  node.attrs = std::move(attrs);
  const std::vector<ir::ValueId> outs = node.outputs;
  ir::NodeId id = graph_.AddNode(std::move(node));
  if (status_.ok()) status_ = ops::InferNodeTypes(graph_, id);
  return outs;
}

absl::StatusOr<ir::Graph> GraphBuilder::Build() {
  if (!status_.ok()) return status_;
  if (absl::Status s = graph_.Validate(); !s.ok()) return s;
  return graph_;
}

absl::StatusOr<std::vector<ir::Tensor>> RunOnCpu(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs) {
  absl::StatusOr<exec::Plan> plan = exec::MakeNodePerStepPlan(graph);
  if (!plan.ok()) return plan.status();
  exec::CpuExecutor executor(*plan);
  return executor.Run(inputs);
}

std::string CompareGraphs(const ir::Graph& actual, const ir::Graph& expected, const std::vector<ir::Tensor>& inputs,
                          testing_util::Tolerance tol) {
  absl::StatusOr<std::vector<ir::Tensor>> want = RunOnCpu(expected, inputs);
  if (!want.ok()) return absl::StrCat("reference run failed: ", want.status().ToString());
  absl::StatusOr<std::vector<ir::Tensor>> got = RunOnCpu(actual, inputs);
  if (!got.ok()) return absl::StrCat("run after the pass failed: ", got.status().ToString());
  if (got->size() != want->size()) return "output counts differ";
  for (size_t i = 0; i < want->size(); ++i) {
    std::string diff = testing_util::CompareTensors((*got)[i], (*want)[i], tol);
    if (!diff.empty()) return absl::StrCat("output ", i, ": ", diff);
  }
  return "";
}

std::string RunPassAndCompare(Pass& pass, ir::Graph& graph, testing_util::Tolerance tol, bool* changed) {
  const ir::Graph before = graph;
  absl::StatusOr<bool> result = pass.Run(graph);
  if (!result.ok()) return absl::StrCat("pass ", std::string(pass.name()), " failed: ", result.status().ToString());
  if (changed != nullptr) *changed = *result;
  if (absl::Status valid = graph.Validate(); !valid.ok()) return absl::StrCat("invalid graph: ", valid.ToString());
  return CompareGraphs(graph, before, RandomInputs(graph), tol);
}

std::vector<ir::Tensor> RandomInputs(const ir::Graph& graph, uint32_t seed) {
  std::vector<ir::Tensor> inputs;
  for (ir::ValueId id : graph.inputs()) {
    const ir::TensorType& type = graph.value(id).type;
    std::vector<int64_t> shape =
        type.shape ? ir::ShapeToInts(*type.shape).value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
    inputs.push_back(RandomTensor(shape, seed++, -1.0f, 1.0f, type.dtype));
  }
  return inputs;
}

std::vector<std::string> OpTypes(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes()) ops.push_back(n.op_type);
  return ops;
}

}  // namespace partitioner::test
