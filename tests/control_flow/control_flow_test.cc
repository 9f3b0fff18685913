// Control flow through the Session on the CPU, for what the ONNX conformance cases do not cover:
// bodies reading values of the enclosing graphs (also two levels up), a huge trip count failing
// fast, nesting past the import limit, malformed bodies giving errors rather than crashes, and an
// If branch that cannot run with the outer shapes failing only when taken.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"
#include "runtime/session.h"
#include "tests/util/onnx_builder.h"

namespace {

using ::testing::HasSubstr;
using testing_util::MakeNode;
using testing_util::TensorInfo;

void SetGraphAttr(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = graph;
}

absl::StatusOr<std::unique_ptr<runtime::Session>> Create(const onnx::ModelProto& model) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  return runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
}

ir::Tensor Floats(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return ir::Tensor::FromFloats(std::move(values), {n});
}

ir::Tensor Bool(bool value) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kBool, {});
  t.data<bool>()[0] = value;
  return t;
}

// A body with no inputs computing out = Add(a, b) from values of enclosing graphs.
onnx::GraphProto AddBody(const std::string& a, const std::string& b, const std::string& out) {
  onnx::GraphProto body;
  body.set_name("add_body");
  *body.add_node() = MakeNode("Add", {a, b}, {out}, "body_add");
  *body.add_output() = TensorInfo(out, {3});
  return body;
}

// If(cond) { x + y } else { x - y }, x computed in the main graph from the input.
onnx::ModelProto IfModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("cond", {}, onnx::TensorProto::BOOL);
  *g->add_input() = TensorInfo("in", {3});
  *g->add_input() = TensorInfo("y", {3});
  *g->add_output() = TensorInfo("out", {3});
  onnx::NodeProto if_node = MakeNode("If", {"cond"}, {"out"}, "if");
  SetGraphAttr(if_node, "then_branch", AddBody("x", "y", "then_out"));
  onnx::GraphProto else_branch;
  *else_branch.add_node() = MakeNode("Sub", {"x", "y"}, {"else_out"}, "body_sub");
  *else_branch.add_output() = TensorInfo("else_out", {3});
  SetGraphAttr(if_node, "else_branch", else_branch);
  *g->add_node() = if_node;  // before the producer of x: the importer orders by what bodies read
  *g->add_node() = MakeNode("Relu", {"in"}, {"x"}, "relu");
  return model;
}

std::vector<float> Values(const ir::Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + 3); }

TEST(ControlFlowTest, IfBranchesReadOuterValues) {
  auto session = Create(IfModel());
  ASSERT_TRUE(session.ok()) << session.status();
  for (bool cond : {true, false}) {
    auto out = (*session)->Run({{"cond", Bool(cond)}, {"in", Floats({1, -2, 3})}, {"y", Floats({10, 20, 30})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values((*out)[0].tensor), cond ? std::vector<float>({11, 20, 33}) : std::vector<float>({-9, -20, -27}));
  }
}

// Loop(M, "") carrying s: s = s + x, where x is read two levels up (main graph -> Loop -> If).
onnx::ModelProto NestedLoopModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("m", {}, onnx::TensorProto::INT64);
  *g->add_input() = TensorInfo("x", {3});
  *g->add_input() = TensorInfo("s0", {3});
  *g->add_output() = TensorInfo("s_final", {3});
  onnx::GraphProto body;
  *body.add_input() = TensorInfo("i", {}, onnx::TensorProto::INT64);
  *body.add_input() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  *body.add_input() = TensorInfo("s", {3});
  onnx::NodeProto inner_if = MakeNode("If", {"c"}, {"s_next"}, "inner_if");
  SetGraphAttr(inner_if, "then_branch", AddBody("s", "x", "then_s"));
  SetGraphAttr(inner_if, "else_branch", AddBody("s", "s", "else_s"));
  *body.add_node() = inner_if;
  *body.add_output() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  *body.add_output() = TensorInfo("s_next", {3});
  onnx::NodeProto loop = MakeNode("Loop", {"m", "", "s0"}, {"s_final"}, "loop");
  SetGraphAttr(loop, "body", body);
  *g->add_node() = loop;
  return model;
}

ir::Tensor Int64(int64_t value) { return *ir::Tensor::FromInt64s({value}).Reshaped({}); }

TEST(ControlFlowTest, LoopBodyReadsValueTwoLevelsUp) {
  auto session = Create(NestedLoopModel());
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"m", Int64(4)}, {"x", Floats({1, 2, 3})}, {"s0", Floats({0, 0, 1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0].tensor), std::vector<float>({4, 8, 13}));
}

