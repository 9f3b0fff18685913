// Symbolic dim arithmetic and shape printing.
#include "ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ir {

std::string Dim::ToString() const {
  if (known()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

Dim operator+(const Dim& a, const Dim& b) { return a.known() && b.known() ? Dim(a.value + b.value) : Dim(); }
Dim operator-(const Dim& a, const Dim& b) { return a.known() && b.known() ? Dim(a.value - b.value) : Dim(); }
Dim operator*(const Dim& a, const Dim& b) {
  if (a.known() && a.value == 1) return b;
  if (b.known() && b.value == 1) return a;
  return a.known() && b.known() ? Dim(a.value * b.value) : Dim();
}
Dim CeilDiv(const Dim& a, int64_t b) { return a.known() && b > 0 ? Dim((a.value + b - 1) / b) : Dim(); }
Dim FloorDiv(const Dim& a, int64_t b) { return a.known() && b > 0 ? Dim(a.value / b) : Dim(); }

Shape ShapeFromInts(absl::Span<const int64_t> dims) { return Shape(dims.begin(), dims.end()); }

std::optional<std::vector<int64_t>> ShapeToInts(const Shape& shape) {
  std::vector<int64_t> out;
  for (const Dim& d : shape) {
    if (!d.known()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::string ShapeToString(const Shape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ",", [](std::string* out, const Dim& d) { out->append(d.ToString()); }),
                      "]");
}

std::string TensorType::ToString() const {
  std::string text = absl::StrCat(DTypeName(dtype), shape ? ShapeToString(*shape) : "[*]");
  if (kind == ValueKind::kSequence) text = absl::StrCat("seq(", DTypeName(dtype), ")");
  return optional ? absl::StrCat("optional(", text, ")") : text;
}

}  // namespace ir
