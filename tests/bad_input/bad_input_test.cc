// Bad input never crashes: each malformed model or bad Run call gives a Status with a clear
// message.
#include <cmath>
#include <filesystem>
#include <fstream>
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

absl::Status CreateStatus(const std::string& bytes, importer::ImportLimits limits = {}) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.limits = limits;
  auto session = runtime::Session::CreateFromBytes(bytes, options);
  return session.ok() ? absl::OkStatus() : session.status();
}

// x[1,2,8,8] -> Conv(w[4,2,3,3]) -> y, with the given window attributes.
onnx::ModelProto ConvModel(const std::string& attr, std::vector<int64_t> values) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {1, 2, 8, 8});
  *g->add_output() = testing_util::TensorInfo("y", {-1, -1, -1, -1});
  testing_util::AddInitializer(model, "w", {4, 2, 3, 3});
  onnx::NodeProto conv = MakeNode("Conv", {"x", "w"}, {"y"}, "conv");
  testing_util::SetIntsAttr(conv, attr, std::move(values));
  *g->add_node() = conv;
  return model;
}

// ReluModel plus an Add of initializer w[2,3] (whose data the caller sets up).
onnx::ModelProto AddWeightModel(onnx::TensorProto** w) {
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  *w = g->add_initializer();
  (*w)->set_name("w");
  (*w)->set_data_type(onnx::TensorProto::FLOAT);
  (*w)->add_dims(2);
  (*w)->add_dims(3);
  g->clear_node();
  *g->add_node() = MakeNode("Add", {"x", "w"}, {"y"}, "add");
  return model;
}

TEST(BadModelTest, EmptyBytes) { EXPECT_THAT(CreateStatus("").message(), HasSubstr("empty")); }

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

TEST(BadModelTest, WindowAttributesOutOfRange) {
  EXPECT_TRUE(CreateStatus(ConvModel("strides", {1, 1}).SerializeAsString()).ok());
  for (const auto& [attr, values] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{{"strides", {0, 1}},
                                                                 {"strides", {1, -2}},
                                                                 {"dilations", {0, 1}},
                                                                 {"dilations", {-1, 1}},
                                                                 {"pads", {0, 0, -1, 0}},
                                                                 {"strides", {int64_t{1} << 40, 1}}}) {
    absl::Status s = CreateStatus(ConvModel(attr, values).SerializeAsString());
    EXPECT_THAT(s.message(), HasSubstr("node 'conv' (Conv): " + attr)) << attr;
    EXPECT_THAT(s.message(), HasSubstr("has an entry outside")) << attr;
  }
  EXPECT_THAT(CreateStatus(ConvModel("kernel_shape", {0, 3}).SerializeAsString()).message(),
              HasSubstr("kernel_shape [0,3] does not match the weight's spatial dims [3,3]"));
  // A pool's kernel comes from the attribute alone.
  onnx::ModelProto pool = ConvModel("strides", {1, 1});
  auto* node = pool.mutable_graph()->mutable_node(0);
  *node = MakeNode("MaxPool", {"x"}, {"y"}, "pool");
  testing_util::SetIntsAttr(*node, "kernel_shape", {-3, 3});
  EXPECT_THAT(CreateStatus(pool.SerializeAsString()).message(), HasSubstr("kernel dim -3 out of range"));
}

TEST(BadModelTest, WeightsShorterLongerOrEmpty) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = AddWeightModel(&w);
  for (int i = 0; i < 6; ++i) w->add_float_data(1.0f);
  ASSERT_TRUE(CreateStatus(model.SerializeAsString()).ok());
  w->mutable_float_data()->RemoveLast();
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("tensor 'w' has 5 elements of data, its shape needs 6"));
  w->clear_float_data();
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("tensor 'w' has 0 elements of data, its shape needs 6"));
  w->set_raw_data(std::string(20, '\0'));
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("tensor 'w' has 20 bytes of raw data, its shape needs 24"));
  w->set_raw_data(std::string(28, '\0'));
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("tensor 'w' has 28 bytes of raw data, its shape needs 24"));
}

