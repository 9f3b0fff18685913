// Tests of runtime/cuda_kernel_steps: Resize (nearest, linear, cubic), and many attribute forms (reduction axis sets
// and layouts, softmax axes and opsets, random slices, every resize mode, shapes beyond one grid), each against the
// host reference (exec::RunNodeOnCpu) on every output element as in cuda_kernel_steps_test.cc; and steps captured into
// a CUDA graph (no host synchronisation). Skips when no GPU is usable.
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/device_tensor.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

using ir::DType;
using kernel_testing::Case;
using kernel_testing::Floats;
using kernel_testing::Ints;
using kernel_testing::Random;
using CudaKernelStepsTest = kernel_testing::KernelStepTest;

// ---- Resize ---------------------------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, ResizeNearest) {
  Case a("Resize");
  a.In(Random(DType::kFloat32, {1, 2, 3, 4}, 1))
      .None()
      .Const(Floats({1, 1, 2, 2}))
      .Attr("coordinate_transformation_mode", std::string("asymmetric"))
      .Attr("nearest_mode", std::string("floor"))
      .Label("upsample x2 (Upsample form)");
  Check(a);
  Case b("Resize");
  b.In(Random(DType::kInt8, {2, 3, 7, 5}, 2), /*nhwc=*/true)
      .None()
      .None()
      .Const(Ints({2, 3, 4, 9}))
      .Attr("nearest_mode", std::string("round_prefer_ceil"))
      .Label("int8 sizes, half_pixel, NHWC");
  Check(b);
  Case c("Resize");
  c.In(Random(DType::kFloat16, {1, 1, 5, 6}, 3))
      .None()
      .Const(Floats({1, 1, 0.6f, 1.7f}))
      .Attr("coordinate_transformation_mode", std::string("half_pixel_symmetric"))
      .Attr("nearest_mode", std::string("ceil"))
      .Label("fp16 half_pixel_symmetric ceil");
  Check(c);
  Case d("Resize");
  d.In(Random(DType::kInt64, {3, 8}, 4))
      .Const(Floats({0.2f, 0.1f, 0.9f, 0.8f}))
      .Const(Floats({1.5f, 1.25f}))
      .Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
      .Attr("extrapolation_value", 7.f)
      .Label("int64 tf_crop_and_resize");
  Check(d);
  Case e("Resize");
  e.In(Random(DType::kFloat32, {2, 9}, 5))
      .None()
      .Const(Floats({1, 0.5f}))
      .Attr("coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"))
      .Label("tf_half_pixel_for_nn downscale");
  Check(e);
}

TEST_F(CudaKernelStepsTest, ResizeLinearAndCubic) {
  Case a("Resize");
  a.In(Random(DType::kFloat32, {1, 2, 6, 5}, 1))
      .None()
      .Const(Floats({1, 1, 0.6f, 1.7f}))
      .Attr("mode", std::string("linear"))
      .Label("linear half_pixel");
  Check(a);
  Case b("Resize");
  b.In(Random(DType::kFloat16, {2, 3, 4, 4}, 2), /*nhwc=*/true)
      .None()
      .None()
      .Const(Ints({2, 3, 7, 9}))
      .Attr("mode", std::string("linear"))
      .Attr("coordinate_transformation_mode", std::string("align_corners"))
      .Label("fp16 linear align_corners NHWC");
  Check(b);
  Case c("Resize");
  c.In(Random(DType::kFloat32, {1, 1, 7, 8}, 3))
      .None()
      .Const(Floats({1, 1, 1.5f, 0.75f}))
      .Attr("mode", std::string("cubic"))
      .Attr("coordinate_transformation_mode", std::string("pytorch_half_pixel"))
      .Attr("exclude_outside", int64_t{1})
      .Label("cubic pytorch_half_pixel exclude_outside");
  Check(c);
  Case d("Resize");
  d.In(Random(DType::kFloat32, {1, 1, 4, 4}, 4))
      .Const(Floats({0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}))
      .Const(Floats({1, 1, 2, 2}))
      .Attr("mode", std::string("linear"))
      .Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
      .Attr("extrapolation_value", 10.f)
      .Label("linear tf_crop_and_resize with extrapolation");
  Check(d);
  Case e("Resize");
  e.In(Random(DType::kFloat32, {3, 10}, 5))
      .None()
      .Const(Floats({1, 0.35f}))
      .Attr("mode", std::string("cubic"))
      .Attr("cubic_coeff_a", -0.5f)
      .Attr("coordinate_transformation_mode", std::string("asymmetric"))
      .Label("cubic asymmetric a=-0.5 downscale");
  Check(e);
  Case f("Resize");
  f.In(Random(DType::kFloat16, {1, 2, 3, 4, 5}, 6))
      .None()
      .Const(Floats({1, 1, 2, 1.5f, 0.5f}))
      .Attr("mode", std::string("linear"))
      .Label("fp16 trilinear");
  Check(f);
}

