// kernels/cudnn/rnn_cpu_test.cc: the recurrent ops' gate map (ONNX's W/R row blocks -> cuDNN's
// linear-layer ids) and PackRnnWeights against a simulated weight space whose slots are scattered
// in an order unlike ONNX's. The expectations are spelled with gate names, independently of the
// table in rnn.cc. Needs no GPU.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cudnn/rnn.h"

namespace cudnn {
namespace {

// ONNX's gate order of W/R rows and cuDNN's linear-layer order (input half), by name.
const std::map<RnnCell, std::vector<std::string>> kOnnxGates = {
    {RnnCell::kLstm, {"input", "output", "forget", "cell"}},
    {RnnCell::kGru, {"update", "reset", "new"}},
    {RnnCell::kRnnTanh, {"hidden"}},
};
const std::map<RnnCell, std::vector<std::string>> kCudnnIds = {
    {RnnCell::kLstm, {"input", "forget", "cell", "output"}},
    {RnnCell::kGru, {"reset", "update", "new"}},
    {RnnCell::kRnnTanh, {"hidden"}},
};

int OnnxGateNamed(RnnCell cell, const std::string& name) {
  const std::vector<std::string>& gates = kOnnxGates.at(cell);
  for (size_t i = 0; i < gates.size(); ++i) {
    if (gates[i] == name) return static_cast<int>(i);
  }
  return -1;
}

TEST(RnnGateMapTest, LinearLayersFollowCudnnIdsAndOnnxRowBlocks) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnnTanh}) {
    const std::vector<std::string>& ids = kCudnnIds.at(cell);
    const int n = static_cast<int>(ids.size());
    ASSERT_EQ(RnnGateCount(cell), n);
    const std::vector<RnnLinearLayer> layers = RnnLinearLayers(cell);
    ASSERT_EQ(layers.size(), 2u * n);
    for (int i = 0; i < 2 * n; ++i) {
      SCOPED_TRACE(testing::Message() << "cell " << static_cast<int>(cell) << " id " << i);
      EXPECT_EQ(layers[i].lin_layer_id, i);
      EXPECT_EQ(layers[i].recurrent, i >= n);
      EXPECT_EQ(layers[i].onnx_gate, OnnxGateNamed(cell, ids[i % n]));
    }
  }
}

TEST(RnnGateMapTest, ReluCellHasTheTanhCellsLayers) {
  const std::vector<RnnLinearLayer> relu = RnnLinearLayers(RnnCell::kRnnRelu);
  ASSERT_EQ(relu.size(), 2u);
  EXPECT_EQ(relu[0].onnx_gate, 0);
  EXPECT_EQ(relu[1].onnx_gate, 0);
  EXPECT_TRUE(relu[1].recurrent);
}

// A simulated cuDNN weight space of float elements: slot k (in locator call order reversed) gets
// the matrix then a gap then the bias, so nothing lines up with ONNX's order by accident.
struct FakeSpace {
  RnnSpec spec;
  std::map<std::pair<int, int>, RnnParamSlot> slots;
  size_t bytes = 0;

  explicit FakeSpace(const RnnSpec& s) : spec(s) {
    const int n = RnnGateCount(s.cell);
    size_t offset = 16;  // bytes: slots do not start at 0
    for (int dir = s.directions() - 1; dir >= 0; --dir) {
      for (int id = 2 * n - 1; id >= 0; --id) {
        RnnParamSlot slot;
        slot.matrix_rows = s.hidden_size;
        slot.matrix_cols = id >= n ? s.hidden_size : s.input_size;
        slot.matrix_offset = offset;
        offset += slot.matrix_rows * slot.matrix_cols * 4 + 8;
        slot.bias_offset = offset;
        slot.bias_elements = s.hidden_size;
        offset += s.hidden_size * 4 + 4;
        slots[{dir, id}] = slot;
      }
    }
    bytes = offset;
  }
  RnnSlotLocator Locator() const {
    return [this](int layer, int id) -> absl::StatusOr<RnnParamSlot> { return slots.at({layer, id}); };
  }
};

// W[d][row][col] = 10000 d + 100 row + col (+0.5 for R, so W and R differ); B[d][k] = -(1000 d + k).
struct OnnxTensors {
  std::vector<float> w, r, b;
  OnnxTensors(const RnnSpec& s) {
    const int rows = RnnGateCount(s.cell) * s.hidden_size;
    for (int d = 0; d < s.directions(); ++d) {
      for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < s.input_size; ++col) w.push_back(10000.0f * d + 100.0f * row + col);
        for (int col = 0; col < s.hidden_size; ++col) r.push_back(10000.0f * d + 100.0f * row + col + 0.5f);
      }
      for (int k = 0; k < 2 * rows; ++k) b.push_back(-(1000.0f * d + k));
    }
  }
};

float At(const std::vector<uint8_t>& space, size_t byte_offset, size_t index) {
  float v;
  std::memcpy(&v, space.data() + byte_offset + index * 4, 4);
  return v;
}