TEST(BadModelTest, HugeOrOverflowingInitializerIsRefusedBeforeAllocating) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = AddWeightModel(&w);
  w->set_dims(0, int64_t{1} << 40);
  w->set_dims(1, int64_t{1} << 40);  // 2^80 elements: overflows int64
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("tensor 'w': tensor of shape [1099511627776,1099511627776] float32 exceeds the"));
  w->set_dims(0, int64_t{1} << 20);
  w->set_dims(1, int64_t{1} << 12);  // 16 GiB, no data: refused by size, nothing allocated
  importer::ImportLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  EXPECT_THAT(CreateStatus(model.SerializeAsString(), limits).message(),
              HasSubstr("tensor 'w' of shape [1048576,4096] needs 17179869184 bytes, more than the "
                        "limit of 1048576"));
  w->set_dims(0, 2);
  w->set_dims(1, -3);
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(), HasSubstr("negative dimension"));
}

TEST(BadModelTest, AbsurdRanksAndDimsInValueInfos) {
  onnx::ModelProto model = ReluModel();
  auto* x = model.mutable_graph()->mutable_input(0);
  *x = testing_util::TensorInfo("x", std::vector<std::variant<int64_t, std::string>>(17, int64_t{1}));
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("graph input 'x' has rank 17, more than the limit of 16"));
  *x = testing_util::TensorInfo("x", {int64_t{1} << 40, int64_t{1} << 40, "N"});
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("graph input 'x' of type float32[1099511627776,1099511627776,N] needs more than the "
                        "limit of 17179869184 bytes"));
  // A negative declared dim reads as unknown, as ONNX Runtime reads it (PaddlePaddle's exports write
  // -1): the cap then applies to the known dims.
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-1);
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("graph input 'x' of type float32[?,1099511627776,N] needs more than the limit"));
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-5);
  EXPECT_TRUE(CreateStatus(model.SerializeAsString()).ok());
  // The initializer's rank is capped too.
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto with_w = AddWeightModel(&w);
  for (int i = 0; i < 20; ++i) w->add_dims(1);
  EXPECT_THAT(CreateStatus(with_w.SerializeAsString()).message(),
              HasSubstr("initializer 'w' has rank 22, more than the limit of 16"));
}

TEST(BadModelTest, InferredValueOverTheTensorLimit) {
  // Expand to a constant shape of 2^20 x 2^20 floats (4 TiB): refused at Create, not at Run.
  onnx::ModelProto model = ReluModel();
  auto* g = model.mutable_graph();
  *g->mutable_input(0) = testing_util::TensorInfo("x", {1, 1});
  *g->mutable_output(0) = testing_util::TensorInfo("y", {-1, -1});
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(int64_t{1} << 20);
  shape->add_int64_data(int64_t{1} << 20);
  g->clear_node();
  *g->add_node() = MakeNode("Expand", {"x", "shape"}, {"y"}, "expand");
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("node 'expand' (Expand) output 'y' of type float32[1048576,1048576] needs more than "
                        "the limit of 17179869184 bytes"));
}

TEST(BadModelTest, ModelLargerOrDeeperThanTheCaps) {
  const std::string bytes = ReluModel().SerializeAsString();
  importer::ImportLimits limits;
  limits.max_model_bytes = 10;
  EXPECT_THAT(CreateStatus(bytes, limits).message(),
              HasSubstr(absl::StrCat("model of ", bytes.size(), " bytes exceeds the limit of 10")));

  onnx::ModelProto deep = ReluModel();
  auto* g = deep.mutable_graph();
  g->clear_node();
  *g->add_node() = MakeNode("Relu", {"x"}, {"a"}, "r1");
  *g->add_node() = MakeNode("Relu", {"a"}, {"b"}, "r2");
  *g->add_node() = MakeNode("Relu", {"b"}, {"y"}, "r3");
  limits = {};
  limits.max_nodes = 2;
  EXPECT_THAT(CreateStatus(deep.SerializeAsString(), limits).message(),
              HasSubstr("model has 3 nodes, more than the limit of 2"));

  onnx::TensorProto* w = nullptr;
  onnx::ModelProto weights = AddWeightModel(&w);
  for (int i = 0; i < 6; ++i) w->add_float_data(1.0f);
  testing_util::AddInitializer(weights, "w2", {2, 3});
  testing_util::AddInitializer(weights, "w3", {2, 3});
  limits = {};
  limits.max_total_initializer_bytes = 60;  // three 24-byte weights
  EXPECT_THAT(CreateStatus(weights.SerializeAsString(), limits).message(),
              HasSubstr("constants up to 'w3' take 72 bytes, more than the limit of 60"));
}

