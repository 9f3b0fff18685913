// The CPU executor's channels-last values and Conv + activation folding (cpu_layout.h,
// cpu_fusion.h): a float32 graph whose convolutions run channels-last on oneDNN — a residual Add of
// a channels-last and an NCHW value, a per-channel Mul, a Clip and a Relu folded into their Convs,
// a SiLU (Sigmoid + Mul) folded as swish, a Conv output read twice (not folded), a GlobalAveragePool reading a
// channels-last value, graph outputs in both layouts — against the same graph in float64, which runs none of that
// (im2col Convs, every value NCHW, nothing folded). Every output element and every value the observer sees is compared.
// Transposes between NHWC and NCHW dims as views (models/nhwc_input_cnn runs them against ORT).
#include "runtime/cpu_layout.h"

#include <cmath>
#include <map>
#include <random>

#include "gtest/gtest.h"
#include "runtime/cpu_executor.h"
#include "runtime/cpu_fusion.h"

namespace exec {
namespace {

class GraphBuilder {
 public:
  explicit GraphBuilder(ir::DType dtype) : dtype_(dtype) {}

  ir::ValueId Input(const std::string& name) {
    const ir::ValueId id = graph_.AddValue(name, {dtype_, {}});
    graph_.inputs().push_back(id);
    return id;
  }
  // A constant of normal random values (the same stream for both dtypes).
  ir::ValueId Constant(const std::string& name, std::vector<int64_t> dims, std::mt19937& rng, double scale = 0.3) {
    ir::Tensor t = *ir::Tensor::Create(dtype_, dims);
    std::normal_distribution<double> normal(0.0, scale);
    for (int64_t i = 0; i < t.num_elements(); ++i) Store(t, i, static_cast<float>(normal(rng)));
    return ConstantOf(name, t);
  }
  ir::ValueId Scalar(const std::string& name, double value) {
    ir::Tensor t = *ir::Tensor::Create(dtype_, {});
    Store(t, 0, value);
    return ConstantOf(name, t);
  }
  ir::ValueId Node(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
    ir::Node node;
    node.name = op + std::to_string(graph_.nodes().size());
    node.op_type = op;
    node.opset = 17;
    node.inputs = std::move(inputs);
    node.attrs = std::move(attrs);
    const ir::ValueId out = graph_.AddValue(node.name + "_out", {dtype_, {}});
    node.outputs = {out};
    graph_.AddNode(std::move(node));
    return out;
  }
  ir::Graph& graph() { return graph_; }

 private:
  void Store(ir::Tensor& t, int64_t i, double v) {
    if (dtype_ == ir::DType::kFloat32) t.data<float>()[i] = static_cast<float>(v);
    if (dtype_ == ir::DType::kFloat64) t.data<double>()[i] = v;
  }
  ir::ValueId ConstantOf(const std::string& name, const ir::Tensor& t) {
    const ir::ValueId id = graph_.AddValue(name, {dtype_, {}});
    graph_.value(id).constant = t;
    return id;
  }
  ir::DType dtype_;
  ir::Graph graph_;
};

ir::Attributes ConvAttrs(int64_t k, int64_t stride) {
  ir::Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{k, k});
  a.Set("strides", std::vector<int64_t>{stride, stride});
  a.Set("pads", std::vector<int64_t>(4, k / 2));
  return a;
}

// The graph of the file comment; outputs: the Conv + Relu + Add block's sum, the pooled Clip.
ir::Graph TestGraph(ir::DType dtype) {
  std::mt19937 rng(5);
  GraphBuilder b(dtype);
  const ir::ValueId x = b.Input("x");  // [2, 8, 10, 10]
  const ir::ValueId c1 =
      b.Node("Conv", {x, b.Constant("w1", {8, 8, 3, 3}, rng), b.Constant("b1", {8}, rng)}, ConvAttrs(3, 1));
  const ir::ValueId r1 = b.Node("Relu", {c1});  // folded
  const ir::ValueId c2 = b.Node("Conv", {r1, b.Constant("w2", {8, 8, 1, 1}, rng)}, ConvAttrs(1, 1));
  const ir::ValueId sum = b.Node("Add", {c2, x});  // NHWC + NCHW
  const ir::ValueId c3 = b.Node("Conv", {sum, b.Constant("w3", {8, 8, 3, 3}, rng)}, ConvAttrs(3, 2));
  const ir::ValueId scaled = b.Node("Mul", {c3, b.Constant("s", {1, 8, 1, 1}, rng, 1.0)});  // NHWC view
  const ir::ValueId c4 = b.Node("Conv", {scaled, b.Constant("w4", {8, 8, 1, 1}, rng)}, ConvAttrs(1, 1));
  const ir::ValueId clipped = b.Node("Clip", {c4, b.Scalar("lo", -0.5), b.Scalar("hi", 0.5)});  // folded
  const ir::ValueId c5 = b.Node("Conv", {clipped, b.Constant("w5", {8, 8, 1, 1}, rng)}, ConvAttrs(1, 1));
  const ir::ValueId r5 = b.Node("Relu", {c5});  // c5 read twice: kept
  const ir::ValueId out = b.Node("Add", {r5, c5});
  const ir::ValueId pooled = b.Node("GlobalAveragePool", {clipped});
  const ir::ValueId c6 = b.Node("Conv", {out, b.Constant("w6", {8, 8, 3, 3}, rng)}, ConvAttrs(3, 1));
  const ir::ValueId silu = b.Node("Mul", {b.Node("Sigmoid", {c6}), c6});  // folded as swish
  b.graph().outputs() = {out, pooled, silu};
  return std::move(b.graph());
}

// The node-per-step plan with each Conv merged into the step of the node after it when only that
// node reads it (as the partitioner's FusedGraph steps do), so that folding may apply.
Plan MergedPlan(ir::Graph graph) {
  Plan plan = *MakeNodePerStepPlan(std::move(graph));
  std::vector<Step> merged;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    Step step = plan.steps[s];
    const ir::Node& node = plan.graph.node(step.nodes[0]);
    if (node.op_type == "Conv" && s + 1 < plan.steps.size()) {
      const Step& next = plan.steps[s + 1];
      int readers = 0;
      for (const ir::Node& n : plan.graph.nodes()) {
        for (ir::ValueId in : n.inputs) readers += in == node.outputs[0];
      }
      if (readers == 1 && plan.graph.node(next.nodes[0]).inputs[0] == node.outputs[0]) {
        step.nodes.push_back(next.nodes[0]);
        step.outputs = next.outputs;
        for (ir::ValueId in : next.inputs) {
          if (in != node.outputs[0]) step.inputs.push_back(in);
        }
        ++s;
      } else if (readers == 2 && s + 2 < plan.steps.size() &&
                 plan.graph.node(next.nodes[0]).op_type == "Sigmoid") {  // SiLU: Conv, Sigmoid, Mul
        step.nodes.push_back(next.nodes[0]);
        step.nodes.push_back(plan.steps[s + 2].nodes[0]);
        step.outputs = plan.steps[s + 2].outputs;
        s += 2;
      }
    }
    merged.push_back(step);
  }
  plan.steps = merged;
  ComputeReleases(plan);
  return plan;
}

