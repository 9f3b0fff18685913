// Sequence and optional values through the Session on the CPU, for what the ONNX conformance cases
// do not cover: a sequence as a graph input and output of Run, a plain tensor given where the
// model expects a sequence, and a loop that grows a sequence past its length cap.
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

onnx::ValueInfoProto SequenceInfo(const std::string& name) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  info.mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  return info;
}

absl::StatusOr<std::unique_ptr<runtime::Session>> Create(const onnx::ModelProto& model) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  return runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
}

// s: seq(float), x: float[2] -> SequenceInsert(s, x) at the front -> t (and its length n).
onnx::ModelProto InsertModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = SequenceInfo("s");
  *g->add_input() = TensorInfo("x", {2});
  *g->add_output() = SequenceInfo("t");
  *g->add_output() = TensorInfo("n", {});
  testing_util::AddInitializer(model, "front", {}, 0);
  model.mutable_graph()->mutable_initializer(0)->set_data_type(onnx::TensorProto::INT64);
  model.mutable_graph()->mutable_initializer(0)->clear_float_data();
  model.mutable_graph()->mutable_initializer(0)->add_int64_data(0);
  *g->add_node() = MakeNode("SequenceInsert", {"s", "x", "front"}, {"t"}, "insert");
  *g->add_node() = MakeNode("SequenceLength", {"t"}, {"n"}, "length");
  return model;
}

TEST(SequenceTest, SequenceInAndOutOfRun) {
  auto session = Create(InsertModel());
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->inputs()[0].type.ToString(), "seq(float32)");
  const ir::Tensor a = ir::Tensor::FromFloats({1, 2, 3}, {3});
  const ir::Tensor x = ir::Tensor::FromFloats({7, 8}, {2});
  auto outputs = (*session)->Run({{"s", ir::Tensor::Sequence(ir::DType::kFloat32, {a})}, {"x", x}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const ir::Tensor& t = (*outputs)[0].tensor;
  ASSERT_TRUE(t.is_sequence());
  ASSERT_EQ(t.elements().size(), 2u);
  EXPECT_EQ(t.elements()[0].shape(), std::vector<int64_t>{2});
  EXPECT_EQ(t.elements()[0].data<float>()[1], 8.0f);  // x went in front of a
  EXPECT_EQ(t.elements()[1].shape(), std::vector<int64_t>{3});
  EXPECT_EQ(t.elements()[1].data<float>()[2], 3.0f);
  EXPECT_EQ((*outputs)[1].tensor.data<int64_t>()[0], 2);
}

TEST(SequenceTest, TensorWhereASequenceIsExpectedIsAnError) {
  auto session = Create(InsertModel());
  ASSERT_TRUE(session.ok()) << session.status();
  const ir::Tensor x = ir::Tensor::FromFloats({7, 8}, {2});
  auto outputs = (*session)->Run({{"s", x}, {"x", x}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_THAT(outputs.status().message(), HasSubstr("input 's' is float32[2], the model expects seq(float32)"));
}

// Loop(2^20 trips) appending one element per iteration to a sequence.
onnx::ModelProto GrowingLoopModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_output() = TensorInfo("n", {});
  testing_util::AddInitializer(model, "e", {1}, 1.0f);
  onnx::TensorProto* trips = g->add_initializer();
  trips->set_name("m");
  trips->set_data_type(onnx::TensorProto::INT64);
  trips->add_int64_data(int64_t{1} << 20);
  onnx::GraphProto body;
  body.set_name("grow");
  *body.add_input() = TensorInfo("i", {});
  body.mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  *body.add_input() = TensorInfo("c", {});
  body.mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  *body.add_input() = SequenceInfo("s");
  *body.add_output() = TensorInfo("co", {});
  body.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  *body.add_output() = SequenceInfo("so");
  *body.add_node() = MakeNode("Identity", {"c"}, {"co"}, "keep_going");
  *body.add_node() = MakeNode("SequenceInsert", {"s", "e"}, {"so"}, "append");
  *g->add_node() = MakeNode("SequenceEmpty", {}, {"s0"}, "empty");
  onnx::NodeProto loop = MakeNode("Loop", {"m", "", "s0"}, {"s"}, "loop");
  onnx::AttributeProto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = body;
  *g->add_node() = loop;
  *g->add_node() = MakeNode("SequenceLength", {"s"}, {"n"}, "length");
  return model;
}

TEST(SequenceTest, LoopGrowingASequenceStopsAtTheCap) {
  auto session = Create(GrowingLoopModel());
  ASSERT_TRUE(session.ok()) << session.status();
  auto outputs = (*session)->Run({});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted) << outputs.status();
  EXPECT_THAT(outputs.status().message(), HasSubstr("a sequence of 4097 elements is past the limit of 4096"));
}

}  // namespace
