// Tests of the float32 depthwise conv (depthwise_conv.h) through the Conv kernel: on random
// geometries (kernel 1-5, stride 1-3, dilation 1-2, asymmetric pads, channel multipliers, batch)
// every output element is compared with the float64 Conv of the same inputs, which runs the
// separate direct loop (nn_conv.cc), within float32 rounding.
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

struct Geometry {
  int64_t batch, channels, multiplier, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

ir::Node ConvNode(const Geometry& g) {
  ir::Node node;
  node.name = "dw";
  node.op_type = "Conv";
  node.attrs.Set("group", g.channels);
  node.attrs.Set("kernel_shape", std::vector<int64_t>{g.kh, g.kw});
  node.attrs.Set("strides", std::vector<int64_t>{g.sh, g.sw});
  node.attrs.Set("dilations", std::vector<int64_t>{g.dh, g.dw});
  node.attrs.Set("pads", std::vector<int64_t>{g.pt, g.pl, g.pb, g.pr});
  return node;
}

template <typename T>
ir::Tensor Filled(ir::DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  ir::Tensor t = *ir::Tensor::Create(dtype, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<T>()[i] = static_cast<T>(values[i]);
  return t;
}

// Runs the Conv kernel in dtype T; returns Y as doubles.
template <typename T>
std::vector<double> RunConv(const Geometry& g, ir::DType dtype, const std::vector<double>& x,
                            const std::vector<double>& w, const std::vector<double>& b) {
  const int64_t oc = g.channels * g.multiplier;
  const int64_t oh = (g.h + g.pt + g.pb - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  const int64_t ow = (g.w + g.pl + g.pr - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  ir::Tensor xt = Filled<T>(dtype, {g.batch, g.channels, g.h, g.w}, x);
  ir::Tensor wt = Filled<T>(dtype, {oc, 1, g.kh, g.kw}, w);
  ir::Tensor bt = Filled<T>(dtype, {oc}, b);
  ir::Tensor y = *ir::Tensor::Create(dtype, {g.batch, oc, oh, ow});
  for (int64_t i = 0; i < y.num_elements(); ++i) y.data<T>()[i] = static_cast<T>(NAN);  // must all be written
  const ir::Node node = ConvNode(g);
  KernelContext ctx{node, {&xt, &wt, &bt}, {&y}};
  const absl::Status status = FindKernel("Conv")(ctx);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<double> out(y.num_elements());
  for (int64_t i = 0; i < y.num_elements(); ++i) out[i] = static_cast<double>(y.data<T>()[i]);
  return out;
}

TEST(DepthwiseConvTest, Float32MatchesTheFloat64DirectLoop) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::normal_distribution<double> normal;
  for (int iteration = 0; iteration < 300; ++iteration) {
    Geometry g{pick(1, 2), pick(1, 5), pick(1, 2), pick(1, 20), pick(1, 20), pick(1, 5), pick(1, 5), pick(1, 3),
               pick(1, 3), pick(1, 2), pick(1, 2), pick(0, 2),  pick(0, 2),  pick(0, 2), pick(0, 2)};
    if (g.h + g.pt + g.pb < g.dh * (g.kh - 1) + 1 || g.w + g.pl + g.pr < g.dw * (g.kw - 1) + 1) continue;
    const int64_t oc = g.channels * g.multiplier;
    std::vector<double> x(g.batch * g.channels * g.h * g.w), w(oc * g.kh * g.kw), b(oc);
    for (std::vector<double>* v : {&x, &w, &b}) {
      for (double& e : *v) e = static_cast<float>(normal(rng));  // values exact in float32
    }
    const std::vector<double> got = RunConv<float>(g, ir::DType::kFloat32, x, w, b);
    const std::vector<double> want = RunConv<double>(g, ir::DType::kFloat64, x, w, b);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])))
          << "case " << iteration << " element " << i << " of " << got.size() << " (kernel " << g.kh << "x" << g.kw
          << ", stride " << g.sh << "x" << g.sw << ", dilation " << g.dh << "x" << g.dw << ", multiplier "
          << g.multiplier << ")";
    }
  }
}

}  // namespace
}  // namespace kernels::cpu
