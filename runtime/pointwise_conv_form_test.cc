// MatchPointwiseConv on small imported graphs (no GPU needed): which FusedGraph steps the own 1x1-conv
// kernel may run (1x1 convs, and stem windows), with which activation, and the reason for those it may not.
#include "runtime/pointwise_conv_form.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "partitioner/cover.h"
#include "partitioner/fusion_rules.h"
#include "tests/util/onnx_builder.h"

namespace exec {
namespace {

using Params = kernels::cuda::PointwiseConvParams;
using ::testing::HasSubstr;
using testing_util::MakeNode;
using testing_util::TensorInfo;

struct ConvCase {
  int cin = 16, cout = 32, kernel = 1, stride = 1;
  std::string tail;  // "", "relu", "relu6", "silu", "residual"
};

// x[2, cin, 8, 8] -> Conv(w, b) -> tail -> y.
onnx::ModelProto Model(const ConvCase& c) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, c.cin, 8, 8});
  const int out_hw = (8 - 1) / c.stride + 1;
  *g->add_input() = TensorInfo("r", {2, c.cout, out_hw, out_hw});
  testing_util::AddInitializer(m, "w", {c.cout, c.cin, c.kernel, c.kernel});
  testing_util::AddInitializer(m, "b", {c.cout});
  testing_util::AddInitializer(m, "zero", {}, 0.0f);
  testing_util::AddInitializer(m, "six", {}, 6.0f);
  onnx::NodeProto conv = MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  const int pad = c.kernel / 2;
  testing_util::SetIntsAttr(conv, "pads", {pad, pad, pad, pad});
  testing_util::SetIntsAttr(conv, "strides", {c.stride, c.stride});
  *g->add_node() = conv;
  std::string out = "c";
  if (c.tail == "relu") *g->add_node() = MakeNode("Relu", {"c"}, {"y"}, "relu"), out = "y";
  if (c.tail == "relu6") *g->add_node() = MakeNode("Clip", {"c", "zero", "six"}, {"y"}, "relu6"), out = "y";
  if (c.tail == "silu") {
    *g->add_node() = MakeNode("Sigmoid", {"c"}, {"s"}, "sigmoid");
    *g->add_node() = MakeNode("Mul", {"c", "s"}, {"y"}, "silu");
    out = "y";
  }
  if (c.tail == "residual") {
    *g->add_node() = MakeNode("Add", {"c", "r"}, {"a"}, "add");
    *g->add_node() = MakeNode("Relu", {"a"}, {"y"}, "relu");
    out = "y";
  }
  *g->add_output() = TensorInfo(out, {2, c.cout, out_hw, out_hw});
  return m;
}

absl::StatusOr<PointwiseConvForm> MatchFirstStep(const ConvCase& c, bool allow_tf32 = false) {
  absl::StatusOr<ir::Graph> graph = importer::ImportModelBytes(Model(c).SerializeAsString(), "");
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<Step>> steps = partitioner::CoverGraph(*graph, partitioner::Sm90Rules());
  EXPECT_TRUE(steps.ok()) << steps.status();
  EXPECT_EQ((*steps)[0].kind, StepKind::kFusedGraph);
  return MatchPointwiseConv(*graph, (*steps)[0], {2, c.cin, 8, 8}, allow_tf32);
}

TEST(PointwiseConvFormTest, OneByOneConvWithEachTailMatches) {
  const std::pair<std::string, Params::Activation> tails[] = {
      {"", Params::kNone}, {"relu", Params::kRelu}, {"relu6", Params::kRelu6}, {"silu", Params::kSilu}};
  for (const auto& [tail, activation] : tails) {
    ConvCase c;
    c.tail = tail;
    absl::StatusOr<PointwiseConvForm> form = MatchFirstStep(c);
    ASSERT_TRUE(form.ok()) << tail << ": " << form.status();
    EXPECT_EQ(form->params.activation, activation) << tail;
    EXPECT_EQ(form->params.pixels, 2 * 8 * 8);
    EXPECT_EQ(form->params.cin, 16);
    EXPECT_EQ(form->params.cout, 32);
    EXPECT_EQ(form->params.type, kernels::cuda::FloatType::kFloat32);
    EXPECT_NE(form->bias, ir::kNoValue);
    EXPECT_EQ(form->out_dims, (std::vector<int64_t>{2, 32, 8, 8}));
  }
}

