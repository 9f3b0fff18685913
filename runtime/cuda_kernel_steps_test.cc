// Tests of runtime/cuda_kernel_steps: every op form runs through RunCudaKernel and through the host
// reference (exec::RunNodeOnCpu) on the same seeded inputs, and every output element is compared
// (float32 1e-5 relative, float16 1e-2, integers and moved bytes exactly); some inputs arrive NHWC.
// Also: the kernels of ops the op set lacks yet (Tile, ReduceMin/Prod/L2) against host loops, and
// the support rule's cases (those run without a GPU; the others skip when no GPU is usable).
// Resize, sweeps over attribute forms and CUDA-graph capture: cuda_kernel_steps_sweep_test.cc.
#include "runtime/cuda_kernel_steps.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/tile.h"
#include "ops/op_def.h"
#include "runtime/cpu_executor.h"
#include "runtime/device_tensor.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

// Inputs, Case, ExpectMatches and the GPU fixture: runtime/kernel_step_testing.h.
using ir::DType;
using ir::Tensor;
using kernel_testing::Case;
using kernel_testing::ExpectMatches;
using kernel_testing::Floats;
using kernel_testing::Ints;
using kernel_testing::Random;
using CudaKernelStepsTest = kernel_testing::KernelStepTest;

// ---- Data movement --------------------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, Transpose) {
  Case a("Transpose");
  a.In(Random(DType::kFloat32, {2, 3, 4, 5}, 1))
      .Attr("perm", std::vector<int64_t>{0, 2, 3, 1})
      .Label("fp32 NCHW->NHWC");
  Check(a);
  Case b("Transpose");
  b.In(Random(DType::kInt64, {3, 4, 5}, 2)).Label("int64 default perm");
  Check(b);
  Case c("Transpose");
  c.In(Random(DType::kFloat16, {2, 3, 1, 4, 2, 3}, 3))
      .Attr("perm", std::vector<int64_t>{5, 1, 3, 0, 4, 2})
      .Label("fp16 rank 6");
  Check(c);
  Case d("Transpose");
  d.In(Random(DType::kFloat32, {2, 3, 4, 5}, 4), /*nhwc=*/true)
      .Attr("perm", std::vector<int64_t>{0, 3, 1, 2})
      .Label("NHWC input");
  Check(d);
  Case e("Transpose");
  e.In(Random(DType::kBool, {7, 9}, 5)).Label("bool 2-D");
  Check(e);
}

TEST_F(CudaKernelStepsTest, Split) {
  Case a("Split", 18);
  a.In(Random(DType::kFloat32, {3, 2, 4, 5}, 1)).Attr("num_outputs", int64_t{3}).Outs({true, true, true});
  a.Label("fp32 QKV split on axis 0");
  Check(a);
  Case b("Split", 13);
  b.In(Random(DType::kFloat16, {2, 3, 8, 8}, 2), /*nhwc=*/true).Const(Ints({1, 2})).Attr("axis", int64_t{1});
  b.Outs({true, true}).Label("fp16 NHWC input, sizes 1 and 2 on the channels");
  Check(b);
  Case c("Split", 13);
  c.In(Random(DType::kInt64, {4, 7}, 3)).Const(Ints({2, 0, 5})).Attr("axis", int64_t{-1});
  c.Outs({true, true, true}).Label("int64 with an empty part, negative axis");
  Check(c);
}

TEST_F(CudaKernelStepsTest, Slice) {
  Case a("Slice");
  a.In(Random(DType::kFloat32, {5, 6, 7}, 1))
      .Const(Ints({1, -1}))
      .Const(Ints({4, -100}))
      .Const(Ints({0, -1}))
      .Const(Ints({1, -2}))
      .Label("negative axis and step");
  Check(a);
  Case b("Slice");
  b.In(Random(DType::kInt32, {4, 10}, 2))
      .Const(Ints({0, 2}, DType::kInt32))
      .Const(Ints({std::numeric_limits<int32_t>::max(), 9}, DType::kInt32))
      .None()
      .Const(Ints({2, 3}, DType::kInt32))
      .Label("int32 params, no axes");
  Check(b);
  Case c("Slice");
  c.In(Random(DType::kFloat16, {2, 3, 8, 8}, 3), /*nhwc=*/true)
      .Const(Ints({7, 1}))
      .Const(Ints({std::numeric_limits<int64_t>::min(), 6}))
      .Const(Ints({2, 3}))
      .Const(Ints({-3, 2}))
      .Label("fp16 NHWC input, reversed");
  Check(c);
  Case d("Slice");
  d.In(Random(DType::kFloat32, {4, 5}, 4)).Const(Ints({3})).Const(Ints({1})).Label("empty result");
  Check(d);
}

