// Tests for ir: fp16 conversion (against IEEE 754 bit patterns), tensor size limits, string tensors, maps,
// graph validation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

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

// The bulk conversion (F16C where the CPU has it) gives FloatToHalfBits' bits with finite values
// saturated: every float16 value, the midpoints between neighbours (ties to even), their float
// neighbours, saturation edges, and a million random bit patterns (subnormals, infinities, NaNs:
// a NaN need only stay a NaN), in a length that is not a multiple of 8.
TEST(HalfTest, BulkSaturatedConversionMatchesScalar) {
  std::vector<float> src;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(bits));
    const float next = HalfBitsToFloat(static_cast<uint16_t>(bits + 1));
    src.push_back(f);
    if (std::isfinite(f) && std::isfinite(next) && (bits & 0x7fff) != 0x7bff) {
      const float mid = f + (next - f) / 2;
      src.insert(src.end(), {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)});
    }
  }
  for (float v : {65504.0f, 65519.0f, 65520.0f, 1e6f, std::numeric_limits<float>::max(), INFINITY, 0.0f}) {
    src.insert(src.end(), {v, -v});
  }
  std::mt19937 gen(7);
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t bits = gen();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    src.push_back(f);
  }
  src.resize(src.size() / 8 * 8 + 5);
  std::vector<uint16_t> got(src.size());
  FloatsToHalfBitsSaturated(src.data(), got.data(), static_cast<int64_t>(src.size()));
  int wrong = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    const float v = src[i];
    if (std::isnan(v)) {
      if (!std::isnan(HalfBitsToFloat(got[i])) && ++wrong <= 5) ADD_FAILURE() << "NaN at " << i;
      continue;
    }
    const uint16_t want = FloatToHalfBits(std::isfinite(v) ? std::clamp(v, -65504.0f, 65504.0f) : v);
    if (got[i] != want && ++wrong <= 5) ADD_FAILURE() << v << ": got " << got[i] << ", want " << want;
  }
  EXPECT_EQ(wrong, 0);
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
  EXPECT_FALSE(Tensor::Create(DType::kUndefined, {2}).ok());
  absl::StatusOr<Tensor> t = Tensor::Create(DType::kInt64, {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_elements(), 6);
  EXPECT_EQ(t->byte_size(), 48u);
}

TEST(TensorTest, StringTensorsHoldStrings) {
  absl::StatusOr<Tensor> t = Tensor::Create(DType::kString, {2, 2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->byte_size(), 0u);
  EXPECT_EQ(t->raw_data(), nullptr);
  ASSERT_NE(t->strings(), nullptr);
  EXPECT_EQ(t->strings()[3], "");
  t->mutable_strings()[0] = "monday";
  EXPECT_EQ(t->host_bytes(), 4 * kStringElementBytes + 6);

  absl::StatusOr<Tensor> flat = t->Reshaped({4});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->strings(), t->strings());  // shared
  Tensor copy = t->Clone();
  copy.mutable_strings()[0] = "tuesday";
  EXPECT_EQ(t->strings()[0], "monday");

  Tensor other = *Tensor::Create(DType::kString, {4});
  ASSERT_TRUE(other.CopyDataFrom(*flat).ok());
  EXPECT_EQ(other.strings()[0], "monday");
  EXPECT_FALSE(other.CopyDataFrom(Tensor::FromFloats({1, 2, 3, 4}, {4})).ok());
  EXPECT_EQ(Tensor::FromStrings({"a", "b"}).strings()[1], "b");
}

TEST(TensorTest, MapsAndSequencesOfMaps) {
  absl::StatusOr<Tensor> map =
      Tensor::Map(Tensor::FromStrings({"cat", "dog"}), Tensor::FromFloats({0.25f, 0.75f}, {2}));
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(map->is_map());
  EXPECT_FALSE(map->is_dense());
  EXPECT_EQ(map->byte_size(), 0u);  // no bytes of its own
  EXPECT_EQ(map->map_keys().strings()[1], "dog");
  EXPECT_EQ(map->map_values().data<float>()[1], 0.75f);
  EXPECT_EQ(map->Describe(), "map(string,float32) of 2");
  const Tensor maps = Tensor::Sequence(DType::kFloat32, {*map, map->Clone()});
  EXPECT_TRUE(maps.is_map_sequence());
  EXPECT_EQ(maps.Describe(), "seq(map(string,float32)) of 2");
  EXPECT_FALSE(Tensor::Sequence(DType::kFloat32, {Tensor::Scalar(1)}).is_map_sequence());
  // Keys and values of one length, 1-D, int64 or string keys.
  EXPECT_FALSE(Tensor::Map(Tensor::FromInt64s({1, 2, 3}), Tensor::FromFloats({1, 2}, {2})).ok());
  EXPECT_FALSE(Tensor::Map(Tensor::FromFloats({1, 2}, {2}), Tensor::FromFloats({1, 2}, {2})).ok());
  EXPECT_FALSE(Tensor::Map(Tensor::FromInt64s({1, 2}), Tensor::FromFloats({1, 2}, {1, 2})).ok());
  EXPECT_EQ(TensorType::SequenceOfMaps(DType::kInt64, DType::kFloat32).ToString(), "seq(map(int64,float32))");
}

TEST(TensorTest, StringTensorsCountAgainstTheLimit) {
  // 2^32 strings at kStringElementBytes each is past the 64 GiB limit.
  absl::StatusOr<Tensor> t = Tensor::Create(DType::kString, {int64_t{1} << 32});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
  EXPECT_FALSE(IsSupportedDType(DType::kString));
  EXPECT_TRUE(IsTensorDType(DType::kString));
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