TEST(PointwiseConvFormTest, StemWindowMatchesWithItsGeometry) {
  ConvCase stem;  // 3x3 stride 2 pad 1 on 4 float32 channels (16-byte pixels), a tf32 plan's stem
  stem.cin = 4, stem.kernel = 3, stem.stride = 2, stem.tail = "silu";
  absl::StatusOr<PointwiseConvForm> form = MatchFirstStep(stem, /*allow_tf32=*/true);
  ASSERT_TRUE(form.ok()) << form.status();
  const kernels::cuda::ConvWindow& w = form->params.window;
  EXPECT_FALSE(w.OneByOne());
  EXPECT_EQ(w.kernel_h, 3);
  EXPECT_EQ(w.stride_w, 2);
  EXPECT_EQ(w.pad_top, 1);
  EXPECT_EQ(w.in_h, 8);
  EXPECT_EQ(w.out_w, 4);
  EXPECT_EQ(form->params.pixels, 2 * 4 * 4);
  EXPECT_EQ(form->params.activation, Params::kSilu);
  EXPECT_EQ(form->out_dims, (std::vector<int64_t>{2, 32, 4, 4}));
  EXPECT_FALSE(form->params.allow_tf32);  // a float32 stem stays float32 (3xTF32) in tf32 plans
  EXPECT_TRUE(kernels::cuda::PointwiseConvSupported(form->params));
  // The same window over 16 float32 channels (64-byte pixels) matches but the kernel refuses it.
  ConvCase wide = stem;
  wide.cin = 16;
  form = MatchFirstStep(wide, /*allow_tf32=*/true);
  ASSERT_TRUE(form.ok()) << form.status();
  const char* reason = nullptr;
  EXPECT_FALSE(kernels::cuda::PointwiseConvSupported(form->params, &reason));
  EXPECT_STREQ(reason, "a window over input pixels of other than 8 or 16 bytes");
}

TEST(PointwiseConvFormTest, OtherConvsSayWhyNot) {
  ConvCase residual;
  residual.tail = "residual";
  EXPECT_THAT(MatchFirstStep(residual).status().message(), HasSubstr("Add+Relu after the conv"));
}

TEST(PointwiseConvFormTest, MatchedSizesTheKernelDoesNotTakeAreRefusedBySupport) {
  ConvCase odd_channels;
  odd_channels.cin = 12;
  absl::StatusOr<PointwiseConvForm> form = MatchFirstStep(odd_channels);
  ASSERT_TRUE(form.ok()) << form.status();
  const char* reason = nullptr;
  EXPECT_FALSE(kernels::cuda::PointwiseConvSupported(form->params, &reason));
  EXPECT_STREQ(reason, "strict float32 (the kernel computes float32 in TF32)");
  form->params.type = kernels::cuda::FloatType::kFloat16;
  EXPECT_FALSE(kernels::cuda::PointwiseConvSupported(form->params, &reason));
  EXPECT_STREQ(reason, "input channels not a multiple of 8 from 8 to 64");
  form->params.cin = 16;
  EXPECT_TRUE(kernels::cuda::PointwiseConvSupported(form->params));
}

TEST(PointwiseConvFormTest, Float32IsTakenOnlyWhereTf32IsAllowed) {
  const ConvCase c;  // float32, 16 -> 32 channels
  absl::StatusOr<PointwiseConvForm> strict = MatchFirstStep(c, /*allow_tf32=*/false);
  absl::StatusOr<PointwiseConvForm> tf32 = MatchFirstStep(c, /*allow_tf32=*/true);
  ASSERT_TRUE(strict.ok() && tf32.ok());
  EXPECT_FALSE(strict->params.allow_tf32);
  EXPECT_FALSE(kernels::cuda::PointwiseConvSupported(strict->params));
  EXPECT_TRUE(tf32->params.allow_tf32);
  EXPECT_TRUE(kernels::cuda::PointwiseConvSupported(tf32->params));
}

}  // namespace
}  // namespace exec