TEST_F(CudaKernelStepsTest, Gather) {
  Case a("Gather");
  a.In(Random(DType::kFloat32, {5, 4, 3}, 1)).Const(Ints({0, -1, 3, -5, 2})).Label("axis 0, negative constant indices");
  Check(a);
  Case b("Gather");
  Tensor idx = *Tensor::Create(DType::kInt32, {2, 3});
  const int32_t values[] = {0, 3, -2, 1, 1, -4};
  std::memcpy(idx.raw_data(), values, sizeof(values));
  b.In(Random(DType::kInt64, {3, 2, 4}, 2)).In(idx).Attr("axis", int64_t{-1}).Label("axis -1, int32 runtime indices");
  Check(b);
  Case c("Gather");
  c.In(Random(DType::kFloat16, {2, 6, 3, 2}, 3), /*nhwc=*/true)
      .In(Ints({5, 0, -6}))
      .Attr("axis", int64_t{1})
      .Label("fp16 NHWC, axis 1");
  Check(c);
  Case d("Gather");
  Tensor scalar = *Tensor::Create(DType::kInt64, {});
  scalar.data<int64_t>()[0] = -2;
  d.In(Random(DType::kUint8, {4, 7}, 4)).Const(scalar).Attr("axis", int64_t{1}).Label("scalar index");
  Check(d);
}

TEST_F(CudaKernelStepsTest, GatherConstantIndexOutOfRangeIsLeftToTheHost) {
  Case c("Gather");
  c.In(Random(DType::kFloat32, {3, 2}, 1)).Const(Ints({0, 3}));
  std::vector<DeviceTensor> inputs = UploadInputs(c);
  absl::StatusOr<std::vector<DeviceTensor>> got = RunCudaKernel(c.graph(), c.node(), inputs, stream_);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented) << got.status();
}

TEST_F(CudaKernelStepsTest, ExpandAndWhere) {
  Case a("Expand");
  a.In(Random(DType::kFloat32, {3, 1}, 1)).Const(Ints({2, 3, 4})).Label("expand [3,1] to [2,3,4]");
  Check(a);
  Case b("Expand");
  b.In(Random(DType::kFloat16, {2, 1, 4, 1}, 2), /*nhwc=*/true).Const(Ints({1, 3, 1, 5})).Label("fp16 NHWC");
  Check(b);
  Case c("Expand");
  c.In(Random(DType::kInt64, {2, 3, 4}, 3)).Const(Ints({1, 1})).Label("shape of lower rank");
  Check(c);
  Case d("Where");
  d.In(Random(DType::kBool, {2, 1, 4}, 4))
      .In(Random(DType::kFloat32, {3, 1}, 5))
      .In(Random(DType::kFloat32, {2, 3, 4}, 6));
  d.Label("fp32 broadcast all three");
  Check(d);
  Case e("Where");
  e.In(Random(DType::kBool, {5}, 7)).In(Random(DType::kInt64, {}, 8)).In(Random(DType::kInt64, {4, 5}, 9));
  e.Label("int64 scalar x");
  Check(e);
  Case f("Where");
  f.In(Random(DType::kBool, {1, 3, 1, 1}, 10))
      .In(Random(DType::kFloat16, {2, 3, 4, 5}, 11), /*nhwc=*/true)
      .In(Random(DType::kFloat16, {1}, 12))
      .Label("fp16 NHWC x");
  Check(f);
}