// ---- Sweeps over attribute forms -----------------------------------------------------------------

TEST_F(CudaKernelStepsTest, ReduceSweepOverAxisSetsAndLayouts) {
  uint32_t seed = 100;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL1", "ReduceSumSquare"}) {
    for (int mask = 0; mask < 16; ++mask) {
      for (int keepdims = 0; keepdims < 2; ++keepdims) {
        std::vector<int64_t> axes;
        for (int d = 0; d < 4; ++d) {
          if (mask & (1 << d)) axes.push_back(d % 2 == 0 ? d : d - 4);  // some negative
        }
        Case c(op);
        const DType dtype = mask % 3 == 0 ? DType::kFloat16 : DType::kFloat32;
        c.In(Random(dtype, {3, 4, 5, 6}, ++seed), /*nhwc=*/mask % 2 == 1)
            .Const(Ints(axes))
            .Attr("keepdims", int64_t{keepdims})
            .Label(std::string(op) + " mask " + std::to_string(mask) + " keepdims " + std::to_string(keepdims));
        Check(c);
      }
    }
  }
}

// ReduceLogSum of positive values (a negative sum has no logarithm), a block per output and a thread
// per output; ReduceL1 and ReduceSumSquare of int32.
TEST_F(CudaKernelStepsTest, ReduceLogSumAndIntegerL1) {
  std::vector<float> positive(3 * 40 * 5);
  for (size_t i = 0; i < positive.size(); ++i) positive[i] = 0.05f + static_cast<float>((i * 29) % 31) / 7.0f;
  Case a("ReduceLogSum");
  a.In(ir::Tensor::FromFloats(positive, {3, 40, 5})).Const(Ints({1})).Label("ReduceLogSum over 40");
  Check(a);
  Case b("ReduceLogSum");
  b.In(ir::Tensor::FromFloats(positive, {3, 40, 5})).Const(Ints({0, 2})).Label("ReduceLogSum over 15");
  Check(b);
  for (const char* op : {"ReduceL1", "ReduceSumSquare"}) {
    Case c(op);
    c.In(Random(DType::kInt32, {4, 6, 7}, 11)).Const(Ints({-1})).Label(std::string(op) + " int32");
    Check(c);
  }
}

// ReduceLogSumExp: values near 1000 (exp alone overflows: the maximum is subtracted first), one
// row of -inf (the result is -inf), one with a NaN and one with a NaN among -inf (NaN), a block per output and a thread
// per output, float32 and float16 (the maximum round-trips through the output exactly).
TEST_F(CudaKernelStepsTest, ReduceLogSumExpOfLargeAndInfiniteValues) {
  std::vector<float> values(3 * 40 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 990.0f + static_cast<float>((i * 29) % 31) / 3.0f;
  for (int64_t j = 0; j < 40; ++j) values[j * 5] = -std::numeric_limits<float>::infinity();  // row (0, :, 0)
  values[2 * 200 + 7 * 5 + 3] = std::numeric_limits<float>::quiet_NaN();                     // row (2, :, 3)
  for (int64_t j = 0; j < 40; ++j) values[200 + j * 5 + 2] = j == 9 ? NAN : -INFINITY;       // NaN among -inf
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    ir::Tensor x = *ir::Tensor::Create(dtype, {3, 40, 5});
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == DType::kFloat16) {
        x.data<uint16_t>()[i] = ir::FloatToHalfBits(values[i]);
      } else {
        x.data<float>()[i] = values[i];
      }
    }
    const std::string type = dtype == DType::kFloat16 ? " fp16" : " fp32";
    Case a("ReduceLogSumExp");
    a.In(x).Const(Ints({1})).Label("ReduceLogSumExp over 40" + type);
    Check(a);
    Case b("ReduceLogSumExp");
    b.In(x).Const(Ints({0, 2})).Attr("keepdims", int64_t{0}).Label("ReduceLogSumExp over 15" + type);
    Check(b);
  }
}

