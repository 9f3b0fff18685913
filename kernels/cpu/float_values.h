// Floating-point tensors as vectors of doubles and back, for the reference kernels that compute in
// double (the losses, Attention, RotaryEmbedding, the random ops).
#ifndef ONNXRUN_KERNELS_CPU_FLOAT_VALUES_H_
#define ONNXRUN_KERNELS_CPU_FLOAT_VALUES_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "kernels/cpu/dispatch.h"

namespace kernels::cpu {

// The elements of a float32/float64/float16 tensor; Unimplemented for other dtypes.
inline absl::StatusOr<std::vector<double>> ReadDoubles(const ir::Tensor& t) {
  std::vector<double> values(static_cast<size_t>(t.num_elements()));
  absl::Status s = DispatchFloat(t.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* data = t.template data<T>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(data[i]);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return values;
}

// Writes `values` into a floating-point tensor of as many elements (InvalidArgument otherwise).
inline absl::Status WriteDoubles(const std::vector<double>& values, ir::Tensor& out) {
  if (out.num_elements() != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError("an output's size does not match the values computed for it");
  }
  return DispatchFloat(out.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* data = out.template data<T>();
    for (size_t i = 0; i < values.size(); ++i) data[i] = static_cast<T>(values[i]);
    return absl::OkStatus();
  });
}

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_FLOAT_VALUES_H_