TEST(ControlFlowTest, HugeTripCountFailsFast) {
  auto session = Create(NestedLoopModel());
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"m", Int64(int64_t{1} << 62)}, {"x", Floats({1, 2, 3})}, {"s0", Floats({0, 0, 1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("more than the limit"));
}

// Scan-9 over axis 1 of x[2,3], the input read last to first, the scan output stacked on axis 1
// last to first: state s = s + column.
onnx::ModelProto ReversedScanModel() {
  onnx::ModelProto model = testing_util::MakeModel(11);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("s0", {2});
  *g->add_input() = TensorInfo("x", {2, 3});
  *g->add_output() = TensorInfo("s_final", {2});
  *g->add_output() = TensorInfo("columns", {2, 3});
  onnx::GraphProto body;
  *body.add_input() = TensorInfo("s", {2});
  *body.add_input() = TensorInfo("column", {2});
  *body.add_node() = MakeNode("Add", {"s", "column"}, {"s_next"}, "add");
  *body.add_node() = MakeNode("Identity", {"s_next"}, {"scan_out"}, "copy");
  *body.add_output() = TensorInfo("s_next", {2});
  *body.add_output() = TensorInfo("scan_out", {2});
  onnx::NodeProto scan = MakeNode("Scan", {"s0", "x"}, {"s_final", "columns"}, "scan");
  SetGraphAttr(scan, "body", body);
  testing_util::SetIntAttr(scan, "num_scan_inputs", 1);
  testing_util::SetIntsAttr(scan, "scan_input_axes", {1});
  testing_util::SetIntsAttr(scan, "scan_input_directions", {1});
  testing_util::SetIntsAttr(scan, "scan_output_axes", {-1});
  testing_util::SetIntsAttr(scan, "scan_output_directions", {1});
  *g->add_node() = scan;
  return model;
}

TEST(ControlFlowTest, ScanAxesAndDirections) {
  auto session = Create(ReversedScanModel());
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"s0", Floats({0, 0})}, {"x", ir::Tensor::FromFloats({1, 2, 3, 10, 20, 30}, {2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  const ir::Tensor& state = (*out)[0].tensor;
  EXPECT_EQ(std::vector<float>(state.data<float>(), state.data<float>() + 2), std::vector<float>({6, 60}));
  const ir::Tensor& columns = (*out)[1].tensor;
  ASSERT_EQ(columns.shape(), std::vector<int64_t>({2, 3}));
  // Steps add columns 2, 1, 0: states [3,30], [5,50], [6,60], stored last step first.
  EXPECT_EQ(std::vector<float>(columns.data<float>(), columns.data<float>() + 6),
            std::vector<float>({6, 5, 3, 60, 50, 30}));
}

TEST(ControlFlowTest, LoopOfZeroIterationsGivesAnEmptyScanOutput) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("m", {}, onnx::TensorProto::INT64);
  *g->add_input() = TensorInfo("x", {3});
  *g->add_output() = TensorInfo("x_final", {3});
  *g->add_output() = TensorInfo("stacked", {-1, 3});
  onnx::GraphProto body;
  *body.add_input() = TensorInfo("i", {}, onnx::TensorProto::INT64);
  *body.add_input() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  *body.add_input() = TensorInfo("v", {3});
  *body.add_node() = MakeNode("Identity", {"c"}, {"c_out"}, "c_copy");
  *body.add_node() = MakeNode("Identity", {"v"}, {"v_out"}, "v_copy");
  *body.add_node() = MakeNode("Identity", {"v"}, {"v_scan"}, "v_scan");
  *body.add_output() = TensorInfo("c_out", {}, onnx::TensorProto::BOOL);
  *body.add_output() = TensorInfo("v_out", {3});
  *body.add_output() = TensorInfo("v_scan", {3});
  onnx::NodeProto loop = MakeNode("Loop", {"m", "", "x"}, {"x_final", "stacked"}, "loop");
  SetGraphAttr(loop, "body", body);
  *g->add_node() = loop;
  auto session = Create(model);
  ASSERT_TRUE(session.ok()) << session.status();
  for (int64_t m : {0, 2}) {
    auto out = (*session)->Run({{"m", Int64(m)}, {"x", Floats({1, 2, 3})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values((*out)[0].tensor), std::vector<float>({1, 2, 3}));
    EXPECT_EQ((*out)[1].tensor.shape(), std::vector<int64_t>({m, 3}));
  }
}

// `depth` Ifs, each in the then_branch of the one above; the innermost returns x.
onnx::GraphProto NestedIfs(int depth) {
  onnx::GraphProto graph;
  if (depth == 0) {
    *graph.add_node() = MakeNode("Identity", {"x"}, {"leaf"}, "leaf");
    *graph.add_output() = TensorInfo("leaf", {3});
    return graph;
  }
  const std::string out = "out" + std::to_string(depth);
  onnx::NodeProto node = MakeNode("If", {"cond"}, {out}, "if" + std::to_string(depth));
  SetGraphAttr(node, "then_branch", NestedIfs(depth - 1));
  SetGraphAttr(node, "else_branch", NestedIfs(0));
  *graph.add_node() = node;
  *graph.add_output() = TensorInfo(out, {3});
  return graph;
}

onnx::ModelProto NestedIfModel(int depth) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  onnx::GraphProto body = NestedIfs(depth);
  auto* g = model.mutable_graph();
  *g = body;
  *g->add_input() = TensorInfo("cond", {}, onnx::TensorProto::BOOL);
  *g->add_input() = TensorInfo("x", {3});
  return model;
}

TEST(ControlFlowTest, NestingWithinTheLimitRuns) {
  auto session = Create(NestedIfModel(5));
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"cond", Bool(true)}, {"x", Floats({1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0].tensor), std::vector<float>({1, 2, 3}));
}

TEST(ControlFlowTest, DeepNestingIsAnImportError) {
  auto session = Create(NestedIfModel(15));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(session.status().message(), HasSubstr("nest deeper than the limit"));
}

TEST(ControlFlowTest, BodyOutputNeverProducedIsAnError) {
  onnx::ModelProto model = IfModel();
  auto* then_branch = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  *then_branch->add_output() = TensorInfo("missing", {3});
  auto session = Create(model);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("reads 'missing', which nothing produces"));
}

TEST(ControlFlowTest, BodyReadingAnUndefinedNameIsAnError) {
  onnx::ModelProto model = IfModel();
  auto* then_branch = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  then_branch->mutable_node(0)->set_input(1, "nowhere");
  auto session = Create(model);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("'nowhere'"));
}

