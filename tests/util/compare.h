// Element-wise comparison of a computed tensor with a reference, with ONNX's tolerance rule
// |actual - expected| <= atol + rtol * |expected| on every element (NaN must match NaN).
#ifndef ONNXRUN_TESTS_UTIL_COMPARE_H_
#define ONNXRUN_TESTS_UTIL_COMPARE_H_

#include <string>

#include "ir/tensor.h"

namespace testing_util {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty string when they match; otherwise what differs (dtype, shape, or the worst element).
std::string CompareTensors(const ir::Tensor& actual, const ir::Tensor& expected, Tolerance tol);

}  // namespace testing_util

#endif  // ONNXRUN_TESTS_UTIL_COMPARE_H_
