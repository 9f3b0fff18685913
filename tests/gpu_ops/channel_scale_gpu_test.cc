// The squeeze-excite shapes on the GPU: GlobalAveragePool of an NHWC conv output (the own pooling
// kernel, one and several row slices) and a [N, C, 1, 1] operand broadcast over the NHWC map by Mul,
// Add and Div on either side (the row-broadcast fast path of kernels/cuda/elementwise.cu), in fp32,
// tf32 and fp16, every output element against the CPU's run of the same plan; and the squeeze-excite MLP
// (1x1 conv, SiLU, 1x1 conv, Sigmoid) as one own-kernel step at a small batch, the same way; and the
// gate folded into the next 1x1 conv's weights per sample (runtime/cuda_steps_scaled_conv.cc); and the
// pool taken from the channel sums of the depthwise conv before it (runtime/cuda_steps_pooled_sums.cc),
// also by the squeeze-excite MLP in place of the pool.
// Skipped without a GPU.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/gpu_runs.h"
#include "tests/util/onnx_builder.h"

namespace {

// x [n, 8, hw, hw] -> 1x1 Conv to 24 channels (NHWC) -> y; s = GlobalAveragePool(y);
// outputs s, Mul(s, y), Div(s, y), Div(y, s), Add(y, s) (no Sub: y - s cancels, and the float sums
// of the mean differ between devices in their last bits).
std::string SqueezeExciteModel(int64_t n, int64_t hw) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {n, 8, hw, hw});
  std::vector<float> w(24 * 8);
  // Positive weights on positive inputs keep y away from 0, so Div(s, y) stays well conditioned.
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f + static_cast<float>((i * 37) % 23) / 23.0f;
  testing_util::AddFloatInitializer(model, "w", {24, 8, 1, 1}, w);
  *g->add_node() = testing_util::MakeNode("Conv", {"x", "w"}, {"y"}, "conv");
  *g->add_node() = testing_util::MakeNode("GlobalAveragePool", {"y"}, {"s"}, "gap");
  *g->add_node() = testing_util::MakeNode("Mul", {"s", "y"}, {"scaled"}, "mul");
  *g->add_node() = testing_util::MakeNode("Div", {"s", "y"}, {"ratio"}, "div");
  *g->add_node() = testing_util::MakeNode("Div", {"y", "s"}, {"quotient"}, "div2");
  *g->add_node() = testing_util::MakeNode("Add", {"y", "s"}, {"sum"}, "add");
  *g->add_output() = testing_util::TensorInfo("s", {n, 24, 1, 1});
  for (const char* name : {"scaled", "ratio", "quotient", "sum"})
    *g->add_output() = testing_util::TensorInfo(name, {n, 24, hw, hw});
  return model.SerializeAsString();
}

ir::Tensor RandomInput(const std::vector<int64_t>& dims) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

struct Shape {
  int64_t n, hw;
};

class ChannelScaleGpuTest : public testing::TestWithParam<std::string> {};

using testing_util::ExpectGpuRunsMatchCpu;

TEST_P(ChannelScaleGpuTest, MatchesCpu) {
  // 3 x 5 x 5: one slice per image; 1 x 112 x 112: the pool splits the rows into slices.
  for (const Shape& shape : {Shape{3, 5}, Shape{1, 112}}) {
    const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({shape.n, 8, shape.hw, shape.hw})}};
    if (!ExpectGpuRunsMatchCpu(SqueezeExciteModel(shape.n, shape.hw), GetParam(), inputs,
                               absl::StrCat("n ", shape.n, " hw ", shape.hw))) {
      GTEST_SKIP() << "no usable GPU";
    }
  }
}

