// Bad string data never crashes and never allocates what a model merely claims: string tensors
// past the byte limit, string_data that does not fit the shape, strings in raw_data, string
// values given to ops that do not take them, and strings given where numbers are expected.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "runtime/session.h"
#include "tests/util/onnx_builder.h"

namespace {

using ::testing::HasSubstr;
using testing_util::MakeNode;
using testing_util::TensorInfo;

absl::StatusOr<std::unique_ptr<runtime::Session>> Create(const onnx::ModelProto& model,
                                                         importer::ImportLimits limits = {}) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.limits = limits;
  return runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
}

std::string CreateError(const onnx::ModelProto& model, importer::ImportLimits limits = {}) {
  auto session = Create(model, limits);
  return session.ok() ? "ok" : std::string(session.status().message());
}

// x: string[2] -> Identity -> y, with a string initializer 's' the caller fills in.
onnx::ModelProto IdentityModel(onnx::TensorProto** s) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2}, onnx::TensorProto::STRING);
  *g->add_output() = TensorInfo("y", {2}, onnx::TensorProto::STRING);
  *g->add_node() = MakeNode("Identity", {"x"}, {"y"}, "identity");
  *s = g->add_initializer();
  (*s)->set_name("s");
  (*s)->set_data_type(onnx::TensorProto::STRING);
  return model;
}

TEST(StringBadInputTest, StringDataPastTheLimitIsRefused) {
  onnx::TensorProto* s = nullptr;
  onnx::ModelProto model = IdentityModel(&s);
  s->add_dims(3);
  for (int i = 0; i < 3; ++i) s->add_string_data(std::string(1 << 19, 'x'));
  importer::ImportLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  EXPECT_THAT(CreateError(model, limits),
              HasSubstr("string tensor 's' of shape [3] takes 1572960 bytes, more than the limit of 1048576"));
  EXPECT_EQ(CreateError(model), "ok");
}

TEST(StringBadInputTest, ClaimedShapesAreCheckedBeforeAllocating) {
  onnx::TensorProto* s = nullptr;
  onnx::ModelProto model = IdentityModel(&s);
  s->add_dims(int64_t{1} << 40);  // 2^40 strings, no data
  EXPECT_THAT(CreateError(model), HasSubstr("tensor 's': tensor of shape [1099511627776] string exceeds the"));
  s->set_dims(0, 4);
  s->add_string_data("a");
  EXPECT_THAT(CreateError(model), HasSubstr("tensor 's' has 1 elements of data, its shape needs 4"));
  s->set_dims(0, 1);
  s->set_raw_data("abcd");
  EXPECT_THAT(CreateError(model), HasSubstr("string tensor 's' must hold its strings in string_data"));
}

TEST(StringBadInputTest, OpsThatDoNotTakeStringsRefuseThemAtCreate) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2}, onnx::TensorProto::STRING);
  *g->add_output() = TensorInfo("y", {2}, onnx::TensorProto::STRING);
  *g->add_node() = MakeNode("Add", {"x", "x"}, {"y"}, "add");
  EXPECT_THAT(CreateError(model), HasSubstr("input 0 is string[2]; Add does not take string tensors"));

  onnx::ModelProto seq = testing_util::MakeModel(13);
  onnx::ValueInfoProto* in = seq.mutable_graph()->add_input();
  in->set_name("s");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  EXPECT_THAT(CreateError(seq), HasSubstr("'s' is a sequence of strings (not supported)"));
}

TEST(StringBadInputTest, RunChecksStringDtypesAndValues) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2}, onnx::TensorProto::STRING);
  *g->add_output() = TensorInfo("y", {2});
  onnx::NodeProto cast = MakeNode("Cast", {"x"}, {"y"}, "cast");
  testing_util::SetIntAttr(cast, "to", onnx::TensorProto::FLOAT);
  *g->add_node() = cast;
  auto session = Create(model);
  ASSERT_TRUE(session.ok()) << session.status();
  auto floats = (*session)->Run({{"x", ir::Tensor::FromFloats({1, 2}, {2})}});
  EXPECT_THAT(floats.status().message(), HasSubstr("input 'x' has dtype float32, the model expects string"));
  auto words = (*session)->Run({{"x", ir::Tensor::FromStrings({"1.5", "one"})}});
  EXPECT_THAT(words.status().message(), HasSubstr("element 1 (\"one\") is not a float32 literal"));
  auto numbers = (*session)->Run({{"x", ir::Tensor::FromStrings({"1.5", "-INF"})}});
  ASSERT_TRUE(numbers.ok()) << numbers.status();
  EXPECT_EQ((*numbers)[0].tensor.data<float>()[0], 1.5f);
}

}  // namespace
