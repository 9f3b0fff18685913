// Tests of the logic-family device runners (runtime/device_runners_logic.cc): Equal, Greater,
// GreaterOrEqual, Less, LessOrEqual, And, Or, Xor, Not, IsNaN, IsInf and Mod run through
// RunCudaKernel and through the host reference on the same inputs, and every output element is
// compared (bools and integers exactly). Inputs come from small value sets, so equal pairs are
// common, and floats include NaN, infinities and -0; shapes broadcast, some inputs arrive NHWC.
// Also the support rules (run without a GPU), including the float unary math of the pointwise
// path (Sin, Cos, Round, ...), which tests/gpu_ops/elementwise_gpu_test.cc runs on the GPU.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

using ir::DType;
using ir::Tensor;
using kernel_testing::Case;
using kernel_testing::Ints;
using kernel_testing::Random;

// Values from a small set, so that equal pairs are common: floats from {-2, -1, -0.5, -0, 0, 0.5,
// 1, 2.5, NaN, inf, -inf}; integers in [-3, 3] (int64 also with high bits; uint8 also 200, 255).
Tensor FewValues(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  static const float kFloats[] = {
      -2.f, -1.f, -0.5f, -0.f, 0.f, 0.5f, 1.f, 2.5f, std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY};
  static const uint8_t kBytes[] = {0, 1, 2, 3, 4, 200, 255};
  Tensor t = *Tensor::Create(dtype, std::move(dims));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 10), small(-3, 3), byte(0, 6);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (dtype) {
      case DType::kFloat32: t.data<float>()[i] = kFloats[pick(gen)]; break;
      case DType::kFloat16: t.data<uint16_t>()[i] = ir::FloatToHalfBits(kFloats[pick(gen)]); break;
      case DType::kInt32: t.data<int32_t>()[i] = small(gen); break;
      case DType::kInt64: t.data<int64_t>()[i] = small(gen) * (int64_t{1} << 33) + small(gen) % 2; break;
      case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(small(gen)); break;
      case DType::kUint8: t.data<uint8_t>()[i] = kBytes[byte(gen)]; break;
      case DType::kBool: t.data<uint8_t>()[i] = gen() % 2; break;
      default: ADD_FAILURE() << "no generator for " << ir::DTypeName(dtype);
    }
  }
  return t;
}

// A 1-D tensor of `dtype` with these values (integers or floats, converted).
Tensor Values(DType dtype, const std::vector<double>& values) {
  Tensor t = *Tensor::Create(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
      case DType::kFloat32: t.data<float>()[i] = static_cast<float>(values[i]); break;
      case DType::kFloat16: t.data<uint16_t>()[i] = ir::FloatToHalfBits(static_cast<float>(values[i])); break;
      case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(values[i]); break;
      case DType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(values[i]); break;
      case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(values[i]); break;
      case DType::kUint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]); break;
      default: ADD_FAILURE() << "no values for " << ir::DTypeName(dtype);
    }
  }
  return t;
}

const char* const kComparisons[] = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"};
const DType kNumericTypes[] = {DType::kFloat32, DType::kFloat16, DType::kInt32,
                               DType::kInt64,   DType::kInt8,    DType::kUint8};

class LogicStepsTest : public kernel_testing::KernelStepTest {};

// ---- Comparisons ----------------------------------------------------------------------------------

TEST_F(LogicStepsTest, ComparisonsOfEveryNumericTypeBroadcast) {
  uint32_t seed = 1;
  for (const char* op : kComparisons) {
    for (DType dtype : kNumericTypes) {
      Case c(op);
      seed += 2;
      c.In(FewValues(dtype, {2, 3, 4}, seed)).In(FewValues(dtype, {3, 1}, seed + 1));
      c.Label(std::string(op) + " " + std::string(ir::DTypeName(dtype)) + " [2,3,4] vs [3,1]");
      Check(c);
    }
  }
}

