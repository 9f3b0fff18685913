// fp16 <-> fp32 conversion (bit manipulation, round to nearest even, subnormals, inf and NaN kept).
#include "ir/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ir {

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ff;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

uint16_t FloatToHalfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t abs_bits = bits & 0x7fffffff;
  if (abs_bits >= 0x7f800000) {  // inf or NaN
    return sign | 0x7c00 | (abs_bits > 0x7f800000 ? 0x200 : 0);
  }
  if (abs_bits >= 0x477ff000) return sign | 0x7c00;  // rounds to >= 65520: overflow
  if (abs_bits < 0x38800000) {                       // result is subnormal or zero
    if (abs_bits < 0x33000000) return sign;          // below half the smallest subnormal
    uint32_t exponent = abs_bits >> 23;
    uint32_t mantissa = (abs_bits & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exponent;  // 113 + 13 - exponent
    uint32_t half_mantissa = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1))) ++half_mantissa;
    return sign | static_cast<uint16_t>(half_mantissa);
  }
  uint32_t rounded = abs_bits + 0xfff + ((abs_bits >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

float BFloat16BitsToFloat(uint16_t bits) {
  uint32_t full = static_cast<uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &full, sizeof(out));
  return out;
}

uint16_t FloatToBFloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

namespace {

constexpr float kHalfMax = 65504.0f;

void SaturatedScalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = src[i];
    dst[i] = FloatToHalfBits(std::isfinite(v) ? std::clamp(v, -kHalfMax, kHalfMax) : v);
  }
}

#if defined(__x86_64__)
// CPUID leaf 1: AVX, F16C and OSXSAVE; XGETBV: the OS saves the XMM and YMM registers. (gcc's and
// clang's __builtin_cpu_supports do not both know "f16c".)
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned kOsxsave = 1u << 27, kAvx = 1u << 28, kF16c = 1u << 29;
  if ((ecx & (kOsxsave | kAvx | kF16c)) != (kOsxsave | kAvx | kF16c)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 6u) == 6u;
}

// Clamps finite lanes to +-65504 (max/min return their second operand, the value, for a NaN lane;
// infinities are put back), then VCVTPS2PH with round to nearest even.
__attribute__((target("avx,f16c"))) void SaturatedF16c(const float* src, uint16_t* dst, int64_t n) {
  const __m256 hi = _mm256_set1_ps(kHalfMax), lo = _mm256_set1_ps(-kHalfMax);
  const __m256 inf = _mm256_set1_ps(INFINITY), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    const __m256 clamped = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    const __m256 infinite = _mm256_cmp_ps(_mm256_andnot_ps(sign, v), inf, _CMP_EQ_OQ);
    const __m128i half = _mm256_cvtps_ph(_mm256_blendv_ps(clamped, v, infinite), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), half);
  }
  SaturatedScalar(src + i, dst + i, n - i);
}
#endif

}  // namespace

void FloatsToHalfBitsSaturated(const float* src, uint16_t* dst, int64_t n) {
#if defined(__x86_64__)
  static const bool f16c = CpuHasF16c();
  if (f16c) return SaturatedF16c(src, dst, n);
#endif
  SaturatedScalar(src, dst, n);
}

}  // namespace ir