// QuantizeLinear / DequantizeLinear per tensor and per axis (NHWC input: the runner converts),
// int8 and uint8, with and without a zero point; x spans beyond the saturation bounds and holds
// exact ties (x / scale = k + 0.5).
ir::Tensor QuantValues(DType dtype, std::vector<int64_t> dims, std::vector<int> values) {
  ir::Tensor t = *ir::Tensor::Create(dtype, std::move(dims));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int v = values[static_cast<size_t>(i) % values.size()];
    if (dtype == DType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>(v);
    if (dtype == DType::kUint8) t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    if (dtype == DType::kInt32) t.data<int32_t>()[i] = v;
  }
  return t;
}

TEST_F(CudaKernelStepsTest, QuantizeAndDequantizePerTensorAndPerAxis) {
  std::vector<float> x(2 * 3 * 4 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(i % 41) - 20.0f) * 0.75f + 0.125f * (i % 3);
  for (DType q : {DType::kInt8, DType::kUint8}) {
    Case a("QuantizeLinear", 13);
    a.In(ir::Tensor::FromFloats(x, {2, 3, 4, 5}))
        .Const(Floats({0.25f}))
        .Const(QuantValues(q, {}, {q == DType::kInt8 ? -3 : 128}));
    a.Label(std::string("quantize per tensor ") + ir::DTypeName(q));
    Check(a);
    Case b("QuantizeLinear", 13);
    b.In(ir::Tensor::FromFloats(x, {2, 3, 4, 5}), /*nhwc=*/true)
        .Const(Floats({0.5f, 0.125f, 2.0f}))
        .Const(QuantValues(q, {3}, {1, 100, 7}))
        .Label(std::string("quantize per axis 1, NHWC input ") + ir::DTypeName(q));
    Check(b);
    Case c("DequantizeLinear", 13);
    c.In(QuantValues(q, {4, 6}, {0, 1, 127, 200, 255, 13, 77}))
        .Const(Floats({0.5f, 0.25f, 3.0f, 0.125f, 1.0f, 0.0625f}))
        .Const(QuantValues(q, {6}, {0, 2, 4, 100, 1, 9}))
        .Attr("axis", int64_t{-1})
        .Label(std::string("dequantize per last axis ") + ir::DTypeName(q));
    Check(c);
  }
  Case d("QuantizeLinear", 13);
  d.In(Random(DType::kFloat32, {3, 7, 9}, 21)).Const(Floats({0.02f})).Label("quantize to uint8, no zero point");
  Check(d);
  Case e("DequantizeLinear", 13);
  e.In(QuantValues(DType::kInt32, {8}, {-70000, -1, 0, 5, 123456}))
      .Const(Floats({0.001f}))
      .Label("dequantize int32 bias");
  Check(e);
}

TEST_F(CudaKernelStepsTest, SoftmaxSweepOverAxesAndOpsets) {
  uint32_t seed = 200;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int opset : {11, 13}) {
      for (int64_t axis = -3; axis < 3; ++axis) {
        Case c(op, opset);
        c.In(Random(axis % 2 == 0 ? DType::kFloat16 : DType::kFloat32, {4, 33, 40}, ++seed))
            .Attr("axis", axis)
            .Label(std::string(op) + " opset " + std::to_string(opset) + " axis " + std::to_string(axis));
        Check(c);
      }
    }
  }
}

TEST_F(CudaKernelStepsTest, SliceSweepOverRandomParameters) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int64_t> index(-9, 9), step(-3, 3);
  for (int i = 0; i < 60; ++i) {
    std::vector<int64_t> starts, ends, axes, steps;
    for (int64_t axis : {0, -1, 1}) {
      if (gen() % 3 == 0) continue;
      int64_t s = step(gen);
      if (s == 0) s = 1;
      starts.push_back(index(gen));
      ends.push_back(gen() % 5 == 0 ? (s > 0 ? int64_t{1} << 40 : -(int64_t{1} << 40)) : index(gen));
      axes.push_back(axis);
      steps.push_back(s);
    }
    Case c("Slice");
    c.In(Random(DType::kFloat32, {5, 7, 6}, i)).Const(Ints(starts)).Const(Ints(ends)).Const(Ints(axes));
    c.Const(Ints(steps)).Label("slice sweep " + std::to_string(i));
    Check(c);
  }
}