// Appends the squeeze-excite MLP on the pooled [n, 24, 1, 1] value "s": Conv 24->6 -> SiLU -> Conv 6->24
// -> Sigmoid -> "gate" (weights w1, b1, w2, b2).
void AddSqueezeExciteMlp(onnx::ModelProto& model) {
  auto weights = [](size_t count, int salt) {
    std::vector<float> w(count);
    for (size_t i = 0; i < count; ++i) w[i] = static_cast<float>(static_cast<int>((i * 37 + salt) % 23) - 11) / 23.0f;
    return w;
  };
  testing_util::AddFloatInitializer(model, "w1", {6, 24, 1, 1}, weights(6 * 24, 1));
  testing_util::AddFloatInitializer(model, "b1", {6}, weights(6, 2));
  testing_util::AddFloatInitializer(model, "w2", {24, 6, 1, 1}, weights(24 * 6, 3));
  testing_util::AddFloatInitializer(model, "b2", {24}, weights(24, 4));
  auto* g = model.mutable_graph();
  *g->add_node() = testing_util::MakeNode("Conv", {"s", "w1", "b1"}, {"h"}, "fc1");
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"h"}, {"hs"}, "silu_sigmoid");
  *g->add_node() = testing_util::MakeNode("Mul", {"h", "hs"}, {"a"}, "silu_mul");
  *g->add_node() = testing_util::MakeNode("Conv", {"a", "w2", "b2"}, {"z"}, "fc2");
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"z"}, {"gate"}, "gate");
}

// x [n, 24, hw, hw] -> GlobalAveragePool -> Conv 24->6 -> SiLU -> Conv 6->24 -> Sigmoid -> Mul(x, gate):
// EfficientNet's block tail (in fp16, channel padding widens the 6 to 8 inside the step).
std::string SqueezeExciteMlpModel(int64_t n, int64_t hw) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {n, 24, hw, hw});
  *g->add_node() = testing_util::MakeNode("GlobalAveragePool", {"x"}, {"s"}, "gap");
  AddSqueezeExciteMlp(model);
  *g->add_node() = testing_util::MakeNode("Mul", {"x", "gate"}, {"y"}, "scale");
  *g->add_output() = testing_util::TensorInfo("gate", {n, 24, 1, 1});
  *g->add_output() = testing_util::TensorInfo("y", {n, 24, hw, hw});
  return model.SerializeAsString();
}

TEST_P(ChannelScaleGpuTest, SqueezeExciteMlpIsOneKernelAndMatchesCpu) {
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({3, 24, 7, 7})}};
  std::unique_ptr<runtime::Session> session =
      ExpectGpuRunsMatchCpu(SqueezeExciteMlpModel(3, 7), GetParam(), inputs, "squeeze-excite MLP");
  if (!session) GTEST_SKIP() << "no usable GPU";
  int squeeze_excite_steps = 0;
  for (const std::string& note : session->gpu_step_notes()) {
    squeeze_excite_steps += note.find("squeeze-excite MLP") != std::string::npos;
  }
  EXPECT_EQ(squeeze_excite_steps, 1);
}

// x [n, 144, hw, hw] -> GlobalAveragePool -> Conv 144->8 -> Relu -> Conv 8->144 -> Sigmoid -> Mul(x, gate)
// -> Conv 144->24 (+ bias) -> Add(r): the squeeze-excite gate before EfficientNet's project conv and residual.
std::string GateThenProjectModel(int64_t n, int64_t hw) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {n, 144, hw, hw});
  *g->add_input() = testing_util::TensorInfo("r", {n, 24, hw, hw});
  auto weights = [](size_t count, int salt, float scale) {
    std::vector<float> w(count);
    for (size_t i = 0; i < count; ++i)
      w[i] = scale * static_cast<float>(static_cast<int>((i * 37 + salt) % 23) - 11) / 23.0f;
    return w;
  };
  testing_util::AddFloatInitializer(model, "w1", {8, 144, 1, 1}, weights(8 * 144, 1, 0.2f));
  testing_util::AddFloatInitializer(model, "w2", {144, 8, 1, 1}, weights(144 * 8, 3, 1.0f));
  testing_util::AddFloatInitializer(model, "w3", {24, 144, 1, 1}, weights(24 * 144, 5, 0.2f));
  testing_util::AddFloatInitializer(model, "b3", {24}, weights(24, 7, 1.0f));
  *g->add_node() = testing_util::MakeNode("GlobalAveragePool", {"x"}, {"s"}, "gap");
  *g->add_node() = testing_util::MakeNode("Conv", {"s", "w1"}, {"h"}, "fc1");
  *g->add_node() = testing_util::MakeNode("Relu", {"h"}, {"a"}, "relu");
  *g->add_node() = testing_util::MakeNode("Conv", {"a", "w2"}, {"z"}, "fc2");
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"z"}, {"gate"}, "sigmoid");
  *g->add_node() = testing_util::MakeNode("Mul", {"x", "gate"}, {"scaled"}, "scale");
  *g->add_node() = testing_util::MakeNode("Conv", {"scaled", "w3", "b3"}, {"p"}, "project");
  *g->add_node() = testing_util::MakeNode("Add", {"p", "r"}, {"y"}, "residual");
  *g->add_output() = testing_util::TensorInfo("y", {n, 24, hw, hw});
  return model.SerializeAsString();
}

