// Helpers shared by the selection-op CPU kernels (tensor_select.cc, tensor_unique.cc): a total
// order on element values (NaN above every number, as numpy sorts) and the hand-over of an output
// the kernel created because its size depends on the data.
#ifndef ONNXRUN_KERNELS_CPU_TENSOR_SELECT_UTIL_H_
#define ONNXRUN_KERNELS_CPU_TENSOR_SELECT_UTIL_H_

#include <cmath>
#include <type_traits>

#include "absl/status/status.h"
#include "ir/half.h"
#include "ir/tensor.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {

// a < b, where NaN compares above every number and equal to NaN (a strict weak order).
template <typename T>
bool OrderLess(T a, T b) {
  if constexpr (ir::kIsHalfLike<T>) {
    return OrderLess(static_cast<float>(a), static_cast<float>(b));
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
    }
    return a < b;
  }
}

// Stores `created` as output i. When the runtime pre-allocated the output (inference knew the
// size), the created tensor must have its dtype and shape. An absent output is skipped.
absl::Status SetCreatedOutput(KernelContext& ctx, size_t i, ir::Tensor created);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_TENSOR_SELECT_UTIL_H_