TEST_F(CudaKernelStepsTest, ResizeSweepOverModes) {
  const char* coordinates[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",       "asymmetric",
                               "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
  const char* nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const std::vector<float> scales[] = {{1, 1, 0.5f, 0.75f}, {1, 1, 1.3f, 2}, {1, 1, 3.1f, 0.6f}, {1, 1, 1, 1.5f}};
  uint32_t seed = 300;
  for (const char* coordinate : coordinates) {
    for (int form = 0; form < 7; ++form) {  // 4 nearest modes, linear, cubic, cubic exclude_outside
      for (const std::vector<float>& s : scales) {
        Case c("Resize");
        c.In(Random(DType::kFloat32, {1, 2, 5, 7}, ++seed), /*nhwc=*/form % 2 == 1);
        if (std::string(coordinate) == "tf_crop_and_resize") {
          c.Const(Floats({0, 0, 0.1f, 0.3f, 1, 1, 0.95f, 0.7f}));
        } else {
          c.None();
        }
        c.Const(Floats(s)).Attr("coordinate_transformation_mode", std::string(coordinate));
        c.Attr("extrapolation_value", -5.f);
        std::string label = std::string(coordinate) + " ";
        if (form < 4) {
          c.Attr("nearest_mode", std::string(nearest_modes[form]));
          label += nearest_modes[form];
        } else {
          c.Attr("mode", std::string(form == 4 ? "linear" : "cubic"));
          c.Attr("exclude_outside", int64_t{form == 6});
          label += form == 4 ? "linear" : (form == 5 ? "cubic" : "cubic exclude_outside");
        }
        c.Label(label + " scales " + std::to_string(s[2]) + "," + std::to_string(s[3]));
        Check(c);
      }
    }
  }
}

TEST_F(CudaKernelStepsTest, LargeShapesUseGridStrideLoops) {
  // More rows than blocks in a grid, and more elements than threads in a grid.
  Case a("ReduceSum");
  a.In(Random(DType::kFloat32, {70000, 40}, 1)).Const(Ints({1})).Label("70000 block-per-output rows");
  Check(a);
  Case b("Softmax", 13);
  b.In(Random(DType::kFloat16, {70000, 40}, 2)).Label("70000 block-per-row rows");
  Check(b);
  Case c("Transpose");
  c.In(Random(DType::kFloat32, {2, 4100, 2100}, 3)).Label("17M elements");
  Check(c);
}

// ---- CUDA graph capture ---------------------------------------------------------------------------

TEST_F(CudaKernelStepsTest, StepsCaptureIntoACudaGraph) {
  Case a("Resize");
  a.In(Random(DType::kFloat16, {1, 2, 4, 4}, 1), /*nhwc=*/true)
      .None()
      .Const(Floats({1, 1, 2, 2}))
      .Attr("mode", std::string("linear"))
      .Label("captured Resize");
  CheckCaptured(a);
  Case b("LayerNormalization");
  b.In(Random(DType::kFloat32, {2, 3, 4, 5}, 2)).Const(Random(DType::kFloat32, {5}, 3)).Attr("axis", int64_t{2});
  b.Outs({true, true, true}).Label("captured LayerNormalization");
  CheckCaptured(b);
  Case c("ReduceMean");
  c.In(Random(DType::kFloat32, {2, 8, 3, 3}, 4), /*nhwc=*/true).Const(Ints({2, 3})).Label("captured ReduceMean");
  CheckCaptured(c);
  Case d("Gather");
  d.In(Random(DType::kFloat32, {6, 4}, 5)).Const(Ints({-1, 2})).Label("captured Gather");
  CheckCaptured(d);
  Case e("Softmax", 13);
  e.In(Random(DType::kFloat32, {2, 3, 4, 5}, 6), /*nhwc=*/true).Attr("axis", int64_t{1}).Label("captured Softmax");
  CheckCaptured(e);
  Case f("Slice");
  f.In(Random(DType::kFloat32, {4, 6}, 7)).Const(Ints({1})).Const(Ints({5})).Const(Ints({1})).Label("captured Slice");
  CheckCaptured(f);
}

}  // namespace
}  // namespace exec
