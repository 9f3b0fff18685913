// Cast to and from string tensors: numbers as numpy's shortest text, text parsed back (see
// string_cast.h for the forms).
#include "kernels/cpu/string_cast.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "kernels/cpu/elementwise_util.h"

namespace kernels::cpu {
namespace {

// A finite number as d1.d2...dn x 10^exponent (digits without trailing zeros but one).
struct Decimal {
  bool negative = false;
  std::string digits;
  int exponent = 0;
};

// Reads to_chars' scientific form "-d.ddde+XX".
Decimal FromScientific(std::string_view text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  for (; i < text.size() && text[i] != 'e'; ++i) {
    if (text[i] != '.') d.digits += text[i];
  }
  if (i + 1 < text.size()) {
    size_t e = i + 1;
    if (text[e] == '+') ++e;
    std::from_chars(text.data() + e, text.data() + text.size(), d.exponent);
  }
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  if (d.digits.empty()) d.digits = "0";
  return d;
}

// numpy's str() of a float: positional when `positional`, else scientific with a signed
// two-digit (at least) exponent.
std::string NumpyText(const Decimal& d, bool positional) {
  std::string out = d.negative ? "-" : "";
  const int n = static_cast<int>(d.digits.size());
  if (!positional) {
    absl::StrAppend(&out, d.digits.substr(0, 1), n > 1 ? "." : "", d.digits.substr(1), "e", d.exponent < 0 ? "-" : "+");
    const int e = std::abs(d.exponent);
    absl::StrAppend(&out, e < 10 ? "0" : "", e);
    return out;
  }
  if (d.exponent < 0) {
    absl::StrAppend(&out, "0.", std::string(-d.exponent - 1, '0'), d.digits);
    return out;
  }
  const int int_len = d.exponent + 1;
  absl::StrAppend(&out, d.digits.substr(0, std::min(n, int_len)), std::string(std::max(0, int_len - n), '0'), ".",
                  n > int_len ? d.digits.substr(int_len) : "0");
  return out;
}

// NaN and the infinities as the spec spells them; nullopt for a finite value.
std::optional<std::string> SpecialText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-INF" : "INF";
  return std::nullopt;
}

// The shortest scientific text of `value` (float or double) that reads back to it.
template <typename T>
std::string ShortestScientific(T value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  return std::string(buf, result.ptr);
}

// The shortest scientific text of a 16-bit float (given as float) that reads back to the same
// bits through `to_bits`; 9 significant digits always do.
std::string ShortestScientific16(float value, uint16_t (*to_bits)(float)) {
  const uint16_t bits = to_bits(value);
  char buf[64];
  for (int precision = 0; precision < 9; ++precision) {
    auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific, precision);
    float back = 0;
    std::from_chars(buf, result.ptr, back);
    if (to_bits(back) == bits) return std::string(buf, result.ptr);
  }
  return ShortestScientific(value);
}

// A finite value in numpy's form: positional for lo <= |x| < hi (1e-4 and 1e16 rounded to the
// source type), from its shortest `scientific` text.
std::string FormatFloating(double value, const std::string& scientific, double lo, double hi) {
  const double magnitude = std::fabs(value);
  return NumpyText(FromScientific(scientific), value == 0 || (magnitude >= lo && magnitude < hi));
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Drops one leading '+' (from_chars takes only '-'); false when a second sign follows.
bool StripPlus(std::string_view& s) {
  if (s.empty() || s.front() != '+') return true;
  s.remove_prefix(1);
  return s.empty() || (s.front() != '+' && s.front() != '-');
}

// A float or double literal; out-of-range magnitudes become infinity or zero.
template <typename T>
std::optional<T> ParseFloating(std::string_view text) {
  text = Trim(text);
  if (!StripPlus(text) || text.empty()) return std::nullopt;
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ptr != end) return std::nullopt;
  if (ec == std::errc()) return value;
  if (ec != std::errc::result_out_of_range) return std::nullopt;
  const double d = std::strtod(std::string(text).c_str(), nullptr);  // ±HUGE_VAL, or the tiny value
  if constexpr (std::is_same_v<T, float>) {
    if (std::fabs(d) > std::numeric_limits<float>::max()) {
      return d < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    }
  }
  return static_cast<T>(d);
}