ir::Tensor Input(ir::DType dtype) {
  std::mt19937 rng(9);
  std::normal_distribution<double> normal;
  ir::Tensor x = *ir::Tensor::Create(dtype, {2, 8, 10, 10});
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double v = static_cast<float>(normal(rng));
    if (dtype == ir::DType::kFloat32) x.data<float>()[i] = static_cast<float>(v);
    if (dtype == ir::DType::kFloat64) x.data<double>()[i] = v;
  }
  return x;
}

double At(const ir::Tensor& t, int64_t i) {
  return t.dtype() == ir::DType::kFloat32 ? t.data<float>()[i] : t.data<double>()[i];
}

void ExpectClose(const ir::Tensor& got, const ir::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_NEAR(At(got, i), At(want, i), 1e-4 * (1 + std::abs(At(want, i)))) << what << " element " << i;
  }
}

TEST(CpuLayoutTest, ChannelsLastRunMatchesTheFloat64Run) {
  const Plan plan32 = MergedPlan(TestGraph(ir::DType::kFloat32));
  const Plan plan64 = MergedPlan(TestGraph(ir::DType::kFloat64));
  // Conv1+Relu, Conv4+Clip and Conv6+Sigmoid+Mul fold; Conv5's output has two readers.
  const std::vector<std::optional<ConvActivation>> fused = PlanConvActivations(plan32);
  int folded = 0;
  for (const auto& f : fused) folded += f.has_value();
  EXPECT_EQ(folded, 3);

  std::map<ir::ValueId, ir::Tensor> seen32, seen64;
  auto record = [](std::map<ir::ValueId, ir::Tensor>& seen) {
    return [&seen](size_t, ir::ValueId id, const ir::Tensor& t) { seen[id] = t.Clone(); };
  };
  const CpuExecutor executor32(plan32), executor64(plan64);
  for (int run = 0; run < 2; ++run) {  // the second run uses the kept (repacked) weights
    absl::StatusOr<std::vector<ir::Tensor>> got = executor32.Run({Input(ir::DType::kFloat32)}, nullptr, record(seen32));
    absl::StatusOr<std::vector<ir::Tensor>> want =
        executor64.Run({Input(ir::DType::kFloat64)}, nullptr, record(seen64));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->size(), 3u);
    for (size_t i = 0; i < got->size(); ++i) ExpectClose((*got)[i], (*want)[i], "output " + std::to_string(i));
  }
  ASSERT_EQ(seen32.size(), seen64.size());
  for (const auto& [id, tensor] : seen64) {
    ASSERT_TRUE(seen32.count(id)) << plan64.graph.value(id).name;
    ExpectClose(seen32.at(id), tensor, "observed " + plan64.graph.value(id).name);
  }
}

