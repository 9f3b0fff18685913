// Tests for ir: fp16 conversion (against IEEE 754 bit patterns), tensor size limits, graph validation.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/half.h"
#include "ir/printer.h"

namespace ir {
namespace {

TEST(HalfTest, KnownBitPatterns) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(5.9604645e-8f), 0x0001);       // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(1.0f + 1.0f / 4096), 0x3c00);  // ties to even
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HalfTest, RoundTripsEveryHalf) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = HalfBitsToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToHalfBits(f), bits) << bits;
  }
}

TEST(TensorTest, RejectsOverflowAndNegativeDims) {
  EXPECT_FALSE(Tensor::Create(DType::kFloat32, {1 << 30, 1 << 30, 1 << 30}).ok());
  EXPECT_FALSE(Tensor::Create(DType::kFloat32, {-1, 3}).ok());
  EXPECT_FALSE(Tensor::Create(DType::kString, {2}).ok());
  absl::StatusOr<Tensor> t = Tensor::Create(DType::kInt64, {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_elements(), 6);
  EXPECT_EQ(t->byte_size(), 48u);
}

TEST(GraphTest, ValidateFindsDanglingInput) {
  Graph g;
  ValueId x = g.AddValue("x", {DType::kFloat32, Shape{Dim(2)}});
  ValueId ghost = g.AddValue("ghost");
  ValueId y = g.AddValue("y");
  g.inputs().push_back(x);
  Node n;
  n.name = "add";
  n.op_type = "Add";
  n.inputs = {x, ghost};
  n.outputs = {y};
  g.AddNode(n);
  g.outputs().push_back(y);
  absl::Status s = g.Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ghost"), std::string::npos) << s;
  EXPECT_NE(PrintGraph(g).find("add: Add(%x, %ghost)"), std::string::npos) << PrintGraph(g);
}

}  // namespace
}  // namespace ir