void ExpectPacked(const RnnSpec& spec, bool with_bias) {
  const FakeSpace fake(spec);
  const OnnxTensors onnx(spec);
  std::vector<uint8_t> space(fake.bytes, 0);
  RnnOnnxWeights weights{onnx.w.data(), onnx.r.data(), with_bias ? onnx.b.data() : nullptr};
  ASSERT_TRUE(PackRnnWeights(spec, weights, fake.Locator(), space).ok());
  const std::vector<std::string>& ids = kCudnnIds.at(spec.cell);
  const int n = static_cast<int>(ids.size()), h = spec.hidden_size;
  for (int dir = 0; dir < spec.directions(); ++dir) {
    for (int id = 0; id < 2 * n; ++id) {
      SCOPED_TRACE(testing::Message() << "dir " << dir << " id " << id << " (" << ids[id % n] << ")");
      const RnnParamSlot& slot = fake.slots.at({dir, id});
      const bool recurrent = id >= n;
      const int gate = OnnxGateNamed(spec.cell, ids[id % n]);
      const int cols = recurrent ? h : spec.input_size;
      for (int row = 0; row < h; ++row) {
        for (int col = 0; col < cols; ++col) {
          const float expected = 10000.0f * dir + 100.0f * (gate * h + row) + col + (recurrent ? 0.5f : 0.0f);
          ASSERT_EQ(At(space, slot.matrix_offset, row * cols + col), expected) << "row " << row << " col " << col;
        }
      }
      for (int k = 0; k < h; ++k) {
        const float expected = with_bias ? -(1000.0f * dir + (recurrent ? n * h : 0) + gate * h + k) : 0.0f;
        ASSERT_EQ(At(space, slot.bias_offset, k), expected) << "bias " << k;
      }
    }
  }
}

TEST(PackRnnWeightsTest, LstmBidirectional) {
  ExpectPacked({RnnCell::kLstm, IoType::kFloat, false, /*bidirectional=*/true, false, 3, 2}, true);
}
TEST(PackRnnWeightsTest, LstmForwardWithoutBias) {
  ExpectPacked({RnnCell::kLstm, IoType::kFloat, false, false, false, 5, 4}, false);
}
TEST(PackRnnWeightsTest, GruBidirectional) {
  ExpectPacked({RnnCell::kGru, IoType::kFloat, false, true, false, 4, 3}, true);
}
TEST(PackRnnWeightsTest, RnnTanh) { ExpectPacked({RnnCell::kRnnTanh, IoType::kFloat, false, true, true, 2, 5}, true); }

TEST(PackRnnWeightsTest, HalfCopiesTwoByteElements) {
  const RnnSpec spec{RnnCell::kRnnRelu, IoType::kHalf, false, false, false, 2, 2};
  // Rows of W: [1 2; 3 4], of R: [5 6; 7 8]; B = [9 10 | 11 12] (as raw uint16 values).
  const std::vector<uint16_t> w = {1, 2, 3, 4}, r = {5, 6, 7, 8}, b = {9, 10, 11, 12};
  std::map<int, RnnParamSlot> slots = {{0, {20, 2, 2, 0, 2}}, {1, {4, 2, 2, 12, 2}}};
  std::vector<uint8_t> space(32, 0);
  RnnSlotLocator locate = [&](int, int id) -> absl::StatusOr<RnnParamSlot> { return slots.at(id); };
  ASSERT_TRUE(PackRnnWeights(spec, {w.data(), r.data(), b.data()}, locate, space).ok());
  auto half_at = [&](size_t byte) {
    uint16_t v;
    std::memcpy(&v, space.data() + byte, 2);
    return v;
  };
  EXPECT_EQ(half_at(20), 1);
  EXPECT_EQ(half_at(26), 4);
  EXPECT_EQ(half_at(0), 9);
  EXPECT_EQ(half_at(2), 10);
  EXPECT_EQ(half_at(4), 5);
  EXPECT_EQ(half_at(10), 8);
  EXPECT_EQ(half_at(12), 11);
  EXPECT_EQ(half_at(14), 12);
}

TEST(PackRnnWeightsTest, RejectsWrongSlotShapesAndBounds) {
  const RnnSpec spec{RnnCell::kRnnTanh, IoType::kFloat, false, false, false, 3, 2};
  const OnnxTensors onnx(spec);
  const RnnOnnxWeights weights{onnx.w.data(), onnx.r.data(), onnx.b.data()};
  std::vector<uint8_t> space(256, 0);
  auto pack_with = [&](RnnParamSlot slot) {
    return PackRnnWeights(
        spec, weights, [&](int, int) -> absl::StatusOr<RnnParamSlot> { return slot; }, space);
  };
  EXPECT_EQ(pack_with({0, 2, 2, 64, 2}).code(), absl::StatusCode::kInvalidArgument);    // W slot 2x2, not 2x3
  EXPECT_EQ(pack_with({0, 2, 3, 64, 3}).code(), absl::StatusCode::kInvalidArgument);    // 3 biases
  EXPECT_EQ(pack_with({240, 2, 3, 64, 2}).code(), absl::StatusCode::kInvalidArgument);  // past the end
  EXPECT_EQ(pack_with({2, 2, 3, 64, 2}).code(), absl::StatusCode::kInvalidArgument);    // misaligned
  EXPECT_EQ(PackRnnWeights(
                spec, {nullptr, onnx.r.data(), nullptr},
                [](int, int) -> absl::StatusOr<RnnParamSlot> { return RnnParamSlot{}; }, space)
                .code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status not_found = absl::NotFoundError("no slot");
  EXPECT_EQ(PackRnnWeights(
                spec, weights, [&](int, int) -> absl::StatusOr<RnnParamSlot> { return not_found; }, space),
            not_found);
}

}  // namespace
}  // namespace cudnn