// An integer literal read as Wide (int64_t or uint64_t); nullopt when it is not one or overflows.
template <typename Wide>
std::optional<Wide> ParseIntegerLiteral(std::string_view text) {
  text = Trim(text);
  if (!StripPlus(text) || text.empty()) return std::nullopt;
  Wide value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr != end || ec != std::errc()) return std::nullopt;
  return value;
}

// Text to integer type T: an integer literal (wrapping as Cast from int64 does), else a decimal
// truncated and saturated.
template <typename T>
std::optional<T> ParseInteger(std::string_view text) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (std::optional<uint64_t> u = ParseIntegerLiteral<uint64_t>(text)) return static_cast<T>(*u);
  }
  if (std::optional<int64_t> i = ParseIntegerLiteral<int64_t>(text)) return static_cast<T>(*i);
  std::optional<double> d = ParseDouble(text);
  if (!d) return std::nullopt;
  return elementwise::FloatToInteger<T>(*d);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::optional<uint8_t> ParseBool(std::string_view text) {
  const std::string_view t = Trim(text);
  if (EqualsIgnoreCase(t, "true")) return 1;
  if (EqualsIgnoreCase(t, "false")) return 0;
  std::optional<double> d = ParseDouble(t);
  if (!d) return std::nullopt;
  return *d != 0 ? 1 : 0;
}

absl::Status NotANumber(int64_t i, const std::string& text, ir::DType dtype) {
  constexpr size_t kShown = 40;
  const std::string shown = text.size() > kShown ? absl::StrCat(text.substr(0, kShown), "...") : text;
  return absl::InvalidArgumentError(absl::StrCat("Cast: element ", i, " (\"", absl::CHexEscape(shown), "\") is not a ",
                                                 ir::DTypeName(dtype), " literal"));
}

