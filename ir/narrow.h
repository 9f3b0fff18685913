// ONNX's narrow element types (opsets 19-28): float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
// float6 (e2m3, e3m2), float4e2m1, int4/uint4 and int2/uint2. A tensor holds one element per
// byte, its bit code in the low bits (TensorProto packs the 4-, 2- and 6-bit ones; the importer
// unpacks them). These are storage types: Cast, QuantizeLinear / DequantizeLinear and the ops that
// only move elements take them; everything else computes on wider types. Conversions round to
// nearest, ties to even, as ml_dtypes (the ONNX reference) does.
#ifndef ONNXRUN_IR_NARROW_H_
#define ONNXRUN_IR_NARROW_H_

#include <cstdint>

#include "ir/dtype.h"

namespace ir {

bool IsNarrowDType(DType dtype);
bool IsNarrowInteger(DType dtype);  // int4, uint4, int2, uint2
// Bits of one element in a TensorProto (4, 2 or 6 for the packed types, else 8).
int PackedBits(DType dtype);

// The value of bit code `code` (NaN for the NaN codes).
double NarrowToDouble(DType dtype, uint8_t code);

// How a value outside the type's range converts.
enum class NarrowRounding { kNearestEven, kUp, kDown };  // kUp / kDown: float8e8m0's round_mode
// The code of `value`: floats round to nearest even; with `saturate` a value past the largest
// finite one (and +-inf) becomes that one, else inf where the type has it and NaN otherwise (the
// float4/float6 types, which have neither, always saturate). Integers truncate toward zero and
// wrap, as a C cast (saturating integer conversions are QuantizeLinear's: SaturateToNarrowInteger).
uint8_t DoubleToNarrow(DType dtype, double value, bool saturate,
                       NarrowRounding rounding = NarrowRounding::kNearestEven);
// An integer already rounded, clamped to int4/uint4/int2/uint2's range, as its code.
uint8_t SaturateToNarrowInteger(DType dtype, double rounded);

}  // namespace ir

#endif  // ONNXRUN_IR_NARROW_H_