TEST_F(LogicStepsTest, ComparisonLayoutsAndShapes) {
  uint32_t seed = 100;
  for (const char* op : kComparisons) {
    Case a(op);
    seed += 2;
    a.In(FewValues(DType::kFloat16, {2, 3, 4, 5}, seed), /*nhwc=*/true)
        .In(FewValues(DType::kFloat16, {1, 3, 1, 1}, seed + 1))
        .Label(std::string(op) + " fp16 NHWC vs per-channel");
    Check(a);
    Case b(op);
    seed += 2;
    b.In(FewValues(DType::kFloat32, {}, seed)).In(FewValues(DType::kFloat32, {4, 5}, seed + 1));
    b.Label(std::string(op) + " scalar vs [4,5]");
    Check(b);
    Case d(op);
    seed += 2;
    d.In(FewValues(DType::kInt64, {1000}, seed)).In(FewValues(DType::kInt64, {1000}, seed + 1));
    d.Label(std::string(op) + " int64 same shape");
    Check(d);
    Case e(op);
    seed += 2;
    e.In(FewValues(DType::kInt32, {3, 1, 5}, seed)).In(FewValues(DType::kInt32, {2, 1, 4, 1}, seed + 1));
    e.Label(std::string(op) + " both broadcast, b of higher rank");
    Check(e);
    Case f(op);
    seed += 2;
    f.In(FewValues(DType::kFloat32, {0, 3}, seed)).In(FewValues(DType::kFloat32, {3}, seed + 1));
    f.Label(std::string(op) + " empty");
    Check(f);
  }
}

TEST_F(LogicStepsTest, NanComparesFalse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    for (const char* op : kComparisons) {
      Case c(op);
      c.In(Values(dtype, {nan, nan, 1, -0.0, INFINITY, nan}));
      c.In(Values(dtype, {nan, 1, nan, 0.0, INFINITY, -INFINITY}));
      c.Label(std::string(op) + " NaN " + std::string(ir::DTypeName(dtype)));
      Check(c);
    }
  }
}

TEST_F(LogicStepsTest, EqualOfBools) {
  Case c("Equal");
  c.In(FewValues(DType::kBool, {3, 1}, 1)).In(FewValues(DType::kBool, {1, 4}, 2)).Label("bool [3,1] vs [1,4]");
  Check(c);
}

// ---- And, Or, Xor, Not ----------------------------------------------------------------------------

TEST_F(LogicStepsTest, AndOrXorNot) {
  uint32_t seed = 200;
  for (const char* op : {"And", "Or", "Xor"}) {
    Case a(op);
    seed += 2;
    a.In(FewValues(DType::kBool, {2, 1, 4}, seed)).In(FewValues(DType::kBool, {3, 1}, seed + 1));
    a.Label(std::string(op) + " [2,1,4] vs [3,1]");
    Check(a);
    Case b(op);
    seed += 2;
    b.In(FewValues(DType::kBool, {2, 3, 4, 5}, seed), /*nhwc=*/true).In(FewValues(DType::kBool, {5}, seed + 1));
    b.Label(std::string(op) + " NHWC vs [5]");
    Check(b);
  }
  Case n("Not");
  n.In(FewValues(DType::kBool, {5, 7}, 1)).Label("Not [5,7]");
  Check(n);
  Case m("Not");
  m.In(FewValues(DType::kBool, {2, 3, 4, 5}, 2), /*nhwc=*/true).Label("Not NHWC");
  Check(m);
}

// ---- IsNaN, IsInf ---------------------------------------------------------------------------------

TEST_F(LogicStepsTest, IsNaNAndIsInf) {
  uint32_t seed = 300;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    const std::string type(ir::DTypeName(dtype));
    Case a("IsNaN");
    a.In(FewValues(dtype, {4, 33}, ++seed)).Label("IsNaN " + type);
    Check(a);
    Case b("IsNaN");
    b.In(FewValues(dtype, {2, 3, 4, 5}, ++seed), /*nhwc=*/true).Label("IsNaN NHWC " + type);
    Check(b);
    for (int flags = 0; flags < 4; ++flags) {
      Case c("IsInf");
      c.In(FewValues(dtype, {3, 50}, ++seed));
      c.Attr("detect_negative", int64_t{flags & 1}).Attr("detect_positive", int64_t{(flags >> 1) & 1});
      c.Label("IsInf " + type + " flags " + std::to_string(flags));
      Check(c);
    }
    Case d("IsInf");
    d.In(FewValues(dtype, {2, 3, 4, 5}, ++seed), /*nhwc=*/true).Label("IsInf NHWC " + type);
    Check(d);
  }
}

// ---- Mod ------------------------------------------------------------------------------------------

