// Model-local functions expanded at import (importer/inline_functions.h): values bound and renamed,
// inputs returned as outputs, and the errors for recursion and runaway expansion. Numerical
// agreement with ONNX Runtime on a model with nested calls, attribute references and defaults, and
// an If inside a function is checked by tests/models (models/local_functions).
#include "importer/inline_functions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "tests/util/import_text.h"
#include "tests/util/onnx_builder.h"

namespace importer {
namespace {

using ::testing::HasSubstr;
using testing_util::MakeNode;
using testing_util::TensorInfo;

// custom.Twice(x) -> (y, same): y = x + x, same = x unchanged; main: Twice(x) -> (t, u), Mul(t, u).
onnx::ModelProto TwiceModel() {
  onnx::ModelProto model = testing_util::MakeModel(18);
  auto* custom = model.add_opset_import();
  custom->set_domain("custom");
  custom->set_version(1);
  onnx::FunctionProto* fn = model.add_functions();
  fn->set_domain("custom");
  fn->set_name("Twice");
  fn->add_input("x");
  fn->add_output("y");
  fn->add_output("x");
  *fn->add_node() = MakeNode("Add", {"x", "x"}, {"y"}, "add");
  fn->add_opset_import()->set_version(18);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("in", {2, 3});
  *g->add_output() = TensorInfo("out", {2, 3});
  onnx::NodeProto call = MakeNode("Twice", {"in"}, {"t", "u"}, "twice");
  call.set_domain("custom");
  *g->add_node() = call;
  *g->add_node() = MakeNode("Mul", {"t", "u"}, {"out"}, "mul");
  return model;
}

std::string ImportText(const onnx::ModelProto& model, int64_t max_nodes = 1'000'000) {
  ImportLimits limits;
  limits.max_nodes = max_nodes;
  return testing_util::ImportText(model, limits);
}

TEST(InlineFunctionsTest, CallBecomesTheBodyWithItsValuesBound) {
  const std::string text = ImportText(TwiceModel());
  EXPECT_THAT(text, HasSubstr("twice#1/add: Add(%in, %in) -> (%t: float32[2,3])"));
  EXPECT_THAT(text, HasSubstr("twice#1/pass_through_u: Identity(%in) -> (%u: float32[2,3])"));
  EXPECT_THAT(text, HasSubstr("mul: Mul(%t, %u) -> (%out: float32[2,3])"));
}

TEST(InlineFunctionsTest, AFunctionCallingItselfIsRefused) {
  onnx::ModelProto model = TwiceModel();
  onnx::NodeProto again = MakeNode("Twice", {"y"}, {"z", "w"}, "again");
  again.set_domain("custom");
  *model.mutable_functions(0)->add_node() = again;
  EXPECT_THAT(ImportText(model), HasSubstr("function custom.Twice calls itself (at node 'twice#1/again')"));
}

TEST(InlineFunctionsTest, ExpansionBeyondTheNodeLimitStops) {
  onnx::ModelProto model = TwiceModel();
  for (int i = 0; i < 20; ++i) {  // 20 more calls of Twice: 2 nodes each
    onnx::NodeProto call = MakeNode("Twice", {"in"}, {"t" + std::to_string(i), ""}, "call" + std::to_string(i));
    call.set_domain("custom");
    *model.mutable_graph()->add_node() = call;
  }
  EXPECT_THAT(ImportText(model, 30), HasSubstr("gives more than the limit of 30 nodes"));
  EXPECT_THAT(ImportText(model), HasSubstr("call19#21/add: Add(%in, %in) -> (%t19: float32[2,3])"));
}

TEST(InlineFunctionsTest, AModelWithoutFunctionsIsUnchanged) {
  onnx::ModelProto model = testing_util::MakeModel(18);
  *model.mutable_graph()->add_node() = MakeNode("Relu", {"x"}, {"y"}, "relu");
  const std::string before = model.SerializeAsString();
  ASSERT_TRUE(InlineLocalFunctions(model, 10).ok());
  EXPECT_EQ(model.SerializeAsString(), before);
}

}  // namespace
}  // namespace importer