// ---- Reductions -----------------------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, Reductions) {
  Case a("ReduceMean");
  a.In(Random(DType::kFloat32, {3, 4, 5}, 1)).Const(Ints({1})).Label("mean axis 1 keepdims");
  Check(a);
  Case b("ReduceSum", 13);
  b.In(Random(DType::kFloat32, {3, 4, 500}, 2)).Const(Ints({-1, 0})).Attr("keepdims", int64_t{0});
  b.Label("sum axes -1,0");
  Check(b);
  Case c("ReduceMax");
  c.In(Random(DType::kFloat16, {6, 7, 8}, 3)).Label("max of all, fp16");
  Check(c);
  Case d("ReduceMean");
  d.In(Random(DType::kFloat16, {2, 16, 7, 7}, 4), /*nhwc=*/true).Const(Ints({2, 3})).Label("global average, NHWC");
  Check(d);
  Case e("ReduceSum");
  e.In(Random(DType::kInt64, {4, 3000}, 5)).Const(Ints({1})).Label("int64 sum");
  Check(e);
  Case f("ReduceMean");
  f.In(Random(DType::kInt32, {5, 7}, 6)).Const(Ints({0})).Label("int32 mean truncates");
  Check(f);
  Case g("ReduceSum");
  g.In(Random(DType::kFloat32, {3, 4}, 7)).Const(Tensor::FromInt64s({})).Attr("noop_with_empty_axes", int64_t{1});
  g.Label("noop with empty axes");
  Check(g);
  Case h("ReduceMax");
  Tensor nan = Random(DType::kFloat32, {4, 9}, 8);
  nan.data<float>()[11] = std::numeric_limits<float>::quiet_NaN();
  h.In(nan).Const(Ints({1})).Attr("keepdims", int64_t{0}).Label("max propagates NaN");
  Check(h);
  Case i("ReduceSum");
  i.In(Random(DType::kFloat32, {2, 3}, 9)).None().Label("no axes: all");
  Check(i);
}

// Ops the op set has no definition for yet: the kernels against host loops.
TEST_F(CudaKernelStepsTest, ReduceMinProdL2Kernels) {
  using kernels::cuda::ReduceOp;
  const int64_t rows = 5, n = 300;
  Tensor x = Random(DType::kFloat32, {rows, n}, 1);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = 1.f + x.data<float>()[i] / 1000.f;
  absl::StatusOr<DeviceTensor> dx = Upload(x, false, stream_);
  ASSERT_TRUE(dx.ok());
  absl::StatusOr<DeviceTensor> dy = DeviceTensor::Allocate(DType::kFloat32, {rows}, false, stream_);
  ASSERT_TRUE(dy.ok());
  kernels::cuda::ReduceShape shape;
  shape.kept_rank = 1;
  shape.kept_dims[0] = rows;
  shape.kept_strides[0] = n;
  shape.reduced_rank = 1;
  shape.reduced_dims[0] = n;
  shape.reduced_strides[0] = 1;
  for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kL2}) {
    ASSERT_EQ(kernels::cuda::Reduce(op, kernels::cuda::ReduceType::kFloat32, dx->data(), dy->data(), shape, stream_),
              cudaSuccess);
    absl::StatusOr<Tensor> y = Download(*dy, stream_);
    ASSERT_TRUE(y.ok());
    for (int64_t r = 0; r < rows; ++r) {
      double want = op == ReduceOp::kMin ? INFINITY : (op == ReduceOp::kProd ? 1.0 : 0.0);
      for (int64_t k = 0; k < n; ++k) {
        const double v = x.data<float>()[r * n + k];
        want = op == ReduceOp::kMin ? std::min(want, v) : (op == ReduceOp::kProd ? want * v : want + v * v);
      }
      if (op == ReduceOp::kL2) want = std::sqrt(want);
      EXPECT_NEAR(y->data<float>()[r], want, 1e-5 * std::fabs(want)) << static_cast<int>(op) << " row " << r;
    }
  }
}

TEST_F(CudaKernelStepsTest, TileKernel) {
  Tensor x = Random(DType::kInt32, {2, 3, 4}, 1);
  absl::StatusOr<DeviceTensor> dx = Upload(x, false, stream_);
  ASSERT_TRUE(dx.ok());
  const int64_t reps[3] = {2, 1, 3};
  absl::StatusOr<DeviceTensor> dy = DeviceTensor::Allocate(DType::kInt32, {4, 3, 12}, false, stream_);
  ASSERT_TRUE(dy.ok());
  kernels::cuda::TileShape shape;
  shape.rank = 3;
  const int64_t strides[3] = {12, 4, 1};
  for (int d = 0; d < 3; ++d) {
    shape.in_dims[d] = x.shape()[d];
    shape.out_dims[d] = x.shape()[d] * reps[d];
    shape.in_strides[d] = strides[d];
  }
  ASSERT_EQ(kernels::cuda::Tile(dx->data(), dy->data(), shape, 4, stream_), cudaSuccess);
  absl::StatusOr<Tensor> y = Download(*dy, stream_);
  ASSERT_TRUE(y.ok());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 12; ++k)
        ASSERT_EQ(y->data<int32_t>()[(i * 3 + j) * 12 + k], x.data<int32_t>()[((i % 2) * 3 + j) * 4 + k % 4]);
}

