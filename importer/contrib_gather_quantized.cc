// ONNX Runtime's GatherBlockQuantized (the block-quantized embedding table of onnxruntime-genai's
// int4 LLMs): Y = Gather(dequantize(data), indices, gather_axis). The table is dequantized once, at
// import, into a constant of the scales' dtype, and the node becomes Gather. data is int4 / uint4
// (one code per element) or uint8 (bits 8, or bits 4: two codes per byte along the last axis, low
// nibble first); blocks of block_size run along quantize_axis (the last axis for uint8); scales and
// zero points hold one value per block. Without zero points a code's zero is 2^(bits-1) for uint8
// and 0 for int4 / uint4, as ORT computes it.
#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"

namespace importer {
namespace {

using ir::DType;
using ir::Tensor;

struct BlockLayout {
  std::vector<int64_t> dims;  // the logical (unpacked) data dims
  int64_t axis = 0, block = 0, blocks = 0, outer = 1, inner = 1;
  bool packed = false;  // uint8 with bits 4
};

absl::StatusOr<BlockLayout> ReadLayout(const ir::Node& node, const Tensor& data) {
  BlockLayout l;
  const int64_t bits = node.attrs.GetInt("bits", 4);
  l.block = node.attrs.GetInt("block_size", 128);
  if (data.dtype() == DType::kUint8) {
    if (bits != 4 && bits != 8) return absl::UnimplementedError(absl::StrCat("bits=", bits, " (4 or 8 for uint8)"));
    l.packed = bits == 4;
  } else if (data.dtype() != DType::kInt4 && data.dtype() != DType::kUint4) {
    return absl::InvalidArgumentError(absl::StrCat("data is ", ir::DTypeName(data.dtype()), ", not int4/uint4/uint8"));
  }
  if (l.block < 16 || l.block > (int64_t{1} << 16) || (l.block & (l.block - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("block_size=", l.block, ": a power of 2 in 16..65536"));
  }
  l.dims = data.shape();
  const int64_t rank = data.rank();
  if (rank < 1) return absl::InvalidArgumentError("data is a scalar");
  if (l.packed) l.dims.back() *= 2;
  l.axis = node.attrs.GetInt("quantize_axis", 1);
  if (l.axis < 0) l.axis += rank;
  if (l.axis < 0 || l.axis >= rank || (data.dtype() == DType::kUint8 && l.axis != rank - 1)) {
    return absl::InvalidArgumentError(absl::StrCat("quantize_axis ", node.attrs.GetInt("quantize_axis", 1),
                                                   " (the last axis for uint8 data) of rank ", rank));
  }
  for (int64_t d = 0; d < rank; ++d) (d < l.axis ? l.outer : l.inner) *= d == l.axis ? 1 : l.dims[d];
  l.blocks = (l.dims[l.axis] + l.block - 1) / l.block;
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(l.dims, DType::kFloat32);
  if (!count.ok()) return count.status();
  return l;
}

// Scales (and zero points, packed like the data for uint8 bits 4) must hold one value per block.
absl::Status CheckBlocks(const BlockLayout& l, const Tensor& scales, const Tensor* zero_points, DType data_dtype) {
  std::vector<int64_t> want = l.dims;
  want[l.axis] = l.blocks;
  if (!ir::IsFloatingPoint(scales.dtype()) || scales.shape() != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("scales must be float ", ir::ShapeToString(want), ", not ", scales.Describe()));
  }
  if (zero_points == nullptr) return absl::OkStatus();
  if (l.packed) want.back() = (want.back() + 1) / 2;
  if (zero_points->dtype() != data_dtype || zero_points->shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat("zero_points must be ", ir::DTypeName(data_dtype), " ",
                                                   ir::ShapeToString(want), ", not ", zero_points->Describe()));
  }
  return absl::OkStatus();
}

// Code `i` of a tensor of codes (two per byte, low nibble first, when packed).
int64_t CodeAt(const Tensor& t, int64_t i, bool packed) {
  if (!packed) return t.GetAsInt64(i);
  const uint8_t byte = t.data<uint8_t>()[i / 2];
  return i % 2 ? byte >> 4 : byte & 15;
}

// Flat index of code (o, j, in) of a [outer, length, inner] view whose last axis is packed in
// pairs when `packed` (then inner is 1 and the rows are ceil(length / 2) bytes).
int64_t CodeIndex(int64_t o, int64_t j, int64_t in, int64_t length, int64_t inner, bool packed) {
  if (packed) return o * ((length + 1) / 2) * 2 + j;
  return (o * length + j) * inner + in;
}

std::vector<float> Dequantized(const BlockLayout& l, const Tensor& data, const Tensor& scales,
                               const Tensor* zero_points) {
  const int64_t length = l.dims[l.axis];
  const double default_zero = data.dtype() != DType::kUint8 ? 0 : l.packed ? 8 : 128;
  std::vector<float> out(static_cast<size_t>(l.outer * length * l.inner));
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t j = 0; j < length; ++j) {
      for (int64_t in = 0; in < l.inner; ++in) {
        const int64_t block = (o * l.blocks + j / l.block) * l.inner + in;
        const double zero =
            zero_points == nullptr
                ? default_zero
                : CodeAt(*zero_points, CodeIndex(o, j / l.block, in, l.blocks, l.inner, l.packed), l.packed);
        const double code = CodeAt(data, CodeIndex(o, j, in, length, l.inner, l.packed), l.packed);
        out[(o * length + j) * l.inner + in] = static_cast<float>((code - zero) * scales.GetAsDouble(block));
      }
    }
  }
  return out;
}

absl::Status GatherBlockQuantizedToGather(ir::Graph& graph, ir::Node& node, std::vector<ir::Node>& prefix) {
  AtTargetOpset(node);
  const Tensor *data = ConstantInput(graph, node, 0), *scales = ConstantInput(graph, node, 2);
  const Tensor* zero_points = ConstantInput(graph, node, 3);
  if (data == nullptr || scales == nullptr || (node.input(3) != ir::kNoValue && zero_points == nullptr)) {
    return absl::UnimplementedError("data, scales and zero_points must be initializers (a quantized table)");
  }
  absl::StatusOr<BlockLayout> layout = ReadLayout(node, *data);
  if (!layout.ok()) return layout.status();
  if (absl::Status valid = CheckBlocks(*layout, *scales, zero_points, data->dtype()); !valid.ok()) return valid;
  absl::StatusOr<Tensor> table =
      ValuesOfType(scales->dtype(), Dequantized(*layout, *data, *scales, zero_points), layout->dims);
  if (!table.ok()) return table.status();
  int64_t gather_axis = node.attrs.GetInt("gather_axis", 0);
  const int64_t rank = static_cast<int64_t>(layout->dims.size());
  if (gather_axis < -rank || gather_axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("gather_axis ", gather_axis, " of rank ", rank));
  }
  const ir::ValueId indices = node.input(1);
  Become(node, "Gather", {NodeConstant(graph, node, "table", *std::move(table)), indices});
  node.attrs.Set("axis", gather_axis);
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, Rewrite> GatherQuantizedContribRewrites() {
  return {{"com.microsoft.GatherBlockQuantized", NeedsInputs({0, 1, 2}, GatherBlockQuantizedToGather)}};
}

}  // namespace importer