TEST(CpuLayoutTest, ElementwiseOperandsMustReadTheSameInNhwc) {
  ir::Node add;
  add.op_type = "Add";
  add.outputs = {0};
  ir::Tensor full = *ir::Tensor::Create(ir::DType::kFloat32, {1, 8, 4, 4});
  ir::Tensor per_channel = *ir::Tensor::Create(ir::DType::kFloat32, {8, 1, 1});
  ir::Tensor per_pixel = *ir::Tensor::Create(ir::DType::kFloat32, {1, 1, 4, 4});
  ir::Tensor per_channel_row = *ir::Tensor::Create(ir::DType::kFloat32, {8, 4, 1});
  EXPECT_EQ(ChooseLayoutUse(add, {&full, &full}, 0b11), LayoutUse::kNhwcView);
  EXPECT_EQ(ChooseLayoutUse(add, {&full, &full}, 0b01), LayoutUse::kNchwCopies);
  EXPECT_EQ(ChooseLayoutUse(add, {&full, &per_channel}, 0b01), LayoutUse::kNhwcView);
  EXPECT_EQ(ChooseLayoutUse(add, {&full, &per_pixel}, 0b01), LayoutUse::kNhwcView);
  EXPECT_EQ(ChooseLayoutUse(add, {&full, &per_channel_row}, 0b01), LayoutUse::kNchwCopies);
  ir::Node reshape = add;
  reshape.op_type = "Reshape";
  EXPECT_EQ(ChooseLayoutUse(reshape, {&full, &per_channel}, 0b01), LayoutUse::kNchwCopies);
  ir::Node pool = add;
  pool.op_type = "GlobalAveragePool";
  EXPECT_EQ(ChooseLayoutUse(pool, {&full}, 0b1), LayoutUse::kReadsInput);
  EXPECT_EQ(ToNhwcDims({8, 1, 1}), (std::vector<int64_t>{1, 1, 1, 8}));
  EXPECT_EQ(ToNchwDims({2, 5, 6, 3}), (std::vector<int64_t>{2, 3, 5, 6}));
}

// TransposeAsView: the two Transposes whose output is its input's bytes (same data pointer, dims
// permuted, the channels-last mark moved), and the ones it must leave to the kernel.
TEST(CpuLayoutTest, TransposesBetweenNhwcAndNchwAreViews) {
  ir::Graph graph;
  const ir::ValueId in = graph.AddValue("in", {ir::DType::kFloat32, {}});
  const ir::ValueId out = graph.AddValue("out", {ir::DType::kFloat32, {}});
  ir::Node transpose;
  transpose.op_type = "Transpose";
  transpose.inputs = {in};
  transpose.outputs = {out};
  const ir::Tensor nhwc_dims = *ir::Tensor::Create(ir::DType::kFloat32, {2, 5, 6, 3});
  transpose.attrs.Set("perm", std::vector<int64_t>{0, 3, 1, 2});
  EXPECT_FALSE(TransposeAsView(graph, transpose, nhwc_dims, false));  // the plan stores its output logical
  graph.value(out).layout = "NHWC";
  std::optional<TransposeView> to_nchw = TransposeAsView(graph, transpose, nhwc_dims, false);
  ASSERT_TRUE(to_nchw);
  EXPECT_TRUE(to_nchw->channels_last);
  EXPECT_EQ(to_nchw->tensor.shape(), (std::vector<int64_t>{2, 3, 5, 6}));
  EXPECT_EQ(to_nchw->tensor.raw_data(), nhwc_dims.raw_data());
  EXPECT_FALSE(TransposeAsView(graph, transpose, nhwc_dims, true));  // a channels-last input: not its bytes
  const ir::Tensor half = *ir::Tensor::Create(ir::DType::kFloat16, {2, 5, 6, 3});
  EXPECT_FALSE(TransposeAsView(graph, transpose, half, false));  // the CPU convs take float32 only

  graph.value(out).layout = "";
  transpose.attrs.Set("perm", std::vector<int64_t>{0, 2, 3, 1});
  const ir::Tensor channels_last = *ir::Tensor::Create(ir::DType::kFloat32, {2, 3, 5, 6});
  std::optional<TransposeView> to_nhwc = TransposeAsView(graph, transpose, channels_last, true);
  ASSERT_TRUE(to_nhwc);
  EXPECT_FALSE(to_nhwc->channels_last);
  EXPECT_EQ(to_nhwc->tensor.shape(), (std::vector<int64_t>{2, 5, 6, 3}));
  EXPECT_EQ(to_nhwc->tensor.raw_data(), channels_last.raw_data());
  EXPECT_FALSE(TransposeAsView(graph, transpose, channels_last, false));
  transpose.attrs.Set("perm", std::vector<int64_t>{0, 3, 2, 1});
  EXPECT_FALSE(TransposeAsView(graph, transpose, channels_last, true));
}

}  // namespace
}  // namespace exec