TEST(BadModelTest, ExternalDataPathsAndBounds) {
  fs::path dir = fs::path(::testing::TempDir()) / "ext_bounds";
  fs::create_directories(dir);
  std::ofstream(dir / "w.bin") << std::string(24, 'x');
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = AddWeightModel(&w);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  auto* offset = w->add_external_data();
  offset->set_key("offset");
  offset->set_value("0");
  auto status_for = [&](const std::string& location, const std::string& offset_value) {
    loc->set_value(location);
    offset->set_value(offset_value);
    std::ofstream(dir / "model.onnx", std::ios::binary | std::ios::trunc) << model.SerializeAsString();
    auto session = runtime::Session::Create((dir / "model.onnx").string(), {});
    return session.ok() ? absl::OkStatus() : session.status();
  };
  EXPECT_TRUE(status_for("w.bin", "0").ok());
  EXPECT_THAT(status_for("/etc/passwd", "0").message(), HasSubstr("must be relative to the model's folder"));
  EXPECT_THAT(status_for("sub/../../w.bin", "0").message(), HasSubstr("points outside the model's folder"));
  EXPECT_THAT(status_for("w.bin", "8").message(), HasSubstr("external data [8, 32) is past the end of 'w.bin'"));
  EXPECT_THAT(status_for("w.bin", "-1").message(), HasSubstr("bad external data offset '-1'"));
  EXPECT_THAT(status_for("missing.bin", "0").message(), HasSubstr("cannot open external data file"));
  // From bytes there is no folder: external data is refused.
  EXPECT_THAT(CreateStatus(model.SerializeAsString()).message(),
              HasSubstr("uses external data, but the model was not loaded from a file"));
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

TEST_F(RunInputTest, WrongNumberOfInputsAndDuplicates) {
  const ir::Tensor x = *ir::Tensor::Create(ir::DType::kFloat32, {2, 3});
  EXPECT_THAT(RunWith({{"x", x}, {"x", x}}).message(), HasSubstr("input 'x' is given twice"));
  EXPECT_THAT(RunWith({{"x", ir::Tensor()}}).message(), HasSubstr("input 'x' is an empty tensor"));
  EXPECT_THAT(RunWith({{"x", *ir::Tensor::Create(ir::DType::kFloat32, {2, 3, 1})}}).message(),
              HasSubstr("input 'x' has shape [2,3,1], the model expects [2,3]"));
}

TEST(RunSymbolicTest, OneValuePerSymbolAcrossInputs) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("a", {"N", 3});
  *g->add_input() = testing_util::TensorInfo("b", {"N", 3});
  *g->add_output() = testing_util::TensorInfo("y", {"N", 3});
  *g->add_node() = MakeNode("Add", {"a", "b"}, {"y"}, "add");
  auto session = runtime::Session::CreateFromBytes(model.SerializeAsString(), {});
  ASSERT_TRUE(session.ok()) << session.status();
  const ir::Tensor two = *ir::Tensor::Create(ir::DType::kFloat32, {2, 3});
  const ir::Tensor four = *ir::Tensor::Create(ir::DType::kFloat32, {4, 3});
  EXPECT_TRUE((*session)->Run({{"a", four}, {"b", four}}).ok());
  auto out = (*session)->Run({{"a", two}, {"b", four}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("input 'b' dim 0 ('N') is 4, but an earlier dim named 'N' is 2"));
  out = (*session)->Run({{"a", two}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("missing input 'b' (float32[N,3])"));
}

// Tile of an input with a symbolic dim: inference cannot size the output at import, so the limit
// on tensor bytes applies when the node runs (found by the fuzzer as a 1 GiB allocation).
TEST(RunLimitTest, OutputOverTheTensorLimitAtRunTime) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {"N", 4});
  *g->add_output() = testing_util::TensorInfo("y", {-1, -1});
  onnx::TensorProto* repeats = g->add_initializer();
  repeats->set_name("r");
  repeats->set_data_type(onnx::TensorProto::INT64);
  repeats->add_dims(2);
  repeats->add_int64_data(1 << 20);
  repeats->add_int64_data(1);
  *g->add_node() = MakeNode("Tile", {"x", "r"}, {"y"}, "tile");
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.limits.max_tensor_bytes = 4 << 20;
  auto session = runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const ir::Tensor x = *ir::Tensor::Create(ir::DType::kFloat32, {2, 4});
  auto out = (*session)->Run({{"x", x}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("node 'tile' (Tile): output 0 of type float32[2097152,4] needs 33554432 bytes, more than "
                        "the limit of 4194304"));
}

}  // namespace