// ---- Softmax and normalisations -------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, Softmax) {
  Case a("Softmax", 13);
  a.In(Random(DType::kFloat32, {4, 37}, 1)).Label("last axis");
  Check(a);
  Case b("Softmax", 13);
  b.In(Random(DType::kFloat32, {3, 5, 7}, 2)).Attr("axis", int64_t{1}).Label("middle axis, few rows");
  Check(b);
  Case c("LogSoftmax", 13);
  c.In(Random(DType::kFloat32, {2, 8, 1030}, 3)).Attr("axis", int64_t{-2}).Label("middle axis, thread per row");
  Check(c);
  Case d("Softmax", 11);
  d.In(Random(DType::kFloat32, {2, 3, 4}, 4)).Label("opset 11 flattens at axis 1");
  Check(d);
  Case e("LogSoftmax", 11);
  e.In(Random(DType::kFloat16, {2, 3, 4, 5}, 5), /*nhwc=*/true).Attr("axis", int64_t{-2}).Label("opset 11 fp16 NHWC");
  Check(e);
  Case f("Softmax", 13);
  f.In(Random(DType::kFloat16, {3, 3000}, 6)).Label("fp16 long rows");
  Check(f);
  Case g("LogSoftmax", 13);
  g.In(Random(DType::kFloat32, {2, 2, 3}, 7)).Attr("axis", int64_t{0}).Label("axis 0");
  Check(g);
}

TEST_F(CudaKernelStepsTest, LayerNormalization) {
  Case a("LayerNormalization");
  a.In(Random(DType::kFloat32, {4, 64}, 1)).In(Random(DType::kFloat32, {64}, 2)).In(Random(DType::kFloat32, {64}, 3));
  a.Label("last axis");
  Check(a);
  Case b("LayerNormalization");
  b.In(Random(DType::kFloat32, {2, 3, 4, 5}, 4))
      .Const(Random(DType::kFloat32, {4, 5}, 5))
      .Const(Random(DType::kFloat32, {5}, 6))
      .Attr("axis", int64_t{-2})
      .Attr("epsilon", 1e-3f)
      .Outs({true, true, true})
      .Label("axis -2, broadcast bias, Mean and InvStdDev");
  Check(b);
  Case c("LayerNormalization");
  c.In(Random(DType::kFloat16, {3, 700}, 7)).In(Random(DType::kFloat16, {700}, 8)).None().Outs({true, false, true});
  c.Label("fp16, no bias, InvStdDev only");
  Check(c);
  Case d("LayerNormalization");
  d.In(Random(DType::kFloat32, {2, 3, 4, 5}, 9), /*nhwc=*/true)
      .In(Random(DType::kFloat32, {1, 4, 5}, 10))
      .Attr("axis", int64_t{1})
      .Label("NHWC input, axis 1, scale [1,4,5]");
  Check(d);
}

