// The post-LN transformer block's tail on the GPU: MatMul + bias, the residual Add and
// LayerNormalization, where the Add joins the norm as one own-kernel step (partitioner/
// add_layer_norm.h, the residual added in kernels/cuda/norm's pass): every output element against
// the CPU's run of the same plan (step by step, captured, replayed), fp32 and fp16, rows of 768
// (the warp-per-row kernel) and of 100 (in fp16 not whole 16-byte packs: the block kernel).
// Skipped without a GPU.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/gpu_runs.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace {

// x[2, 64, n] -> MatMul(w[n, n]) + b -> + x -> LayerNormalization(gamma, beta) -> y.
std::string PostNormModel(int64_t n) {
  onnx::ModelProto model = testing_util::MakeModel(17);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {2, 64, n});
  *g->add_output() = testing_util::TensorInfo("y", {2, 64, n});
  auto values = [](int64_t count, int salt, float scale, float offset) {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = offset + scale * (static_cast<float>((i * 37 + salt) % 41) / 41.0f - 0.5f);
    return v;
  };
  testing_util::AddFloatInitializer(model, "w", {n, n}, values(n * n, 1, 0.1f, 0.0f));
  testing_util::AddFloatInitializer(model, "b", {n}, values(n, 2, 0.5f, 0.0f));
  testing_util::AddFloatInitializer(model, "gamma", {n}, values(n, 3, 0.5f, 1.0f));
  testing_util::AddFloatInitializer(model, "beta", {n}, values(n, 4, 0.2f, 0.0f));
  *g->add_node() = testing_util::MakeNode("MatMul", {"x", "w"}, {"xw"}, "proj");
  *g->add_node() = testing_util::MakeNode("Add", {"xw", "b"}, {"xwb"}, "bias");
  *g->add_node() = testing_util::MakeNode("Add", {"xwb", "x"}, {"sum"}, "residual");
  onnx::NodeProto norm = testing_util::MakeNode("LayerNormalization", {"sum", "gamma", "beta"}, {"y"}, "norm");
  testing_util::SetIntAttr(norm, "axis", -1);
  *g->add_node() = norm;
  return model.SerializeAsString();
}

class AddLayerNormGpuTest : public testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(AddLayerNormGpuTest, ResidualAddAndNormAreOneStepAndMatchTheCpu) {
  const auto& [precision, n] = GetParam();
  const std::vector<runtime::NamedTensor> inputs = {
      {"x", partitioner::test::RandomTensor({2, 64, n}, /*seed=*/3, -2.0f, 2.0f)}};
  // fp16: a matmul of K = n in half precision before the norm, outputs of magnitude ~2.
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-2} : testing_util::Tolerance{1e-4, 1e-4};
  auto session =
      testing_util::ExpectGpuRunsMatchCpu(PostNormModel(n), precision, inputs, absl::StrCat(precision, " n=", n), tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  int joined = 0;
  for (const std::string& note : session->gpu_step_notes()) {
    joined += absl::StrContains(note, "the residual Add and the LayerNormalization in one pass");
  }
  EXPECT_EQ(joined, 1);
}

INSTANTIATE_TEST_SUITE_P(PrecisionsAndRows, AddLayerNormGpuTest,
                         testing::Combine(testing::Values("fp32", "fp16"), testing::Values(768, 100)));

}  // namespace
