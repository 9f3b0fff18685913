// Tests of the float32 Conv on oneDNN (onednn_conv.h) through the Conv kernel: on random
// geometries (1-3 spatial dims, groups, kernel 1-4, stride 1-3, dilation 1-2, asymmetric pads,
// batch, with and without bias) every output element is compared with the float64 Conv of the same
// inputs (im2col + OpenBLAS dgemm, nn_conv.cc), within float32 rounding; with a KernelCache the
// repacked weights are kept per node and input shape and the second run gives the same result.
#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/kernel_cache.h"

namespace kernels::cpu {
namespace {

struct Geometry {
  int64_t batch, group, in_per_group, out_per_group;
  std::vector<int64_t> image, kernel, strides, dilations, pad_begin, pad_end;
  bool bias;
};

ir::Node ConvNode(const Geometry& g) {
  ir::Node node;
  node.name = "conv";
  node.op_type = "Conv";
  std::vector<int64_t> pads = g.pad_begin;
  pads.insert(pads.end(), g.pad_end.begin(), g.pad_end.end());
  node.attrs.Set("group", g.group);
  node.attrs.Set("kernel_shape", g.kernel);
  node.attrs.Set("strides", g.strides);
  node.attrs.Set("dilations", g.dilations);
  node.attrs.Set("pads", pads);
  return node;
}

std::vector<int64_t> OutputDims(const Geometry& g) {
  std::vector<int64_t> dims = {g.batch, g.group * g.out_per_group};
  for (size_t i = 0; i < g.image.size(); ++i) {
    const int64_t span = g.dilations[i] * (g.kernel[i] - 1) + 1;
    dims.push_back((g.image[i] + g.pad_begin[i] + g.pad_end[i] - span) / g.strides[i] + 1);
  }
  return dims;
}

template <typename T>
ir::Tensor Filled(ir::DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  ir::Tensor t = *ir::Tensor::Create(dtype, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<T>()[i] = static_cast<T>(values[i]);
  return t;
}

struct Inputs {
  std::vector<double> x, w, b;
};

// Runs the Conv kernel in dtype T (W marked constant, `cache` as given); returns Y as doubles.
template <typename T>
std::vector<double> RunConv(const ir::Node& node, const Geometry& g, ir::DType dtype, const Inputs& in,
                            KernelCache* cache) {
  std::vector<int64_t> x_dims = {g.batch, g.group * g.in_per_group};
  x_dims.insert(x_dims.end(), g.image.begin(), g.image.end());
  std::vector<int64_t> w_dims = {g.group * g.out_per_group, g.in_per_group};
  w_dims.insert(w_dims.end(), g.kernel.begin(), g.kernel.end());
  ir::Tensor xt = Filled<T>(dtype, x_dims, in.x);
  ir::Tensor wt = Filled<T>(dtype, w_dims, in.w);
  ir::Tensor bt = Filled<T>(dtype, {g.group * g.out_per_group}, in.b);
  ir::Tensor y = *ir::Tensor::Create(dtype, OutputDims(g));
  for (int64_t i = 0; i < y.num_elements(); ++i) y.data<T>()[i] = static_cast<T>(NAN);  // must all be written
  KernelContext ctx{node, {&xt, &wt, g.bias ? &bt : nullptr}, {&y}, cache, 0b010};
  const absl::Status status = FindKernel("Conv")(ctx);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<double> out(y.num_elements());
  for (int64_t i = 0; i < y.num_elements(); ++i) out[i] = static_cast<double>(y.data<T>()[i]);
  return out;
}

Geometry RandomGeometry(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Geometry g;
  const int spatial = pick(1, 3);
  g.batch = pick(1, 3);
  g.group = pick(0, 3) == 0 ? pick(2, 4) : 1;
  g.in_per_group = pick(1, 20);
  g.out_per_group = pick(1, 20);
  g.bias = pick(0, 1) == 1;
  for (int i = 0; i < spatial; ++i) {
    g.image.push_back(pick(1, spatial == 3 ? 7 : 16));
    g.kernel.push_back(pick(1, 4));
    g.strides.push_back(pick(1, 3));
    g.dilations.push_back(pick(1, 2));
    g.pad_begin.push_back(pick(0, 2));
    g.pad_end.push_back(pick(0, 2));
  }
  return g;
}

bool Valid(const Geometry& g) {
  for (size_t i = 0; i < g.image.size(); ++i) {
    if (g.image[i] + g.pad_begin[i] + g.pad_end[i] < g.dilations[i] * (g.kernel[i] - 1) + 1) return false;
  }
  return true;
}

Inputs RandomInputs(const Geometry& g, std::mt19937& rng) {
  int64_t image = 1, kernel = 1;
  for (size_t i = 0; i < g.image.size(); ++i) image *= g.image[i], kernel *= g.kernel[i];
  const int64_t out_channels = g.group * g.out_per_group;
  Inputs in{std::vector<double>(g.batch * g.group * g.in_per_group * image),
            std::vector<double>(out_channels * g.in_per_group * kernel), std::vector<double>(out_channels)};
  std::normal_distribution<double> normal;
  for (std::vector<double>* v : {&in.x, &in.w, &in.b}) {
    for (double& e : *v) e = static_cast<float>(normal(rng));  // values exact in float32
  }
  return in;
}

void ExpectClose(const std::vector<double>& got, const std::vector<double>& want, int iteration) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])))
        << "case " << iteration << " element " << i << " of " << got.size();
  }
}

