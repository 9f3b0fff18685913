// ONNX Runtime's MatMulNBits (its 2-, 4- and 8-bit weight-only quantizer; onnxruntime-genai's
// LLMs): Y = A x dequantize(B)^T (+ bias). B's blocks are dequantized once, at import, into a
// constant weight [K, N] of A's dtype, the float weight ORT's accuracy level 0 multiplies by; the
// node becomes MatMul (and Add). Layouts as ORT's quantizer writes them: B [N, blocks, blob] of
// codes packed low bits first along K, scales [N, blocks], zero points packed the same way per
// row (or of the scales' dtype); without zero points a code's zero is 2^(bits-1).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"

namespace importer {
namespace {

using ir::Graph;
using ir::kNoValue;
using ir::Node;
using ir::Tensor;

struct NBitsShape {
  int64_t k = 0, n = 0, bits = 0, block = 0, blocks = 0, blob = 0;
};

absl::StatusOr<NBitsShape> ReadShape(const Node& node) {
  NBitsShape s;
  s.k = node.attrs.GetInt("K", 0), s.n = node.attrs.GetInt("N", 0);
  s.bits = node.attrs.GetInt("bits", 4), s.block = node.attrs.GetInt("block_size", 0);
  if (s.bits != 2 && s.bits != 4 && s.bits != 8) {
    return absl::UnimplementedError(absl::StrCat("bits=", s.bits, " (2, 4 or 8 are supported)"));
  }
  constexpr int64_t kMaxDim = int64_t{1} << 31, kMaxBlock = int64_t{1} << 16;
  if (s.k <= 0 || s.n <= 0 || s.k > kMaxDim || s.n > kMaxDim || s.block < 16 || s.block > kMaxBlock ||
      (s.block & (s.block - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("K=", s.k, ", N=", s.n, ", block_size=", s.block,
                     ": K and N must be in 1..2^31, block_size a power of 2 in 16..65536"));
  }
  s.blocks = (s.k + s.block - 1) / s.block, s.blob = s.block * s.bits / 8;
  // The dequantized [K, N] weight must be a tensor onnxrun can hold (B's size is checked against
  // N x blocks x blob, which this bounds too).
  absl::StatusOr<int64_t> weight = ir::CheckedElementCount({s.k, s.n}, ir::DType::kFloat32);
  if (!weight.ok()) return weight.status();
  return s;
}

// Code `index` of a row of `bits`-bit codes packed low bits first.
uint32_t Code(const uint8_t* row, int64_t index, int64_t bits) {
  const int64_t bit = index * bits;
  return (row[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

// The zero point of block `block` of row `n`: packed codes, values of the scales' dtype, or the
// midpoint when there are none.
double ZeroPoint(const NBitsShape& s, const Tensor* zero_points, int64_t n, int64_t block) {
  if (zero_points == nullptr) return static_cast<double>(1 << (s.bits - 1));
  if (zero_points->dtype() != ir::DType::kUint8) return zero_points->GetAsDouble(n * s.blocks + block);
  const int64_t row_bytes = (s.blocks * s.bits + 7) / 8;
  return Code(zero_points->data<uint8_t>() + n * row_bytes, block, s.bits);
}

absl::Status CheckInputs(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zero_points) {
  if (b.dtype() != ir::DType::kUint8 || b.num_elements() != s.n * s.blocks * s.blob) {
    return absl::InvalidArgumentError(absl::StrCat("B must be uint8 [N, blocks, blob] = [", s.n, ", ", s.blocks, ", ",
                                                   s.blob, "] for K=", s.k, ", bits=", s.bits));
  }
  if (!ir::IsFloatingPoint(scales.dtype()) || scales.num_elements() != s.n * s.blocks) {
    return absl::InvalidArgumentError(absl::StrCat("scales must hold N x blocks = ", s.n * s.blocks, " floats"));
  }
  if (zero_points == nullptr) return absl::OkStatus();
  const int64_t packed = s.n * ((s.blocks * s.bits + 7) / 8);
  const bool uint8 = zero_points->dtype() == ir::DType::kUint8;
  if ((uint8 && zero_points->num_elements() != packed) ||
      (!uint8 && (zero_points->dtype() != scales.dtype() || zero_points->num_elements() != s.n * s.blocks))) {
    return absl::InvalidArgumentError("zero_points must be packed uint8 codes or one per scale of its dtype");
  }
  return absl::OkStatus();
}

// dequantize(B)^T as [K, N]: (code - zero point) x scale per block.
std::vector<float> DequantizedWeight(const NBitsShape& s, const Tensor& b, const Tensor& scales,
                                     const Tensor* zero_points) {
  std::vector<float> weight(static_cast<size_t>(s.k * s.n));
  for (int64_t n = 0; n < s.n; ++n) {
    const uint8_t* row = b.data<uint8_t>() + n * s.blocks * s.blob;
    for (int64_t block = 0; block < s.blocks; ++block) {
      const double scale = scales.GetAsDouble(n * s.blocks + block), zero = ZeroPoint(s, zero_points, n, block);
      for (int64_t k = block * s.block; k < std::min(s.k, (block + 1) * s.block); ++k) {
        weight[k * s.n + n] = static_cast<float>((Code(row, k, s.bits) - zero) * scale);
      }
    }
  }
  return weight;
}

absl::Status MatMulNBitsToMatMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  absl::StatusOr<NBitsShape> shape = ReadShape(node);
  if (!shape.ok()) return shape.status();
  const Tensor *b = ConstantInput(graph, node, 1), *scales = ConstantInput(graph, node, 2);
  const Tensor* zero_points = ConstantInput(graph, node, 3);
  if (b == nullptr || scales == nullptr || (node.input(3) != kNoValue && zero_points == nullptr)) {
    return absl::UnimplementedError("B, scales and zero_points must be initializers (weight-only quantization)");
  }
  if (node.input(4) != kNoValue) return absl::UnimplementedError("g_idx (act-order) is not supported");
  if (absl::Status valid = CheckInputs(*shape, *b, *scales, zero_points); !valid.ok()) return valid;
  absl::StatusOr<Tensor> weight = ValuesOfType(
      InputDType(graph, node, 0), DequantizedWeight(*shape, *b, *scales, zero_points), {shape->k, shape->n});
  if (!weight.ok()) return weight.status();
  const ir::ValueId w = NodeConstant(graph, node, "weight", *std::move(weight));
  const ir::ValueId a = node.input(0), bias = node.input(5);
  if (bias == kNoValue) {
    Become(node, "MatMul", {a, w});
  } else {
    Become(node, "Add", {Prepend(graph, node, prefix, "MatMul", {a, w}), bias});
  }
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, Rewrite> NBitsContribRewrites() {
  return {{"com.microsoft.MatMulNBits", NeedsInputs({0, 1, 2}, MatMulNBitsToMatMul)}};
}

}  // namespace importer