// Rows in whole 16-byte packs of up to 4096 16-bit / 2048 float elements take the one-warp-per-row
// kernel (float statistics); one more pack per lane takes the block kernel.
TEST_F(CudaKernelStepsTest, LayerNormalizationWarpRows) {
  Case bert("LayerNormalization");
  bert.In(Random(DType::kFloat16, {2, 9, 768}, 1)).Const(Random(DType::kFloat16, {768}, 2));
  bert.Const(Random(DType::kFloat16, {768}, 3)).Attr("epsilon", 1e-12f).Label("fp16 rows of 768 (BERT)");
  Check(bert);
  Case longest("LayerNormalization");
  longest.In(Random(DType::kFloat16, {3, 4096}, 4)).Const(Random(DType::kFloat32, {4096}, 5)).None();
  longest.Outs({true, true, true}).Label("fp16 rows of 4096, float32 scale (read element by element), statistics");
  Check(longest);
  Case wide("LayerNormalization");
  wide.In(Random(DType::kFloat32, {5, 2048}, 6)).In(Random(DType::kFloat32, {2048}, 7));
  wide.In(Random(DType::kFloat32, {2048}, 8)).Label("float rows of 2048");
  Check(wide);
  Case past("LayerNormalization");
  past.In(Random(DType::kFloat16, {2, 4104}, 9)).In(Random(DType::kFloat16, {4104}, 10)).Label("fp16 rows of 4104");
  Check(past);
  Case few("LayerNormalization");
  few.In(Random(DType::kFloat16, {7, 3, 8}, 11)).In(Random(DType::kFloat16, {3, 8}, 12)).Attr("axis", int64_t{1});
  few.Label("fp16 rows of one pack per lane at most");
  Check(few);
}

TEST_F(CudaKernelStepsTest, InstanceNormalization) {
  Case a("InstanceNormalization");
  a.In(Random(DType::kFloat32, {2, 3, 5, 7}, 1))
      .Const(Random(DType::kFloat32, {3}, 2))
      .Const(Random(DType::kFloat32, {3}, 3));
  a.Label("fp32 4-D");
  Check(a);
  Case b("InstanceNormalization");
  b.In(Random(DType::kFloat16, {1, 4, 333}, 4)).In(Random(DType::kFloat16, {4}, 5)).In(Random(DType::kFloat16, {4}, 6));
  b.Label("fp16 3-D");
  Check(b);
  Case c("InstanceNormalization");
  c.In(Random(DType::kFloat32, {2, 6, 4, 4}, 7), /*nhwc=*/true)
      .In(Random(DType::kFloat32, {6}, 8))
      .In(Random(DType::kFloat32, {6}, 9))
      .Attr("epsilon", 1e-2f)
      .Label("NHWC input");
  Check(c);
}

// ---- CumSum ---------------------------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, CumSum) {
  Case a("CumSum", 14);
  a.In(Random(DType::kFloat32, {3, 37, 5}, 1)).Const(Ints({1})).Label("middle axis");
  Check(a);
  Case b("CumSum", 14);
  b.In(Random(DType::kFloat16, {2, 3, 4, 5}, 2), /*nhwc=*/true)
      .Const(Ints({-1}))
      .Attr("exclusive", int64_t{1})
      .Label("fp16 NHWC, last axis, exclusive");
  Check(b);
  Case c("CumSum", 14);
  c.In(Random(DType::kInt64, {4, 300}, 3)).Const(Ints({0})).Attr("reverse", int64_t{1}).Label("int64 reverse");
  Check(c);
  Case d("CumSum", 11);
  d.In(Random(DType::kInt32, {1000}, 4))
      .Const(Ints({0}))
      .Attr("reverse", int64_t{1})
      .Attr("exclusive", int64_t{1})
      .Label("int32 reverse exclusive");
  Check(d);
}

// ---- The support rule (no GPU needed) -------------------------------------------------------------

bool Supports(Case& c) { return CudaKernelSupports(c.graph(), c.node()); }

TEST(CudaKernelSupportsTest, CoveredForms) {
  Case a("Transpose");
  a.In(Random(DType::kFloat32, {2, 3}, 1));
  EXPECT_TRUE(Supports(a));
  Case b("Gather");
  b.In(Random(DType::kInt8, {4}, 1)).In(Ints({1}, DType::kInt32));
  EXPECT_TRUE(Supports(b));
  Case c("Resize");
  c.In(Random(DType::kInt32, {1, 1, 2, 2}, 1)).None().Const(Floats({1, 1, 2, 2}));
  EXPECT_TRUE(Supports(c)) << "nearest moves bytes of any dtype";
  Case d("LayerNormalization");
  d.In(Random(DType::kFloat16, {2, 4}, 1)).In(Random(DType::kFloat32, {4}, 2)).Attr("stash_type", int64_t{11});
  EXPECT_TRUE(Supports(d)) << "the stash type only matters for the statistics outputs";
  Case e("ReduceMax");
  e.In(Random(DType::kInt64, {2, 4}, 1)).Const(Ints({0}));
  EXPECT_TRUE(Supports(e));
  Case f("CumSum", 14);
  f.In(Random(DType::kFloat16, {2, 4}, 1)).Const(Ints({1}));
  EXPECT_TRUE(Supports(f));
  Case g("CumSum", 14);
  g.In(Random(DType::kInt32, {2, 4}, 1)).In(Ints({1}));
  EXPECT_FALSE(Supports(g)) << "an axis computed at run time stays on the host";
}

