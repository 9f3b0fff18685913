// Symbolic dim arithmetic and shape printing.
#include "ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ir {

std::string Dim::ToString() const {
  if (known()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

namespace {

// A dim that is neither known nor named: the result of any arithmetic on it is unknown too.
bool Anonymous(const Dim& d) { return !d.known() && d.symbol.empty(); }

// The symbolic result `text` of arithmetic on named or known dims (unknown when any is anonymous):
// equal expressions of the same input symbols give equal dims, so ops on a dynamic H or W still
// see that their operands agree.
Dim Expression(const Dim& a, const Dim& b, const std::string& text) {
  return Anonymous(a) || Anonymous(b) ? Dim() : Dim::Symbol(text);
}

}  // namespace

Dim operator+(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return Dim(a.value + b.value);
  if (b.known()) return AddConstant(a, b.value);
  if (a.known()) return AddConstant(b, a.value);
  return Expression(a, b, absl::StrCat("(", a.ToString(), "+", b.ToString(), ")"));
}
Dim operator-(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return Dim(a.value - b.value);
  if (b.known()) return AddConstant(a, -b.value);
  return Expression(a, b, absl::StrCat("(", a.ToString(), "-", b.ToString(), ")"));
}
Dim AddConstant(const Dim& a, int64_t c) {
  if (a.known()) return Dim(a.value + c);
  if (c == 0 || Anonymous(a)) return a;
  return Dim::Symbol(absl::StrCat("(", a.symbol, c < 0 ? "-" : "+", c < 0 ? -c : c, ")"));
}
Dim operator*(const Dim& a, const Dim& b) {
  if (a.known() && a.value == 1) return b;
  if (b.known() && b.value == 1) return a;
  if (a.known() && b.known()) return Dim(a.value * b.value);
  return Expression(a, b, absl::StrCat(a.ToString(), "*", b.ToString()));
}
Dim CeilDiv(const Dim& a, int64_t b) {
  if (b <= 0) return Dim();
  if (a.known()) return Dim((a.value + b - 1) / b);
  return b == 1 ? a : Expression(a, Dim(b), absl::StrCat("ceil(", a.ToString(), "/", b, ")"));
}
Dim FloorDiv(const Dim& a, int64_t b) {
  if (b <= 0) return Dim();
  if (a.known()) return Dim(a.value / b);
  return b == 1 ? a : Expression(a, Dim(b), absl::StrCat("floor(", a.ToString(), "/", b, ")"));
}

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
  if (kind == ValueKind::kSequence) {
    text = map_key == DType::kUndefined ? absl::StrCat("seq(", DTypeName(dtype), ")")
                                        : absl::StrCat("seq(map(", DTypeName(map_key), ",", DTypeName(dtype), "))");
  }
  if (kind == ValueKind::kMap) text = absl::StrCat("map(", DTypeName(map_key), ",", DTypeName(dtype), ")");
  return optional ? absl::StrCat("optional(", text, ")") : text;
}

}  // namespace ir