TEST_F(LogicStepsTest, ModOfFloats) {
  Case a("Mod");
  a.In(Random(DType::kFloat32, {3, 4}, 1)).In(Random(DType::kFloat32, {4}, 2)).Attr("fmod", int64_t{1});
  a.Label("fp32 fmod broadcast");
  Check(a);
  Case b("Mod");
  b.In(FewValues(DType::kFloat32, {40}, 3)).In(FewValues(DType::kFloat32, {40}, 4)).Attr("fmod", int64_t{1});
  b.Label("fp32 fmod of NaN, inf, zero divisors");
  Check(b);
  Case c("Mod");
  c.In(Random(DType::kFloat16, {2, 3, 4, 5}, 5), /*nhwc=*/true)
      .Const(Random(DType::kFloat16, {3, 1, 1}, 6))
      .Attr("fmod", int64_t{1})
      .Label("fp16 NHWC fmod by a constant");
  Check(c);
}

TEST_F(LogicStepsTest, ModOfIntegersByConstantDivisors) {
  for (int fmod = 0; fmod < 2; ++fmod) {
    const std::string form = fmod ? " fmod" : " python";
    Case a("Mod");
    a.In(Random(DType::kInt32, {5, 4}, 1)).Const(Values(DType::kInt32, {3, -3, 7, -1})).Attr("fmod", int64_t{fmod});
    a.Label("int32" + form);
    Check(a);
    Case b("Mod");
    b.In(Random(DType::kInt64, {3, 2}, 2))
        .Const(Values(DType::kInt64, {5e9, -7}))
        .Attr("fmod", int64_t{fmod})
        .Label("int64" + form);
    Check(b);
    Case c("Mod");
    c.In(Values(DType::kInt8, {-128, 127, -7, 7, 0, -1}))
        .Const(Values(DType::kInt8, {-1, 3, -3, 3, -128, 127}))
        .Attr("fmod", int64_t{fmod})
        .Label("int8 extremes" + form);
    Check(c);
    Case d("Mod");
    d.In(Values(DType::kInt32, {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -9, 9}))
        .Const(Values(DType::kInt32, {-1}))
        .Attr("fmod", int64_t{fmod})
        .Label("INT_MIN mod -1" + form);
    Check(d);
    Case e("Mod");
    e.In(FewValues(DType::kUint8, {6, 2}, 3)).Const(Values(DType::kUint8, {3, 200})).Attr("fmod", int64_t{fmod});
    e.Label("uint8" + form);
    Check(e);
  }
}

// ---- CUDA graph capture ---------------------------------------------------------------------------

TEST_F(LogicStepsTest, StepsCaptureIntoACudaGraph) {
  Case a("Less");
  a.In(FewValues(DType::kFloat32, {4, 6}, 1)).In(FewValues(DType::kFloat32, {6}, 2)).Label("captured Less");
  CheckCaptured(a);
  Case b("IsNaN");
  b.In(FewValues(DType::kFloat16, {7, 3}, 3)).Label("captured IsNaN");
  CheckCaptured(b);
  Case c("Mod");
  c.In(Random(DType::kInt64, {4, 3}, 4)).Const(Values(DType::kInt64, {3, -5, 11})).Label("captured Mod");
  CheckCaptured(c);
}

// ---- The support rules (no GPU needed) ------------------------------------------------------------

bool Supports(Case& c) { return CudaKernelSupports(c.graph(), c.node()); }

TEST(LogicKernelSupportsTest, CoveredForms) {
  for (const char* op : kComparisons) {
    for (DType dtype : kNumericTypes) {
      Case c(op);
      c.In(Random(dtype, {2, 3}, 1)).In(Random(dtype, {3}, 2));
      EXPECT_TRUE(Supports(c)) << op << " " << ir::DTypeName(dtype);
    }
  }
  Case equal("Equal");
  equal.In(Random(DType::kBool, {2}, 1)).In(Random(DType::kBool, {2}, 2));
  EXPECT_TRUE(Supports(equal)) << "Equal of bools";
  for (const char* op : {"And", "Or", "Xor"}) {
    Case c(op);
    c.In(Random(DType::kBool, {2, 3}, 1)).In(Random(DType::kBool, {1}, 2));
    EXPECT_TRUE(Supports(c)) << op;
  }
  Case no("Not");
  no.In(Random(DType::kBool, {4}, 1));
  EXPECT_TRUE(Supports(no));
  Case nan("IsNaN");
  nan.In(Random(DType::kFloat16, {4}, 1));
  EXPECT_TRUE(Supports(nan));
  Case inf("IsInf", 10);
  inf.In(Random(DType::kFloat32, {4}, 1)).Attr("detect_positive", int64_t{0});
  EXPECT_TRUE(Supports(inf));
  Case fmod("Mod");
  fmod.In(Random(DType::kFloat16, {4}, 1)).In(Random(DType::kFloat16, {4}, 2)).Attr("fmod", int64_t{1});
  EXPECT_TRUE(Supports(fmod)) << "float Mod, divisor computed at run time";
  Case imod("Mod");
  imod.In(Random(DType::kInt64, {3, 2}, 1)).Const(Ints({3, -2}));
  EXPECT_TRUE(Supports(imod)) << "integer Mod by a constant without zeros";
}

