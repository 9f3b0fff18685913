// ONNX's narrow types against ml_dtypes, the library ONNX's reference implementation converts
// with: the codes below are what `np.array(values, np.float32).astype(t).view(np.uint8)` gives for
// each type t, and the decoded values are ml_dtypes' too.
#include "ir/narrow.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace ir {
namespace {

const std::vector<double> kValues = {
    7.0, 100.0, HUGE_VAL, -HUGE_VAL, std::numeric_limits<double>::quiet_NaN(), 0.25, 0.75, 2.5, 5.0, -0.0, 1e-9, -1e-9};

void ExpectCodes(DType dtype, std::vector<int> want) {
  for (size_t i = 0; i < kValues.size(); ++i) {
    EXPECT_EQ(DoubleToNarrow(dtype, kValues[i], /*saturate=*/false), want[i])
        << DTypeName(dtype) << " of " << kValues[i];
  }
}

TEST(NarrowTest, FloatsRoundAsMlDtypes) {
  ExpectCodes(DType::kFloat4E2M1, {7, 7, 7, 15, 8, 0, 2, 4, 6, 8, 0, 8});
  ExpectCodes(DType::kFloat6E2M3, {30, 31, 31, 63, 32, 2, 6, 18, 26, 32, 0, 32});
  ExpectCodes(DType::kFloat6E3M2, {23, 31, 31, 63, 32, 4, 10, 17, 21, 32, 0, 32});
  ExpectCodes(DType::kFloat8E4M3FN, {78, 108, 127, 255, 127, 40, 52, 66, 74, 128, 0, 128});
  ExpectCodes(DType::kFloat8E5M2, {71, 86, 124, 252, 126, 52, 58, 65, 69, 128, 0, 128});
  ExpectCodes(DType::kFloat8E4M3FNUZ, {86, 116, 128, 128, 128, 48, 60, 74, 82, 0, 0, 0});
}

TEST(NarrowTest, SaturateClampsFloat8Overflow) {
  EXPECT_EQ(NarrowToDouble(DType::kFloat8E4M3FN, DoubleToNarrow(DType::kFloat8E4M3FN, 1000.0, true)), 448.0);
  EXPECT_EQ(NarrowToDouble(DType::kFloat8E4M3FN, DoubleToNarrow(DType::kFloat8E4M3FN, -HUGE_VAL, true)), -448.0);
  EXPECT_EQ(NarrowToDouble(DType::kFloat8E5M2, DoubleToNarrow(DType::kFloat8E5M2, 1e6, true)), 57344.0);
  EXPECT_TRUE(std::isnan(NarrowToDouble(DType::kFloat8E4M3FN, DoubleToNarrow(DType::kFloat8E4M3FN, 1000.0, false))));
}

TEST(NarrowTest, IntegersTruncateAndWrapOrSaturate) {
  // ml_dtypes: [7.6, -8.4, 9, 20, -1.5, 2.5, 15, 16, -3, 0.5] as int4 -> [7, -8, -7, 4, -1, 2, -1, 0, -3, 0].
  const std::vector<double> in = {7.6, -8.4, 9, 20, -1.5, 2.5, 15, 16, -3, 0.5};
  const std::vector<double> int4 = {7, -8, -7, 4, -1, 2, -1, 0, -3, 0}, uint2 = {3, 0, 1, 0, 3, 2, 3, 0, 1, 0};
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(NarrowToDouble(DType::kInt4, DoubleToNarrow(DType::kInt4, in[i], false)), int4[i]) << in[i];
    EXPECT_EQ(NarrowToDouble(DType::kUint2, DoubleToNarrow(DType::kUint2, in[i], false)), uint2[i]) << in[i];
  }
  EXPECT_EQ(NarrowToDouble(DType::kInt4, SaturateToNarrowInteger(DType::kInt4, 20)), 7);
  EXPECT_EQ(NarrowToDouble(DType::kInt4, SaturateToNarrowInteger(DType::kInt4, -20)), -8);
  EXPECT_EQ(NarrowToDouble(DType::kUint4, SaturateToNarrowInteger(DType::kUint4, -3)), 0);
}

TEST(NarrowTest, E8M0IsAPowerOfTwo) {
  EXPECT_EQ(NarrowToDouble(DType::kFloat8E8M0, 127), 1.0);
  EXPECT_EQ(NarrowToDouble(DType::kFloat8E8M0, 130), 8.0);
  EXPECT_TRUE(std::isnan(NarrowToDouble(DType::kFloat8E8M0, 255)));
  EXPECT_EQ(DoubleToNarrow(DType::kFloat8E8M0, 5.0, true, NarrowRounding::kUp), 130);    // 8
  EXPECT_EQ(DoubleToNarrow(DType::kFloat8E8M0, 5.0, true, NarrowRounding::kDown), 129);  // 4
}

}  // namespace
}  // namespace ir
