// 16-bit float storage types for the CPU path (IEEE fp16 and bfloat16): hold the bits, compute
// through float.
#ifndef ONNXRUN_IR_HALF_H_
#define ONNXRUN_IR_HALF_H_

#include <cstdint>
#include <type_traits>

namespace ir {

float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToHalfBits(float value);  // round to nearest even

// dst[i] = FloatToHalfBits(src[i]) for i < n, except that finite values beyond float16's range
// saturate to +-65504 (infinities and NaNs convert as they are). Eight at a time with the CPU's
// F16C conversion where it has one (the same bits: IEEE round to nearest even).
void FloatsToHalfBitsSaturated(const float* src, uint16_t* dst, int64_t n);

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float value) : bits(FloatToHalfBits(value)) {}
  explicit Half(double value) : bits(FloatToHalfBits(static_cast<float>(value))) {}
  operator float() const { return HalfBitsToFloat(bits); }
};
static_assert(sizeof(Half) == 2);

// bfloat16: the upper 16 bits of a float32 (round to nearest even; NaN stays NaN).
float BFloat16BitsToFloat(uint16_t bits);
uint16_t FloatToBFloat16Bits(float value);

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(FloatToBFloat16Bits(value)) {}
  explicit BFloat16(double value) : bits(FloatToBFloat16Bits(static_cast<float>(value))) {}
  operator float() const { return BFloat16BitsToFloat(bits); }
};
static_assert(sizeof(BFloat16) == 2);

// The 16-bit float storage types, which compute through float.
template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace ir

#endif  // ONNXRUN_IR_HALF_H_