TEST(LogicKernelSupportsTest, FormsLeftToTheHost) {
  Case greater("Greater");
  greater.In(Random(DType::kBool, {2}, 1)).In(Random(DType::kBool, {2}, 2));
  EXPECT_FALSE(Supports(greater)) << "ordering of bools";
  Case mixed("Equal");
  mixed.In(Random(DType::kInt32, {2}, 1)).In(Random(DType::kInt64, {2}, 2));
  EXPECT_FALSE(Supports(mixed)) << "operands of two dtypes";
  Case f64("Less");
  f64.In(*Tensor::Create(DType::kFloat64, {2})).In(*Tensor::Create(DType::kFloat64, {2}));
  EXPECT_FALSE(Supports(f64)) << "float64";
  Case and_int("And");
  and_int.In(Random(DType::kInt32, {2}, 1)).In(Random(DType::kInt32, {2}, 2));
  EXPECT_FALSE(Supports(and_int)) << "And of integers";
  Case not_int("Not");
  not_int.In(Random(DType::kUint8, {2}, 1));
  EXPECT_FALSE(Supports(not_int)) << "Not of uint8";
  Case nan_int("IsNaN");
  nan_int.In(Random(DType::kInt32, {2}, 1));
  EXPECT_FALSE(Supports(nan_int)) << "IsNaN of integers";
  Case runtime_divisor("Mod");
  runtime_divisor.In(Random(DType::kInt32, {4}, 1)).In(Ints({3}, DType::kInt32));
  EXPECT_FALSE(Supports(runtime_divisor)) << "integer divisor computed at run time (may hold 0)";
  Case zero_divisor("Mod");
  zero_divisor.In(Random(DType::kInt64, {3, 2}, 1)).Const(Ints({3, 0}));
  EXPECT_FALSE(Supports(zero_divisor)) << "constant integer divisor with a zero: the host reports it";
  Case float_python("Mod");
  float_python.In(Random(DType::kFloat32, {4}, 1)).In(Random(DType::kFloat32, {4}, 2));
  EXPECT_FALSE(Supports(float_python)) << "float Mod without fmod";
  Case rank9("Equal");
  rank9.In(Random(DType::kFloat32, {1, 1, 1, 1, 1, 1, 1, 1, 2}, 1)).In(Random(DType::kFloat32, {2}, 2));
  EXPECT_FALSE(Supports(rank9)) << "rank above kMaxRank";
}

// The float unary math of the pointwise path: float32 and float16 only.
TEST(LogicKernelSupportsTest, FloatUnaryMathRunsPointwise) {
  const char* const ops[] = {"Sin",   "Cos",   "Tan",   "Asin",  "Acos", "Atan",  "Sinh", "Cosh",
                             "Asinh", "Acosh", "Atanh", "Floor", "Ceil", "Round", "Sign", "Softsign"};
  for (const char* op : ops) {
    EXPECT_TRUE(HasOwnCudaKernel(op)) << op;
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      Case c(op);
      c.In(Random(dtype, {2, 3}, 1));
      EXPECT_TRUE(RunsOnDevicePointwise(c.graph(), c.node())) << op << " " << ir::DTypeName(dtype);
    }
  }
  Case sign("Sign");
  sign.In(Random(DType::kInt32, {3}, 1));
  EXPECT_FALSE(RunsOnDevicePointwise(sign.graph(), sign.node())) << "integer Sign stays on the host";
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Not",
                         "IsNaN", "IsInf", "Mod"}) {
    EXPECT_TRUE(HasOwnCudaKernel(op)) << op;
  }
}

}  // namespace
}  // namespace exec
