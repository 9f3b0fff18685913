// ir::Tensor: a dense, row-major, host-memory array with a dtype and a concrete shape.
// Copies share the buffer (cheap, like a view); Clone() makes an independent copy.
#ifndef ONNXRUN_IR_TENSOR_H_
#define ONNXRUN_IR_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/dtype.h"

namespace ir {

// Largest tensor the runtime allocates (bytes); larger requests are an error, not a crash.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;  // 64 GiB

// Product of dims; an error on negative dims or overflow past kMaxTensorBytes / element size.
absl::StatusOr<int64_t> CheckedElementCount(absl::Span<const int64_t> shape, DType dtype);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor. Fails on unsupported dtype, negative dims or a size past the limit.
  static absl::StatusOr<Tensor> Create(DType dtype, std::vector<int64_t> shape);
  // Scalar and vector helpers for constants built by passes and tests.
  static Tensor Scalar(float value);
  static Tensor FromInt64s(std::vector<int64_t> values);
  static Tensor FromFloats(std::vector<float> values, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return static_cast<size_t>(num_elements_) * DTypeSize(dtype_); }
  bool valid() const { return dtype_ != DType::kUndefined; }

  void* raw_data() { return buffer_.get(); }
  const void* raw_data() const { return buffer_.get(); }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }

  // Same bytes, another shape with the same element count.
  absl::StatusOr<Tensor> Reshaped(std::vector<int64_t> shape) const;
  Tensor Clone() const;
  // Element i converted to double / int64 (any numeric dtype); for shape inputs and printing.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  // All elements as int64 (for shape, axes, indices inputs).
  std::vector<int64_t> ToInt64Vector() const;

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<uint8_t[]> buffer_;
};

std::string ShapeToString(absl::Span<const int64_t> shape);

}  // namespace ir

#endif  // ONNXRUN_IR_TENSOR_H_
