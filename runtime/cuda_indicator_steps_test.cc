// Tests of the OneHot and EyeLike device runners (runtime/device_runners_indicator.cc) and of
// CumProd on the scan kernel: each runs through RunCudaKernel and through the host reference on the
// same inputs, and every output element is compared (integers and bools exactly). OneHot's indices
// include negatives, values past the depth, fractions and NaN; some inputs arrive NHWC; one case
// runs inside a CUDA-graph capture. Also the support rules (run without a GPU).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

using ir::DType;
using ir::Tensor;
using kernel_testing::Case;
using kernel_testing::Floats;
using kernel_testing::Ints;
using kernel_testing::Random;

// Indices in [-6, 6) as int64 / int32 (depth 4 below: negatives wrap, +-5 and 6 are past it).
Tensor IndicesIn(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = Random(DType::kInt32, std::move(dims), seed);
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.num_elements(); ++i) values.push_back(t.data<int32_t>()[i] % 6);
  Tensor out = Ints(values, dtype);
  return *out.Reshaped(t.shape());
}

Tensor FloatIndices() {
  Tensor t = Floats(
      {0.f, 1.9f, -0.5f, -1.f, -4.f, -4.5f, 3.99f, 4.f, std::numeric_limits<float>::quiet_NaN(), 2.f, -3.2f, 1.f});
  return *t.Reshaped({3, 4});
}

Tensor HalfValues(float off, float on) {
  Tensor t = *Tensor::Create(DType::kFloat16, {2});
  t.data<uint16_t>()[0] = ir::FloatToHalfBits(off);
  t.data<uint16_t>()[1] = ir::FloatToHalfBits(on);
  return t;
}

class CudaIndicatorStepsTest : public kernel_testing::KernelStepTest {};

TEST_F(CudaIndicatorStepsTest, OneHot) {
  Case a("OneHot", 11);
  a.In(IndicesIn(DType::kInt64, {2, 3, 5}, 1)).Const(Ints({4})).In(Floats({-1.f, 2.5f})).Label("int64, last axis");
  Check(a);
  Case b("OneHot", 11);
  b.In(IndicesIn(DType::kInt32, {2, 3, 5}, 2)).Const(Ints({4}, DType::kInt32)).In(Ints({7, -9}));
  b.Attr("axis", int64_t{1}).Label("int32 indices, middle axis, int64 values");
  Check(b);
  Case c("OneHot", 11);
  c.In(FloatIndices()).Const(Floats({4.f})).In(HalfValues(0.f, 1.f)).Attr("axis", int64_t{0});
  c.Label("float indices (fractions, NaN), first axis, float16 values");
  Check(c);
  Case d("OneHot", 11);
  d.In(IndicesIn(DType::kInt64, {1, 4, 3, 3}, 3), /*nhwc=*/true).Const(Ints({4})).In(Floats({0.f, 1.f}));
  d.Attr("axis", int64_t{-2}).Label("NHWC indices, axis -2");
  Check(d);
  Case e("OneHot", 11);
  e.In(IndicesIn(DType::kInt64, {64, 33}, 4)).Const(Ints({4})).In(Floats({0.f, 1.f})).Label("captured");
  CheckCaptured(e);
}

TEST_F(CudaIndicatorStepsTest, EyeLike) {
  Case a("EyeLike", 9);
  a.In(Random(DType::kFloat32, {5, 7}, 1)).Label("float32, main diagonal");
  Check(a);
  Case b("EyeLike", 9);
  b.In(Random(DType::kFloat32, {6, 4}, 2)).Attr("k", int64_t{2}).Attr("dtype", int64_t{6}).Label("int32, k 2");
  Check(b);
  Case c("EyeLike", 9);
  c.In(Random(DType::kInt64, {9, 9}, 3)).Attr("k", int64_t{-3}).Attr("dtype", int64_t{10}).Label("float16, k -3");
  Check(c);
  Case d("EyeLike", 9);
  d.In(Random(DType::kInt32, {3, 4}, 4)).Attr("k", int64_t{7}).Attr("dtype", int64_t{9}).Label("bool, k past cols");
  Check(d);
}

TEST_F(CudaIndicatorStepsTest, CumProd) {
  Case a("CumProd", 26);
  a.In(Random(DType::kFloat32, {3, 10, 5}, 1)).Const(Ints({1})).Label("middle axis");
  Check(a);
  Case b("CumProd", 26);
  b.In(Random(DType::kFloat16, {2, 3, 4, 6}, 2), /*nhwc=*/true).Const(Ints({-1})).Attr("exclusive", int64_t{1});
  b.Label("fp16 NHWC, last axis, exclusive");
  Check(b);
  Case c("CumProd", 26);
  c.In(Random(DType::kInt32, {4, 40}, 3)).Const(Ints({1})).Attr("reverse", int64_t{1}).Label("int32 wrapping, reverse");
  Check(c);
  Case d("CumProd", 26);
  d.In(Random(DType::kInt64, {30, 2}, 4)).Const(Ints({0})).Label("int64 wrapping");
  Check(d);
}

bool Supports(Case& c) { return CudaKernelSupports(c.graph(), c.node()); }

TEST(CudaIndicatorSupportsTest, FormsLeftToTheHost) {
  Case depth("OneHot", 11);
  depth.In(IndicesIn(DType::kInt64, {3}, 1)).In(Ints({4})).In(Floats({0.f, 1.f}));
  EXPECT_FALSE(Supports(depth)) << "a depth computed at run time sets the output shape";
  Case uint_indices("OneHot", 11);
  uint_indices.In(Random(DType::kUint8, {3}, 1)).Const(Ints({4})).In(Floats({0.f, 1.f}));
  EXPECT_FALSE(Supports(uint_indices));
  Case eye("EyeLike", 9);
  eye.In(Random(DType::kFloat32, {2, 3, 4}, 1));
  EXPECT_FALSE(Supports(eye)) << "EyeLike is 2-D only";
  Case axis("CumProd", 26);
  axis.In(Random(DType::kFloat32, {2, 4}, 1)).In(Ints({1}));
  EXPECT_FALSE(Supports(axis)) << "an axis computed at run time";
  Case ok("OneHot", 11);
  ok.In(IndicesIn(DType::kInt32, {3}, 1)).Const(Ints({4})).In(Ints({0, 1}, DType::kInt32));
  EXPECT_TRUE(Supports(ok));
}

}  // namespace
}  // namespace exec