TEST(CudaKernelSupportsTest, FormsLeftToTheHost) {
  Case slice("Slice");
  slice.In(Random(DType::kFloat32, {4}, 1)).In(Ints({1})).Const(Ints({3}));
  EXPECT_FALSE(Supports(slice)) << "starts computed at run time";
  Case softmax("Softmax", 13);
  softmax.In(Random(DType::kInt32, {4}, 1));
  EXPECT_FALSE(Supports(softmax)) << "integer softmax";
  Case reduce("ReduceSum");
  reduce.In(Random(DType::kFloat32, {4, 2}, 1)).In(Ints({1}));
  EXPECT_FALSE(Supports(reduce)) << "axes computed at run time";
  Case reduce_bool("ReduceMax", 20);
  reduce_bool.In(Random(DType::kBool, {4, 2}, 1)).Const(Ints({1}));
  EXPECT_FALSE(Supports(reduce_bool)) << "bool reductions (opset 20): the host's any/all";
  Case equal_strings("Equal", 19);
  equal_strings.In(Tensor::FromStrings({"a", "b"})).In(Tensor::FromStrings({"a", "c"}));
  EXPECT_FALSE(Supports(equal_strings)) << "strings stay on the host";
  Case reduce_attr("ReduceSum");
  reduce_attr.In(Random(DType::kFloat32, {4, 2}, 1)).Attr("axes", std::vector<int64_t>{1});
  EXPECT_FALSE(Supports(reduce_attr)) << "axes attribute: not the canonical form";
  Case resize("Resize");
  resize.In(Random(DType::kFloat32, {1, 1, 2, 2}, 1)).None().In(Floats({1, 1, 2, 2}));
  EXPECT_FALSE(Supports(resize)) << "scales computed at run time";
  Case antialias("Resize");
  antialias.In(Random(DType::kFloat32, {1, 1, 4, 4}, 1)).None().Const(Floats({1, 1, 0.5f, 0.5f}));
  antialias.Attr("mode", std::string("linear")).Attr("antialias", int64_t{1});
  EXPECT_FALSE(Supports(antialias)) << "antialias";
  Case int_linear("Resize");
  int_linear.In(Random(DType::kInt32, {1, 1, 2, 2}, 1)).None().Const(Floats({1, 1, 2, 2}));
  int_linear.Attr("mode", std::string("linear"));
  EXPECT_FALSE(Supports(int_linear)) << "linear of integers";
  Case stats("LayerNormalization");
  stats.In(Random(DType::kFloat32, {2, 4}, 1)).In(Random(DType::kFloat32, {4}, 2)).None();
  stats.Attr("stash_type", int64_t{11}).Outs({true, true, false});
  EXPECT_FALSE(Supports(stats)) << "float64 statistics";
  Case where("Where");
  where.In(Random(DType::kUint8, {4}, 1)).In(Random(DType::kFloat32, {4}, 2)).In(Random(DType::kFloat32, {4}, 3));
  EXPECT_FALSE(Supports(where)) << "condition not bool";
  Case rank9("Transpose");
  rank9.In(Random(DType::kFloat32, {1, 1, 1, 1, 1, 1, 1, 1, 2}, 1));
  EXPECT_FALSE(Supports(rank9)) << "rank above kMaxRank";
  Case tile("Tile");
  tile.In(Random(DType::kFloat32, {2}, 1)).Const(Ints({2}));
  EXPECT_EQ(Supports(tile), ops::FindOpDef("Tile") != nullptr) << "Tile runs once the op set defines it";
  Case matmul("MatMul");
  matmul.In(Random(DType::kFloat32, {2, 2}, 1)).In(Random(DType::kFloat32, {2, 2}, 2));
  EXPECT_FALSE(Supports(matmul)) << "not an own-kernel op";
}

}  // namespace
}  // namespace exec