// At batch 64 on a 56x56 map the gate folds into per-sample weights of the project conv (one
// batched matmul instead of a pass over x for the product); the output matches the CPU either way,
// through the step-by-step run and the CUDA-graph replay. In fp16 the absolute tolerance is about one
// float16 ulp of the outputs' magnitude (~1: 144 products plus the residual), 2e-3: an output near
// zero keeps the rounding of the conv's ~1-sized result before the residual cancels it (one element
// in 4.8M was 1.05e-3 off with the default 1e-3). In tf32 (TF32 products, float32 storage) the same
// holds at one TF32 ulp of ~1, 1e-3 (with the default 1e-4, 5459 elements near zero missed by up to
// 3.5e-4 on the H200).
TEST_P(ChannelScaleGpuTest, GateFoldsIntoProjectConvAndMatchesCpu) {
  constexpr int64_t kBatch = 64, kSide = 56;
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({kBatch, 144, kSide, kSide})},
                                                    {"r", RandomInput({kBatch, 24, kSide, kSide})}};
  std::optional<testing_util::Tolerance> tol;
  if (GetParam() == "fp16") tol = testing_util::Tolerance{1e-2, 2e-3};
  if (GetParam() == "tf32") tol = testing_util::Tolerance{1e-3, 1e-3};
  std::unique_ptr<runtime::Session> session =
      ExpectGpuRunsMatchCpu(GateThenProjectModel(kBatch, kSide), GetParam(), inputs, "gate + project conv", tol);
  if (!session) GTEST_SKIP() << "no usable GPU";
  int folded = 0, measured = 0;
  for (const std::string& note : session->gpu_step_notes()) {
    folded += note.find("-> folded)") != std::string::npos;
    measured += note.find("squeeze-excite gate of step") != std::string::npos;
  }
  if (GetParam() != "fp16") return;  // float32 maps stay NCHW here: nothing to fold
  EXPECT_EQ(measured, 1) << "the pair was not measured";
  EXPECT_EQ(folded, 1) << "fp16: the folded form should win at this shape";
}

// x [n, 24, hw, hw] -> depthwise Conv 3x3 (+ bias) -> SiLU -> d; s = GlobalAveragePool(d); outputs s
// and Mul(d, s): EfficientNet's depthwise conv feeding its squeeze-excite pool.
std::string DepthwiseThenPoolModel(int64_t n, int64_t hw, int64_t k = 3) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {n, 24, hw, hw});
  std::vector<float> w(24 * k * k), b(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>((i * 37) % 23) - 11) / 23.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>((i * 13) % 7) - 3) / 7.0f;
  testing_util::AddFloatInitializer(model, "w", {24, 1, k, k}, w);
  testing_util::AddFloatInitializer(model, "b", {24}, b);
  onnx::NodeProto conv = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c"}, "depthwise");
  testing_util::SetIntAttr(conv, "group", 24);
  testing_util::SetIntsAttr(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
  *g->add_node() = conv;
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"c"}, {"cs"}, "silu_sigmoid");
  *g->add_node() = testing_util::MakeNode("Mul", {"c", "cs"}, {"d"}, "silu_mul");
  *g->add_node() = testing_util::MakeNode("GlobalAveragePool", {"d"}, {"s"}, "gap");
  *g->add_node() = testing_util::MakeNode("Mul", {"d", "s"}, {"y"}, "scale");
  *g->add_output() = testing_util::TensorInfo("s", {n, 24, 1, 1});
  *g->add_output() = testing_util::TensorInfo("y", {n, 24, hw, hw});
  return model.SerializeAsString();
}

