// Symbolic shapes for type inference: a Dim is a known size, a named symbol ("batch"), or unknown.
#ifndef ONNXRUN_IR_SHAPE_H_
#define ONNXRUN_IR_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "ir/dtype.h"

namespace ir {

struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // set for named symbolic dims; empty and value < 0 means unknown

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT: implicit so shape code reads naturally
  static Dim Symbol(std::string name) {
    Dim d;
    d.symbol = std::move(name);
    return d;
  }
  bool known() const { return value >= 0; }
  bool operator==(const Dim& other) const {
    return known() ? value == other.value : (!symbol.empty() && symbol == other.symbol);
  }
  bool operator!=(const Dim& other) const { return !(*this == other); }
  std::string ToString() const;
};

// Arithmetic: known op known is known; on named or known dims a named expression ("floor((H-1)/2)"),
// so that equal computations on the same input symbols give equal dims; with an anonymous
// (unknown, unnamed) operand unknown.
Dim operator+(const Dim& a, const Dim& b);
Dim operator-(const Dim& a, const Dim& b);
Dim operator*(const Dim& a, const Dim& b);
Dim CeilDiv(const Dim& a, int64_t b);
// a + c for a constant c of either sign (a Dim cannot hold a negative constant).
Dim AddConstant(const Dim& a, int64_t c);
Dim FloorDiv(const Dim& a, int64_t b);

using Shape = std::vector<Dim>;

Shape ShapeFromInts(absl::Span<const int64_t> dims);
// The dims when all are known.
std::optional<std::vector<int64_t>> ShapeToInts(const Shape& shape);
std::string ShapeToString(const Shape& shape);

// What a value holds: a tensor, ONNX's sequence (of tensors, or of maps: ZipMap's
// seq(map(int64|string, float))), or a map (keys and values, two 1-D tensors).
enum class ValueKind : uint8_t { kTensor, kSequence, kMap };

// dtype + (optional) shape of a value. shape == nullopt means the rank is unknown.
// Non-tensor values (ONNX's seq(...) and optional(...)): `kind` and `optional` say which, dtype is
// the element dtype and shape is nullopt (element shapes are not tracked, so passes that look at
// ranks leave these values alone).
struct TensorType {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;  // optional(tensor) or optional(seq): may hold no element
  // Set for a map, map(map_key, dtype), and a sequence of maps, seq(map(map_key, dtype));
  // kUndefined otherwise.
  DType map_key = DType::kUndefined;

  static TensorType Sequence(DType elem_dtype, bool optional = false) {
    return {elem_dtype, std::nullopt, ValueKind::kSequence, optional};
  }
  static TensorType SequenceOfMaps(DType key_dtype, DType value_dtype) {
    return {value_dtype, std::nullopt, ValueKind::kSequence, false, key_dtype};
  }
  // A map (DictVectorizer's and CastMap's input): 1-D keys and values, no shape.
  static TensorType Map(DType key_dtype, DType value_dtype) {
    return {value_dtype, std::nullopt, ValueKind::kMap, false, key_dtype};
  }
  // A sequence of tensors (what the sequence ops take), optional or not.
  bool is_tensor_sequence() const { return kind == ValueKind::kSequence && map_key == DType::kUndefined; }
  // A plain tensor (not a sequence, not optional).
  bool is_tensor() const { return kind == ValueKind::kTensor && !optional; }

  std::string ToString() const;
  int64_t rank() const { return shape ? static_cast<int64_t>(shape->size()) : -1; }
};

}  // namespace ir

#endif  // ONNXRUN_IR_SHAPE_H_