TEST(ControlFlowTest, LoopBodyWithWrongInputCountIsAnError) {
  onnx::ModelProto model = NestedLoopModel();
  auto* body = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  *body->add_input() = TensorInfo("extra", {3});
  auto session = Create(model);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("(Loop): its body has 4 inputs"));
}

// A float tensor of unknown shape.
onnx::ValueInfoProto Unshaped(const std::string& name) {
  onnx::ValueInfoProto info = TensorInfo(name, {});
  info.mutable_type()->mutable_tensor_type()->clear_shape();
  return info;
}

// A Loop running once (trip count m) whose body reads x from the enclosing graphs and yields
// Split(x, num_outputs=4)'s first part as its scan output.
onnx::GraphProto SplitLoopBody() {
  onnx::GraphProto body;
  *body.add_input() = TensorInfo("i", {}, onnx::TensorProto::INT64);
  *body.add_input() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  onnx::NodeProto split = MakeNode("Split", {"x"}, {"p0", "p1", "p2", "p3"}, "split");
  testing_util::SetIntAttr(split, "num_outputs", 4);
  *body.add_node() = split;
  *body.add_node() = MakeNode("Identity", {"c"}, {"c_out"}, "c_copy");
  *body.add_output() = TensorInfo("c_out", {}, onnx::TensorProto::BOOL);
  *body.add_output() = TensorInfo("p0", {-1});
  return body;
}

