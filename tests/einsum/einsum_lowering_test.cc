// EinsumLowering: every equation below, run on the CPU with the passes (lowered to ReduceSum /
// Transpose / Reshape / MatMul) against the reference plan (fuse = false: the Einsum reference
// kernel, itself checked against ONNX's stored outputs in tests/conformance), every element; the
// forms that must stay an Einsum do, and still match.
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace {

struct Case {
  std::string label;
  std::string equation;
  std::vector<std::vector<int64_t>> dims;  // per input; the model declares a dim < 0 symbolic
  bool lowered = true;
};

std::vector<std::variant<int64_t, std::string>> Declared(const std::vector<int64_t>& dims) {
  std::vector<std::variant<int64_t, std::string>> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0) {
      out.emplace_back(absl::StrCat("s", -dims[d]));  // the same symbol across inputs for the same size
    } else {
      out.emplace_back(dims[d]);
    }
  }
  return out;
}

// A run's concrete dims: a symbolic dim -n means size n + 1.
std::vector<int64_t> Concrete(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d < 0 ? -d + 1 : d);
  return out;
}

std::string EinsumModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  std::vector<std::string> inputs;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    inputs.push_back(absl::StrCat("x", i));
    *g->add_input() = testing_util::TensorInfo(inputs.back(), Declared(c.dims[i]));
  }
  *g->add_output() = testing_util::TensorInfo("y", {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx::NodeProto node = testing_util::MakeNode("Einsum", inputs, {"y"}, "einsum");
  testing_util::SetStringAttr(node, "equation", c.equation);
  *g->add_node() = node;
  return model.SerializeAsString();
}

class EinsumLoweringTest : public testing::TestWithParam<Case> {};

TEST_P(EinsumLoweringTest, MatchesTheReferenceKernel) {
  const Case& c = GetParam();
  const std::string model = EinsumModel(c);
  std::vector<runtime::NamedTensor> inputs;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    inputs.push_back({absl::StrCat("x", i), partitioner::test::RandomTensor(Concrete(c.dims[i]), 11 + i)});
  }
  runtime::SessionOptions reference_options;
  reference_options.fuse = false;
  auto reference = runtime::Session::CreateFromBytes(model, reference_options);
  auto lowered = runtime::Session::CreateFromBytes(model, runtime::SessionOptions());
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  bool has_einsum = false;
  for (const ir::Node& n : (*lowered)->plan().graph.nodes()) has_einsum = has_einsum || n.op_type == "Einsum";
  EXPECT_EQ(has_einsum, !c.lowered) << c.equation;
  auto want = (*reference)->Run(inputs);
  auto got = (*lowered)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  // Sums in another order: float32 rounding only.
  EXPECT_EQ(testing_util::CompareTensors((*got)[0].tensor, (*want)[0].tensor, testing_util::Tolerance{1e-5, 1e-5}), "")
      << c.equation;
}

INSTANTIATE_TEST_SUITE_P(
    Equations, EinsumLoweringTest,
    testing::Values(Case{"matmul", "ij,jk->ik", {{3, 4}, {4, 5}}},
                    Case{"attention_scores", "bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 6, 4}}},
                    Case{"attention_values", "bhqk,bhkd->bhqd", {{2, 3, 5, 6}, {2, 3, 6, 4}}},
                    Case{"heads_in_the_middle", "bqhd,bkhd->bhqk", {{2, 5, 3, 4}, {2, 6, 3, 4}}},
                    Case{"symbolic_batch_and_sequence", "bqhd,bkhd->bhqk", {{-1, -2, 3, 4}, {-1, -3, 3, 4}}},
                    Case{"projection_to_heads", "bld,dhk->blhk", {{-1, -2, 6}, {6, 2, 3}}},
                    Case{"projection_from_heads", "blhk,hkd->bld", {{-1, -2, 2, 3}, {2, 3, 5}}},
                    Case{"ellipsis_broadcast", "...ij,...jk->...ik", {{2, 1, 3, 4}, {1, 5, 4, 6}}},
                    Case{"implicit_output", "ij,jk", {{3, 4}, {4, 2}}}, Case{"inner_product", "i,i->", {{7}, {7}}},
                    Case{"outer_product", "i,j->ij", {{3}, {4}}},
                    Case{"sum_before_contracting", "abc,cd->ad", {{2, 3, 4}, {4, 5}}},
                    Case{"batch_vector", "bk,bkn->bn", {{3, 4}, {3, 4, 5}}},
                    Case{"kept_by_both_sides_reordered", "abk,kcd->dacb", {{2, 3, 4}, {4, 5, 2}}},
                    Case{"transpose", "ij->ji", {{3, 4}}}, Case{"sum_one_axis", "bij->bj", {{2, 3, 4}}},
                    Case{"sum_all", "ij->", {{3, 4}}}, Case{"identity", "ij->ij", {{3, 4}}},
                    Case{"diagonal_stays", "ii->i", {{4, 4}}, false},
                    Case{"bilinear_three_inputs", "bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
                    Case{"matmul_chain", "ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
                    Case{"three_inputs_sum_and_broadcast", "bij,bj,k->bik", {{2, 3, 4}, {2, 4}, {5}}}),
    [](const testing::TestParamInfo<Case>& info) { return info.param.label; });

}  // namespace