// The depthwise kernel sums its channels for the pool (runtime/cuda_steps_pooled_sums.cc), measured
// (the default), forced on and forced off: the pool and the product match the CPU, for several
// images, one large map and a larger batch (lanes over many rows), through the step-by-step run and
// the CUDA-graph replay; in fp16 and tf32 (NHWC, the own kernels; strict fp32 never sums) the notes
// say which way ran and, when measured, what was timed.
TEST_P(ChannelScaleGpuTest, PoolFromDepthwiseChannelSumsMatchesCpu) {
  using PoolSums = exec::CudaExecutorOptions::PoolSums;
  for (const PoolSums how : {PoolSums::kMeasured, PoolSums::kAlways, PoolSums::kNever}) {
    for (const Shape& shape : {Shape{5, 14}, Shape{1, 112}, Shape{64, 28}}) {
      const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({shape.n, 24, shape.hw, shape.hw})}};
      const std::string context = absl::StrCat(how == PoolSums::kMeasured ? "measured"
                                               : how == PoolSums::kAlways ? "summing"
                                                                          : "not summing",
                                               ", n ", shape.n, " hw ", shape.hw);
      std::unique_ptr<runtime::Session> session =
          ExpectGpuRunsMatchCpu(DepthwiseThenPoolModel(shape.n, shape.hw), GetParam(), inputs, context, std::nullopt,
                                [how](exec::CudaExecutorOptions& gpu) { gpu.pool_sums = how; });
      if (!session) GTEST_SKIP() << "no usable GPU";
      int summing = 0, from_sums = 0, measured = 0, measured_summing = 0;
      for (const std::string& note : session->gpu_step_notes()) {
        summing += note.find(", summing its channels for step #") != std::string::npos;
        from_sums += note.find("from the channel sums step #") != std::string::npos;
        measured += note.find("measured at the first run for these dims: conv + pool") != std::string::npos;
        measured_summing += note.find("-> summing)") != std::string::npos;
      }
      if (GetParam() == "fp32") {  // strict float32 plans never sum (reproducible pools)
        EXPECT_EQ(summing + from_sums + measured, 0) << context;
        continue;
      }
      EXPECT_EQ(measured, how == PoolSums::kMeasured ? 1 : 0) << context;
      const int want = how == PoolSums::kMeasured ? measured_summing : how == PoolSums::kAlways ? 1 : 0;
      EXPECT_EQ(summing, want) << context;
      EXPECT_EQ(from_sums, want) << context;
    }
  }
}

// x [n, 24, hw, hw] -> depthwise Conv 3x3 (+ bias) -> SiLU -> d -> GlobalAveragePool -> Conv 24->6 -> SiLU
// -> Conv 6->24 -> Sigmoid -> Mul(d, gate): an MBConv block's depthwise conv and squeeze-excite.
std::string DepthwiseThenSqueezeExciteModel(int64_t n, int64_t hw) {
  onnx::ModelProto model;
  model.ParseFromString(DepthwiseThenPoolModel(n, hw));
  auto* g = model.mutable_graph();
  g->mutable_node()->RemoveLast();  // Mul(d, s)
  g->clear_output();
  AddSqueezeExciteMlp(model);
  *g->add_node() = testing_util::MakeNode("Mul", {"d", "gate"}, {"y"}, "scale");
  *g->add_output() = testing_util::TensorInfo("y", {n, 24, hw, hw});
  return model.SerializeAsString();
}

