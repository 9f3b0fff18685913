// Conversions of ONNX's narrow types (see narrow.h). The minifloats share one description (exponent
// and mantissa widths, bias, how they spell inf and NaN); encoding searches the sorted finite
// codes, so every format rounds the same way.
#include "ir/narrow.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ir {
namespace {

// How a minifloat spells NaN: S.1111.111 (e4m3fn), IEEE's all-ones exponent with a nonzero
// mantissa (e5m2), the negative-zero code 0x80 (the fnuz types), or not at all (float4, float6).
enum class NanCode { kAllOnes, kIeee, kNegativeZero, kNone };

struct MiniFloat {
  int exp_bits, mant_bits, bias;
  bool has_inf;
  NanCode nan;
  int sign_shift() const { return exp_bits + mant_bits; }
  uint8_t sign_bit() const { return static_cast<uint8_t>(1 << sign_shift()); }
};

const MiniFloat* FormatOf(DType dtype) {
  static const MiniFloat kE4M3FN{4, 3, 7, false, NanCode::kAllOnes}, kE4M3FNUZ{4, 3, 8, false, NanCode::kNegativeZero},
      kE5M2{5, 2, 15, true, NanCode::kIeee}, kE5M2FNUZ{5, 2, 16, false, NanCode::kNegativeZero},
      kE2M1{2, 1, 1, false, NanCode::kNone}, kE2M3{2, 3, 1, false, NanCode::kNone},
      kE3M2{3, 2, 3, false, NanCode::kNone};
  switch (dtype) {
    case DType::kFloat8E4M3FN: return &kE4M3FN;
    case DType::kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case DType::kFloat8E5M2: return &kE5M2;
    case DType::kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case DType::kFloat4E2M1: return &kE2M1;
    case DType::kFloat6E2M3: return &kE2M3;
    case DType::kFloat6E3M2: return &kE3M2;
    default: return nullptr;
  }
}

double Decode(const MiniFloat& f, uint8_t code) {
  const int emask = (1 << f.exp_bits) - 1, mmask = (1 << f.mant_bits) - 1;
  const bool negative = (code >> f.sign_shift()) & 1;
  const int e = (code >> f.mant_bits) & emask, m = code & mmask;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.nan == NanCode::kNegativeZero && code == f.sign_bit()) return nan;
  if (f.nan == NanCode::kAllOnes && e == emask && m == mmask) return nan;
  if (f.nan == NanCode::kIeee && e == emask) return m != 0 ? nan : (negative ? -1.0 : 1.0) * HUGE_VAL;
  const double magnitude =
      e == 0 ? std::ldexp(m, 1 - f.bias - f.mant_bits) : std::ldexp(1.0 + std::ldexp(m, -f.mant_bits), e - f.bias);
  return negative ? -magnitude : magnitude;
}

// The non-negative finite values of a format, by code (codes 0 .. size - 1 are all finite).
const std::vector<double>& FiniteValues(DType dtype) {
  static std::array<std::vector<double>, 32>* tables = [] {
    auto* t = new std::array<std::vector<double>, 32>();
    for (int d = 17; d <= 28; ++d) {
      const MiniFloat* f = FormatOf(static_cast<DType>(d));
      if (f == nullptr) continue;
      for (int code = 0; code < f->sign_bit(); ++code) {
        const double v = Decode(*f, static_cast<uint8_t>(code));
        if (!std::isfinite(v)) break;
        (*t)[d].push_back(v);
      }
    }
    return t;
  }();
  return (*tables)[static_cast<int>(dtype)];
}

uint8_t NanOf(const MiniFloat& f, bool negative) {
  switch (f.nan) {
    case NanCode::kAllOnes: return static_cast<uint8_t>((negative ? f.sign_bit() : 0) | (f.sign_bit() - 1));
    case NanCode::kIeee: return static_cast<uint8_t>((negative ? f.sign_bit() : 0) | (f.sign_bit() - 2));
    case NanCode::kNegativeZero: return f.sign_bit();
    case NanCode::kNone: return f.sign_bit();  // as ml_dtypes: the sign bit alone
  }
  return 0;
}

