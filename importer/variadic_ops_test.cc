// The importer's rewrite of the variadic Sum / Mean / Max / Min into chains of binary ops: what the
// graph holds. Their numbers are checked against ONNX's stored outputs by tests/conformance
// (test_sum_*, test_mean_*, test_max_*, test_min_*, on the CPU in CI and on the GPU).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "tests/util/import_text.h"
#include "tests/util/onnx_builder.h"

namespace importer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::MakeNode;
using testing_util::TensorInfo;

// op(inputs...) over float inputs a [2,3], b [3], c [2,1], d [2,3] at opset 13.
std::string Imported(const std::string& op, const std::vector<std::string>& inputs) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("a", {2, 3});
  *g->add_input() = TensorInfo("b", {3});
  *g->add_input() = TensorInfo("c", {2, 1});
  *g->add_input() = TensorInfo("d", {2, 3});
  *g->add_output() = TensorInfo("y", {});
  *g->add_node() = MakeNode(op, inputs, {"y"}, "v");
  return testing_util::ImportText(model);
}

TEST(VariadicOpsTest, SumOfThreeIsTwoAddsLeftToRight) {
  const std::string text = Imported("Sum", {"a", "b", "c"});
  EXPECT_THAT(text, HasSubstr("v__0_Add: Add(%a, %b) -> (%v__0_Add_out: float32[2,3])"));
  EXPECT_THAT(text, HasSubstr("v: Add(%v__0_Add_out, %c) -> (%y: float32[2,3])"));
  EXPECT_THAT(text, Not(HasSubstr("Sum(")));
}

TEST(VariadicOpsTest, MeanIsTheSumDividedByTheCount) {
  const std::string text = Imported("Mean", {"a", "b", "c", "d"});
  EXPECT_THAT(text, HasSubstr("v__0_Add: Add(%a, %b)"));
  EXPECT_THAT(text, HasSubstr("v__2_Add: Add(%v__1_Add_out, %d)"));
  EXPECT_THAT(text, HasSubstr("v: Div(%v__2_Add_out, %"));
  EXPECT_THAT(text, Not(HasSubstr("Mean(")));
}

TEST(VariadicOpsTest, MaxOfTwoStaysAndMinOfFourChains) {
  EXPECT_THAT(Imported("Max", {"a", "b"}), HasSubstr("v: Max(%a, %b) -> (%y: float32[2,3])"));
  const std::string text = Imported("Min", {"a", "b", "c", "d"});
  EXPECT_THAT(text, HasSubstr("v__1_Min: Min(%v__0_Min_out, %c)"));
  EXPECT_THAT(text, HasSubstr("v: Min(%v__1_Min_out, %d) -> (%y: float32[2,3])"));
}

TEST(VariadicOpsTest, OneInputIsAnIdentity) {
  EXPECT_THAT(Imported("Sum", {"a"}), HasSubstr("v: Identity(%a) -> (%y: float32[2,3])"));
  EXPECT_THAT(Imported("Mean", {"d"}), HasSubstr("v: Identity(%d) -> (%y: float32[2,3])"));
}

}  // namespace
}  // namespace importer
