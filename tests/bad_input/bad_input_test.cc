// Bad input never crashes: each malformed model or bad Run call gives a Status with a clear message.
#include <filesystem>
#include <fstream>
#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "runtime/session.h"
#include "tests/util/onnx_builder.h"

namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using testing_util::MakeNode;

// x[2,3] -> Relu -> y
onnx::ModelProto ReluModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {2, 3});
  *g->add_output() = testing_util::TensorInfo("y", {2, 3});
  *g->add_node() = MakeNode("Relu", {"x"}, {"y"}, "relu");
  return model;
}

absl::Status CreateStatus(const std::string& bytes) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::CreateFromBytes(bytes, options);
  return session.ok() ? absl::OkStatus() : session.status();
}

TEST(BadModelTest, EmptyBytes) {
  EXPECT_THAT(CreateStatus("").message(), HasSubstr("empty"));
}

TEST(BadModelTest, RandomBytes) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_FALSE(CreateStatus(bytes).ok());
  }
}

TEST(BadModelTest, EveryTruncationOfAValidModel) {
  std::string bytes = ReluModel().SerializeAsString();
  ASSERT_TRUE(CreateStatus(bytes).ok());
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(CreateStatus(bytes.substr(0, len)).ok()) << len;  // no crash; a clean error
  }
}

TEST(BadModelTest, UnknownOpsAreAllNamed) {
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  g->clear_node();
  *g->add_node() = MakeNode("FancyOp", {"x"}, {"t"}, "fancy1");
  *g->add_node() = MakeNode("OtherOp", {"t"}, {"u"}, "other");
  *g->add_node() = MakeNode("FancyOp", {"u"}, {"y"}, "fancy2");
  absl::Status s = CreateStatus(model.SerializeAsString());
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("FancyOp (nodes 'fancy1', 'fancy2')"));
  EXPECT_THAT(s.message(), HasSubstr("OtherOp (nodes 'other')"));
  EXPECT_THAT(s.message(), HasSubstr("opset 13"));
}

TEST(BadModelTest, Cycle) {
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  g->clear_node();
  *g->add_node() = MakeNode("Add", {"x", "b"}, {"a"}, "add_a");
  *g->add_node() = MakeNode("Relu", {"a"}, {"b"}, "relu_b");
  *g->add_node() = MakeNode("Relu", {"a"}, {"y"}, "relu_y");
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(), HasSubstr("cycle through nodes 'add_a', 'relu_b'"));
}

TEST(BadModelTest, DanglingInput) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(), HasSubstr("'nowhere', which nothing produces"));
}

TEST(BadModelTest, ShapeMismatchNamesTheNode) {
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("z", {4, 5});
  g->clear_node();
  *g->add_node() = MakeNode("Add", {"x", "z"}, {"y"}, "bad_add");
  absl::Status s = CreateStatus(model.SerializeAsString());
  EXPECT_THAT(s.message(), HasSubstr("node 'bad_add' (Add)"));
}

TEST(BadModelTest, ExternalDataOutsideTheModelFolderIsRefused) {
  fs::path dir = fs::path(::testing::TempDir()) / "ext_model";
  fs::create_directories(dir);
  std::ofstream(dir.parent_path() / "secret.bin") << std::string(24, 'x');
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("../secret.bin");
  g->clear_node();
  *g->add_node() = MakeNode("Add", {"x", "w"}, {"y"}, "add");
  std::ofstream(dir / "model.onnx", std::ios::binary) << model.SerializeAsString();
  auto session = runtime::Session::Create((dir / "model.onnx").string(), {});
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("outside the model's folder"));
  // The same file inside the folder but too short for the tensor is refused too.
  std::ofstream(dir / "short.bin") << std::string(8, 'x');
  loc->set_value("short.bin");
  std::ofstream(dir / "model.onnx", std::ios::binary | std::ios::trunc) << model.SerializeAsString();
  session = runtime::Session::Create((dir / "model.onnx").string(), {});
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("past the end"));
}

class RunInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = runtime::Session::CreateFromBytes(ReluModel().SerializeAsString(), {});
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = *std::move(s);
  }
  absl::Status RunWith(std::vector<runtime::NamedTensor> inputs) {
    auto out = session_->Run(inputs);
    return out.ok() ? absl::OkStatus() : out.status();
  }
  std::unique_ptr<runtime::Session> session_;
};

TEST_F(RunInputTest, WrongShape) {
  EXPECT_THAT(RunWith({{"x", *ir::Tensor::Create(ir::DType::kFloat32, {3, 2})}}).message(),
              HasSubstr("input 'x' has shape [3,2], the model expects [2,3]"));
}

TEST_F(RunInputTest, WrongDType) {
  EXPECT_THAT(RunWith({{"x", *ir::Tensor::Create(ir::DType::kInt64, {2, 3})}}).message(),
              HasSubstr("dtype int64, the model expects float32"));
}

TEST_F(RunInputTest, MissingAndUnknownNames) {
  EXPECT_THAT(RunWith({}).message(), HasSubstr("missing input 'x'"));
  EXPECT_THAT(RunWith({{"x", *ir::Tensor::Create(ir::DType::kFloat32, {2, 3})},
                       {"q", *ir::Tensor::Create(ir::DType::kFloat32, {1})}})
                  .message(),
              HasSubstr("unknown input 'q'"));
}

TEST_F(RunInputTest, NanAndInfAreData) {
  ir::Tensor x = *ir::Tensor::Create(ir::DType::kFloat32, {2, 3});
  x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[1] = -std::numeric_limits<float>::infinity();
  x.data<float>()[2] = std::numeric_limits<float>::infinity();
  auto out = session_->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(out->at(0).tensor.data<float>()[0]));
  EXPECT_EQ(out->at(0).tensor.data<float>()[1], 0.0f);
  EXPECT_EQ(out->at(0).tensor.data<float>()[2], std::numeric_limits<float>::infinity());
}

}  // namespace