uint8_t EncodeMiniFloat(DType dtype, const MiniFloat& f, double value, bool saturate) {
  const bool negative = std::signbit(value);
  if (std::isnan(value)) return NanOf(f, negative);
  const std::vector<double>& values = FiniteValues(dtype);
  const uint8_t max_code = static_cast<uint8_t>(values.size() - 1);
  const double a = std::abs(value), max = values.back(), half_ulp = (max - values[values.size() - 2]) / 2;
  uint8_t code;
  if (a > max) {
    const bool rounds_to_max = a < max + half_ulp || (a == max + half_ulp && (max_code & 1) == 0);
    if (rounds_to_max || saturate || (!f.has_inf && f.nan == NanCode::kNone)) {
      code = max_code;
    } else if (f.has_inf) {
      code = static_cast<uint8_t>(max_code + 1);  // e5m2: the code after the largest finite one is inf
    } else {
      return NanOf(f, negative);
    }
  } else {
    const auto above = std::lower_bound(values.begin(), values.end(), a);
    code = static_cast<uint8_t>(above - values.begin());
    if (*above != a) {  // between code - 1 and code: the nearer, ties to the even code
      const double below_gap = a - values[code - 1], above_gap = *above - a;
      if (below_gap < above_gap || (below_gap == above_gap && ((code - 1) & 1) == 0)) --code;
    }
  }
  if (!negative) return code;
  if (code == 0 && f.nan == NanCode::kNegativeZero) return 0;  // the fnuz types have no -0
  return static_cast<uint8_t>(code | f.sign_bit());
}

// float8e8m0: 2^(code - 127), 255 NaN; the float32 exponent, rounded by `rounding` (ONNX's
// reference, to_float8e8m0).
uint8_t EncodeE8M0(double value, bool saturate, NarrowRounding rounding) {
  const float x = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  bool up = false;
  if (rounding == NarrowRounding::kNearestEven) {
    const bool g = bits & 0x400000, r = bits & 0x200000, s = bits & 0x1FFFFF, lsb = exponent > 0;
    up = g && (r || s || lsb);
  } else if (rounding == NarrowRounding::kUp) {
    up = (bits & 0x7FFFFF) != 0;
  }
  if (up && !(saturate && exponent == 0xFE)) ++exponent;
  return static_cast<uint8_t>(exponent);
}

// int4 / uint4 / int2 / uint2: bits and signedness.
bool IntegerFormat(DType dtype, int& bits, bool& is_signed) {
  switch (dtype) {
    case DType::kInt4: bits = 4, is_signed = true; return true;
    case DType::kUint4: bits = 4, is_signed = false; return true;
    case DType::kInt2: bits = 2, is_signed = true; return true;
    case DType::kUint2: bits = 2, is_signed = false; return true;
    default: return false;
  }
}

}  // namespace

bool IsNarrowDType(DType dtype) {
  const int code = static_cast<int>(dtype);
  return code >= 17 && code <= 28;
}

bool IsNarrowInteger(DType dtype) {
  int bits;
  bool is_signed;
  return IntegerFormat(dtype, bits, is_signed);
}

int PackedBits(DType dtype) {
  switch (dtype) {
    case DType::kInt4:
    case DType::kUint4:
    case DType::kFloat4E2M1: return 4;
    case DType::kInt2:
    case DType::kUint2: return 2;
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2: return 6;
    default: return 8;
  }
}

double NarrowToDouble(DType dtype, uint8_t code) {
  if (const MiniFloat* f = FormatOf(dtype)) return Decode(*f, code);
  if (dtype == DType::kFloat8E8M0)
    return code == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, code - 127);
  int bits;
  bool is_signed;
  if (!IntegerFormat(dtype, bits, is_signed)) return 0;
  const int value = code & ((1 << bits) - 1);
  return is_signed && value >= (1 << (bits - 1)) ? value - (1 << bits) : value;
}

uint8_t DoubleToNarrow(DType dtype, double value, bool saturate, NarrowRounding rounding) {
  if (const MiniFloat* f = FormatOf(dtype)) return EncodeMiniFloat(dtype, *f, value, saturate);
  if (dtype == DType::kFloat8E8M0) return EncodeE8M0(value, saturate, rounding);
  int bits;
  bool is_signed;
  if (!IntegerFormat(dtype, bits, is_signed) || !std::isfinite(value)) return 0;
  const double truncated = std::trunc(value);
  const int64_t wrapped = std::abs(truncated) < 9.0e18 ? static_cast<int64_t>(truncated) : 0;
  return static_cast<uint8_t>(static_cast<uint64_t>(wrapped) & ((1u << bits) - 1));
}

uint8_t SaturateToNarrowInteger(DType dtype, double rounded) {
  int bits;
  bool is_signed;
  if (!IntegerFormat(dtype, bits, is_signed) || std::isnan(rounded)) return 0;
  const double lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  const int value = static_cast<int>(std::clamp(rounded, lo, hi));
  return static_cast<uint8_t>(value & ((1 << bits) - 1));
}

}  // namespace ir