// Parses every string of `in` into `out` (n elements) with `parse` (returning optional<T>).
template <typename T, typename Parse>
absl::Status ParseAll(const std::string* in, T* out, int64_t n, ir::DType dtype, Parse parse) {
  for (int64_t i = 0; i < n; ++i) {
    auto value = parse(in[i]);
    if (!value) return NotANumber(i, in[i], dtype);
    out[i] = static_cast<T>(*value);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ParseIntegers(const ir::Tensor& x, ir::Tensor& out) {
  return ParseAll(x.strings(), out.data<T>(), x.num_elements(), out.dtype(), ParseInteger<T>);
}

template <typename T>
void IntegersToString(const ir::Tensor& x, std::string* out) {
  using Wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;  // NOLINT(runtime/int)
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = std::to_string(static_cast<Wide>(x.data<T>()[i]));
}

// Applies `format` to each element of x (read as T) into out.
template <typename T, typename Format>
void FormatAll(const ir::Tensor& x, std::string* out, Format format) {
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = format(x.data<T>()[i]);
}

absl::Status ExpectSameCount(const ir::Tensor& x, const ir::Tensor& out) {
  if (x.num_elements() == out.num_elements()) return absl::OkStatus();
  return absl::InvalidArgumentError("Cast: output shape does not match input shape");
}

}  // namespace

std::string FloatToString(float value) {
  if (std::optional<std::string> special = SpecialText(value)) return *special;
  return FormatFloating(value, ShortestScientific(value), 1e-4f, 1e16f);
}

std::string DoubleToString(double value) {
  if (std::optional<std::string> special = SpecialText(value)) return *special;
  return FormatFloating(value, ShortestScientific(value), 1e-4, 1e16);
}

std::string Float16ToString(uint16_t bits) {
  const float value = ir::HalfBitsToFloat(bits);
  if (std::optional<std::string> special = SpecialText(value)) return *special;
  const double lo = ir::HalfBitsToFloat(ir::FloatToHalfBits(1e-4f));
  return FormatFloating(value, ShortestScientific16(value, ir::FloatToHalfBits), lo, 1e16);
}

std::string BFloat16ToString(uint16_t bits) {
  const float value = ir::BFloat16BitsToFloat(bits);
  if (std::optional<std::string> special = SpecialText(value)) return *special;
  const double lo = ir::BFloat16BitsToFloat(ir::FloatToBFloat16Bits(1e-4f));
  const double hi = ir::BFloat16BitsToFloat(ir::FloatToBFloat16Bits(1e16f));
  return FormatFloating(value, ShortestScientific16(value, ir::FloatToBFloat16Bits), lo, hi);
}

std::optional<double> ParseDouble(std::string_view text) { return ParseFloating<double>(text); }
std::optional<float> ParseFloat(std::string_view text) { return ParseFloating<float>(text); }

absl::Status CastToString(const ir::Tensor& x, ir::Tensor& out) {
  if (absl::Status s = ExpectSameCount(x, out); !s.ok()) return s;
  if (out.dtype() != ir::DType::kString || !out.is_dense()) return absl::InternalError("Cast: output is not a string");
  std::string* dst = out.mutable_strings();
  switch (x.dtype()) {
    case ir::DType::kString: return out.CopyDataFrom(x);
    case ir::DType::kFloat32: FormatAll<float>(x, dst, FloatToString); break;
    case ir::DType::kFloat64: FormatAll<double>(x, dst, DoubleToString); break;
    case ir::DType::kFloat16: FormatAll<uint16_t>(x, dst, Float16ToString); break;
    case ir::DType::kBFloat16: FormatAll<uint16_t>(x, dst, BFloat16ToString); break;
    case ir::DType::kBool: FormatAll<uint8_t>(x, dst, [](uint8_t b) { return std::string(b ? "1" : "0"); }); break;
    case ir::DType::kInt8: IntegersToString<int8_t>(x, dst); break;
    case ir::DType::kUint8: IntegersToString<uint8_t>(x, dst); break;
    case ir::DType::kInt16: IntegersToString<int16_t>(x, dst); break;
    case ir::DType::kUint16: IntegersToString<uint16_t>(x, dst); break;
    case ir::DType::kInt32: IntegersToString<int32_t>(x, dst); break;
    case ir::DType::kUint32: IntegersToString<uint32_t>(x, dst); break;
    case ir::DType::kInt64: IntegersToString<int64_t>(x, dst); break;
    case ir::DType::kUint64: IntegersToString<uint64_t>(x, dst); break;
    default: return absl::UnimplementedError(absl::StrCat("Cast from ", ir::DTypeName(x.dtype()), " to string"));
  }
  return absl::OkStatus();
}

absl::Status CastFromString(const ir::Tensor& x, ir::Tensor& out) {
  if (absl::Status s = ExpectSameCount(x, out); !s.ok()) return s;
  if (x.dtype() != ir::DType::kString || !x.is_dense()) return absl::InternalError("Cast: input is not a string");
  const std::string* in = x.strings();
  const int64_t n = x.num_elements();
  const ir::DType to = out.dtype();
  auto half = [](const std::string& s) -> std::optional<uint16_t> {
    std::optional<float> f = ParseFloat(s);
    return f ? std::optional<uint16_t>(ir::FloatToHalfBits(*f)) : std::nullopt;
  };
  auto bfloat = [](const std::string& s) -> std::optional<uint16_t> {
    std::optional<float> f = ParseFloat(s);
    return f ? std::optional<uint16_t>(ir::FloatToBFloat16Bits(*f)) : std::nullopt;
  };
  switch (to) {
    case ir::DType::kString: return out.CopyDataFrom(x);
    case ir::DType::kFloat32: return ParseAll(in, out.data<float>(), n, to, ParseFloat);
    case ir::DType::kFloat64: return ParseAll(in, out.data<double>(), n, to, ParseDouble);
    case ir::DType::kFloat16: return ParseAll(in, out.data<uint16_t>(), n, to, half);
    case ir::DType::kBFloat16: return ParseAll(in, out.data<uint16_t>(), n, to, bfloat);
    case ir::DType::kBool: return ParseAll(in, out.data<uint8_t>(), n, to, ParseBool);
    case ir::DType::kInt8: return ParseIntegers<int8_t>(x, out);
    case ir::DType::kUint8: return ParseIntegers<uint8_t>(x, out);
    case ir::DType::kInt16: return ParseIntegers<int16_t>(x, out);
    case ir::DType::kUint16: return ParseIntegers<uint16_t>(x, out);
    case ir::DType::kInt32: return ParseIntegers<int32_t>(x, out);
    case ir::DType::kUint32: return ParseIntegers<uint32_t>(x, out);
    case ir::DType::kInt64: return ParseIntegers<int64_t>(x, out);
    case ir::DType::kUint64: return ParseIntegers<uint64_t>(x, out);
    default: return absl::UnimplementedError(absl::StrCat("Cast from string to ", ir::DTypeName(to)));
  }
}

}  // namespace kernels::cpu
