// Owns Cast's conversions between string tensors and the other dtypes (ONNX Cast, opset 6+), used
// by the Cast kernel (elementwise.cc); the text forms are here so that tests can check them.
//
// Numbers to text:
//   - floating point: the shortest digits that read back to the same value of the source dtype
//     (float16 and bfloat16 included), spelt as numpy's str() spells them, which is how ONNX's
//     stored outputs were written: positional for 1e-4 <= |x| < 1e16 ("0.47892547", "100.0"),
//     scientific otherwise ("1e-05", "1.5e+16"); NaN is "NaN", infinities "INF" and "-INF" (the
//     spellings the spec reserves);
//   - integers: decimal; bool: "1" or "0" (as ONNX Runtime).
// Text to numbers (locale independent; surrounding ASCII whitespace ignored):
//   - floating point: plain and scientific decimals with an optional sign; "NaN", "INF", "+INF",
//     "-INF" (and "Infinity") in any case; out-of-range magnitudes become infinity or zero;
//   - integers: an integer literal; otherwise a decimal, truncated toward zero and saturated to
//     the type's range ("100.5" gives 100, as the spec allows); wider integers wrap as Cast does;
//   - bool: "true"/"false" in any case, else a number (nonzero is true).
// Text that is not a number is an InvalidArgument error naming the element (the spec leaves it
// undefined; an error is the safe reading).
#ifndef ONNXRUN_KERNELS_CPU_STRING_CAST_H_
#define ONNXRUN_KERNELS_CPU_STRING_CAST_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "ir/tensor.h"

namespace kernels::cpu {

// out (kString) = x's elements as text; same element count, x of any non-string dtype.
absl::Status CastToString(const ir::Tensor& x, ir::Tensor& out);
// out (any non-string dtype) = x's (kString) elements parsed.
absl::Status CastFromString(const ir::Tensor& x, ir::Tensor& out);

// The text forms, one element at a time.
std::string FloatToString(float value);
std::string DoubleToString(double value);
std::string Float16ToString(uint16_t bits);
std::string BFloat16ToString(uint16_t bits);
// nullopt when `text` is not a number.
std::optional<double> ParseDouble(std::string_view text);
std::optional<float> ParseFloat(std::string_view text);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_STRING_CAST_H_