// If(cond) { Split(x, num_outputs=4)'s first part } else { x }, x float[5]: five values do not
// split into four parts (ONNX's rule: parts of ceil(5 / 4) = 2, the last -1), so the then branch
// cannot run with x's declared shape. With `in_loop`, the Split is in a Loop body inside the
// branch, reading x two levels up.
onnx::ModelProto UnsplittableBranchModel(bool in_loop) {
  onnx::ModelProto model = testing_util::MakeModel(18);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("cond", {}, onnx::TensorProto::BOOL);
  *g->add_input() = TensorInfo("m", {}, onnx::TensorProto::INT64);
  *g->add_input() = TensorInfo("x", {5});
  *g->add_output() = Unshaped("out");
  onnx::GraphProto then_branch;
  if (in_loop) {
    onnx::NodeProto loop = MakeNode("Loop", {"m", ""}, {"then_out"}, "loop");
    SetGraphAttr(loop, "body", SplitLoopBody());
    *then_branch.add_node() = loop;
  } else {
    onnx::NodeProto split = MakeNode("Split", {"x"}, {"then_out", "q1", "q2", "q3"}, "split");
    testing_util::SetIntAttr(split, "num_outputs", 4);
    *then_branch.add_node() = split;
  }
  *then_branch.add_output() = Unshaped("then_out");
  onnx::GraphProto else_branch;
  *else_branch.add_node() = MakeNode("Identity", {"x"}, {"else_out"}, "copy");
  *else_branch.add_output() = TensorInfo("else_out", {5});
  onnx::NodeProto if_node = MakeNode("If", {"cond"}, {"out"}, "if");
  SetGraphAttr(if_node, "then_branch", then_branch);
  SetGraphAttr(if_node, "else_branch", else_branch);
  *g->add_node() = if_node;
  return model;
}

// A branch is checked against the outer shapes when it runs, not at Create: the model loads, the
// other branch runs, and taking this one fails naming its node.
TEST(ControlFlowTest, BranchThatCannotRunWithTheOuterShapesFailsOnlyWhenTaken) {
  for (bool in_loop : {false, true}) {
    SCOPED_TRACE(in_loop ? "Split in a Loop body" : "Split in the branch");
    auto session = Create(UnsplittableBranchModel(in_loop));
    ASSERT_TRUE(session.ok()) << session.status();
    const ir::Tensor x = Floats({1, 2, 3, 4, 5});
    auto out = (*session)->Run({{"cond", Bool(false)}, {"m", Int64(1)}, {"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const ir::Tensor& y = (*out)[0].tensor;
    EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 5), std::vector<float>({1, 2, 3, 4, 5}));
    out = (*session)->Run({{"cond", Bool(true)}, {"m", Int64(1)}, {"x", x}});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("node 'split' (Split): cannot split axis of size 5 into 4 parts"));
  }
}

// A Loop body runs whenever its node does: one that cannot run with the outer shapes fails Create.
TEST(ControlFlowTest, LoopBodyThatCannotRunWithTheOuterShapesIsAnImportError) {
  onnx::ModelProto model = testing_util::MakeModel(18);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("m", {}, onnx::TensorProto::INT64);
  *g->add_input() = TensorInfo("x", {5});
  *g->add_output() = Unshaped("parts");
  onnx::NodeProto loop = MakeNode("Loop", {"m", ""}, {"parts"}, "loop");
  SetGraphAttr(loop, "body", SplitLoopBody());
  *g->add_node() = loop;
  auto session = Create(model);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("cannot split axis of size 5 into 4 parts"));
}

TEST(ControlFlowTest, MissingBranchIsAnError) {
  onnx::ModelProto model = IfModel();
  model.mutable_graph()->mutable_node(0)->mutable_attribute()->RemoveLast();
  auto session = Create(model);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("else_branch"));
}

}  // namespace