TEST(OneDnnConvTest, Float32MatchesTheFloat64Conv) {
  std::mt19937 rng(11);
  int checked = 0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const Geometry g = RandomGeometry(rng);
    if (!Valid(g)) continue;
    const Inputs in = RandomInputs(g, rng);
    const ir::Node node = ConvNode(g);
    KernelCache cache;
    const std::vector<double> want = RunConv<double>(node, g, ir::DType::kFloat64, in, nullptr);
    ExpectClose(RunConv<float>(node, g, ir::DType::kFloat32, in, nullptr), want, iteration);
    ExpectClose(RunConv<float>(node, g, ir::DType::kFloat32, in, &cache), want, iteration);
    ExpectClose(RunConv<float>(node, g, ir::DType::kFloat32, in, &cache), want, iteration);  // the kept weights
    EXPECT_EQ(cache.size(), 1u) << "case " << iteration;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(OneDnnConvTest, OneEntryPerInputShape) {
  std::mt19937 rng(3);
  Geometry g{2, 1, 8, 16, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true};
  const ir::Node node = ConvNode(g);
  KernelCache cache;
  const Inputs weights = RandomInputs(g, rng);  // W and B stay (a constant); X changes shape
  for (int64_t side : {12, 9, 12}) {
    g.image = {side, side};
    Inputs in = RandomInputs(g, rng);
    in.w = weights.w;
    in.b = weights.b;
    ExpectClose(RunConv<float>(node, g, ir::DType::kFloat32, in, &cache),
                RunConv<double>(node, g, ir::DType::kFloat64, in, nullptr), static_cast<int>(side));
  }
  EXPECT_EQ(cache.size(), 2u);
}

TEST(OneDnnConvTest, KeepsAFewShapesPerNode) {
  std::mt19937 rng(4);
  Geometry g{1, 1, 4, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false};
  const ir::Node node = ConvNode(g);
  KernelCache cache;
  const Inputs weights = RandomInputs(g, rng);
  for (int64_t side = 6; side < 16; ++side) {  // ten shapes, then the first again (made anew)
    g.image = {side == 15 ? 6 : side, side == 15 ? 6 : side};
    Inputs in = RandomInputs(g, rng);
    in.w = weights.w;
    ExpectClose(RunConv<float>(node, g, ir::DType::kFloat32, in, &cache),
                RunConv<double>(node, g, ir::DType::kFloat64, in, nullptr), static_cast<int>(side));
    EXPECT_LE(cache.size(), KernelCache::kMaxShapesPerNode);
  }
  EXPECT_EQ(cache.size(), KernelCache::kMaxShapesPerNode);
}

}  // namespace
}  // namespace kernels::cpu
