// QLinearMatMul's scale dtypes (ops/quantize.cc, kernels/cpu/quantize_gemm.cc), run as the CPU
// executor runs a node: float16 and bfloat16 scales (opset 21) requantize as float32 ones do, the
// three scales must share one dtype, and QLinearConv keeps float32 scales. Values by hand.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/half.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test_tensors::Error;
using test_tensors::F32;
using test_tensors::Make;
using test_tensors::MakeNode;
using test_tensors::U8;
using test_tensors::Values;

ir::Tensor Half(float v) { return Make(ir::DType::kFloat16, {}, std::vector<ir::Half>{ir::Half(v)}); }
ir::Tensor BFloat(float v) { return Make(ir::DType::kBFloat16, {}, std::vector<ir::BFloat16>{ir::BFloat16(v)}); }

// a = [10, 20] - 2, b = [1, 2]^T: acc 8 + 36 = 44; scales 0.5 * 0.25 / 0.125 = 1; y = 44 + 10.
TEST(QLinearMatMulTest, SixteenBitScales) {
  ir::Tensor a = U8({1, 2}, {10, 20}), a_zero = U8({}, {2}), b = U8({2, 1}, {1, 2}), b_zero = U8({}, {0});
  ir::Tensor y_zero = U8({}, {10});
  for (auto make : {&Half, &BFloat}) {
    ir::Tensor a_scale = make(0.5f), b_scale = make(0.25f), y_scale = make(0.125f);
    auto out = RunNode(MakeNode("QLinearMatMul", 1), {&a, &a_scale, &a_zero, &b, &b_scale, &b_zero, &y_scale, &y_zero});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype(), ir::DType::kUint8);
    EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(54));
  }
}

TEST(QLinearMatMulTest, ScaleDtypesMustAgree) {
  ir::Tensor a = U8({1, 2}, {10, 20}), zero = U8({}, {0}), b = U8({2, 1}, {1, 2});
  ir::Tensor half = Half(0.5f), f32 = F32({}, {0.5f}), i32 = test_tensors::I32({}, {1});
  EXPECT_THAT(Error(RunNode(MakeNode("QLinearMatMul", 1), {&a, &half, &zero, &b, &f32, &zero, &half, &zero})),
              HasSubstr("the scales differ in dtype: a_scale float16, input 4 float32"));
  EXPECT_THAT(Error(RunNode(MakeNode("QLinearMatMul", 1), {&a, &i32, &zero, &b, &i32, &zero, &i32, &zero})),
              HasSubstr("input 1 has unsupported dtype int32"));
  // QLinearConv (opset 10) takes float32 scales only.
  ir::Tensor x = U8({1, 1, 1, 1}, {1}), w = U8({1, 1, 1, 1}, {1});
  EXPECT_THAT(Error(RunNode(MakeNode("QLinearConv", 1), {&x, &half, &zero, &w, &half, &zero, &half, &zero})),
              HasSubstr("input 1 has unsupported dtype float16"));
}

}  // namespace
}  // namespace kernels::cpu