// Where the depthwise kernel sums its channels and the pool's only reader is the squeeze-excite
// MLP step, the pool step does nothing and the MLP takes the mean from the sums itself: the output
// matches the CPU through the step-by-step run and the CUDA-graph replay, and in fp16 and tf32 the
// notes say so; with the sums switched off the pool runs and the MLP reads it. In fp16 (batches 1
// and 5) the Mul reading the gate computes it: one kernel for the MLP and the Mul.
TEST_P(ChannelScaleGpuTest, SqueezeExciteReadsDepthwiseChannelSums) {
  using PoolSums = exec::CudaExecutorOptions::PoolSums;
  for (const PoolSums how : {PoolSums::kAlways, PoolSums::kNever}) {
    for (const Shape& shape : {Shape{1, 56}, Shape{5, 14}}) {
      const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({shape.n, 24, shape.hw, shape.hw})}};
      const std::string context =
          absl::StrCat(how == PoolSums::kAlways ? "summing" : "not summing", ", n ", shape.n, " hw ", shape.hw);
      std::unique_ptr<runtime::Session> session =
          ExpectGpuRunsMatchCpu(DepthwiseThenSqueezeExciteModel(shape.n, shape.hw), GetParam(), inputs, context,
                                std::nullopt, [how](exec::CudaExecutorOptions& gpu) { gpu.pool_sums = how; });
      if (!session) GTEST_SKIP() << "no usable GPU";
      int pool_skipped = 0, mlp_from_sums = 0, mlp = 0, joined = 0;
      for (const std::string& note : session->gpu_step_notes()) {
        pool_skipped += note.find("squeeze-excite kernel reads the channel sums") != std::string::npos;
        mlp_from_sums += note.find("its mean taken from the channel sums") != std::string::npos;
        mlp += note.find("own CUDA kernel: the squeeze-excite MLP") != std::string::npos;
        joined += note.find("squeeze-excite MLP and this Mul in one pass") != std::string::npos;
      }
      // 16-bit plans at batches up to 8: the Mul step computes the gate in its own kernel
      // (runtime/cuda_steps_joined_gate.cc), through the step-by-step run and the replay alike.
      EXPECT_EQ(joined, GetParam() == "fp16" ? 1 : 0) << context;
      if (GetParam() == "fp32") continue;  // strict float32 plans never sum
      EXPECT_EQ(mlp, 1) << context;
      const int want = how == PoolSums::kAlways ? 1 : 0;
      EXPECT_EQ(pool_skipped, want) << context;
      EXPECT_EQ(mlp_from_sums, want) << context;
    }
  }
}

// A 5x5 depthwise conv with enough tiles for the shared-tile kernel (kernels/cuda/depthwise_conv.h):
// in fp16 the step times it against the register-tiled one at its first run and says so; either
// way the outputs match the CPU through the step-by-step run and the replay.
TEST_P(ChannelScaleGpuTest, DepthwiseKernelChoiceMatchesCpu) {
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({64, 24, 28, 28})}};
  std::unique_ptr<runtime::Session> session =
      ExpectGpuRunsMatchCpu(DepthwiseThenPoolModel(64, 28, 5), GetParam(), inputs, "5x5, n 64");
  if (!session) GTEST_SKIP() << "no usable GPU";
  if (GetParam() != "fp16") return;  // float32 plans keep NCHW and cuDNN for this conv
  int measured = 0;
  for (const std::string& note : session->gpu_step_notes()) {
    measured += note.find("(measured at the first run for these dims: register tiles ") != std::string::npos;
  }
  EXPECT_EQ(measured, 1);
}

INSTANTIATE_TEST_SUITE_P(Precisions, ChannelScaleGpuTest, testing::Values("fp32", "tf32", "fp16"));

}  // namespace
