// ir::Tensor: a dense, row-major, host-memory array with a dtype and a concrete shape.
// Copies share the buffer (cheap, like a view); Clone() makes an independent copy.
// It also carries ONNX's non-tensor values, so that executor slots, kernel signatures and the APIs
// hold them unchanged: a sequence (its element tensors; dtype() is theirs, shape() empty, no bytes
// of its own) and an empty optional ("none"). A present optional is simply its element.
#ifndef ONNXRUN_IR_TENSOR_H_
#define ONNXRUN_IR_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/dtype.h"
#include "ir/shape.h"

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
  // A sequence of `elements` (each dense, of `elem_dtype`).
  static Tensor Sequence(DType elem_dtype, std::vector<Tensor> elements);
  // An optional without an element; `elem_kind` says what it would hold.
  static Tensor None(DType elem_dtype, ValueKind elem_kind);

  bool is_sequence() const { return kind_ == ValueKind::kSequence && !none_; }
  bool is_none() const { return none_; }
  // A plain dense tensor: neither a sequence nor a none.
  bool is_dense() const { return kind_ == ValueKind::kTensor && !none_; }
  ValueKind kind() const { return kind_; }
  // The elements of a sequence (empty for anything else).
  const std::vector<Tensor>& elements() const;
  // "float32[2,3]", "seq(float32) of 4", "none".
  std::string Describe() const;

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
  ValueKind kind_ = ValueKind::kTensor;
  bool none_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;  // set for a sequence
};

std::string ShapeToString(absl::Span<const int64_t> shape);

}  // namespace ir

#endif  // ONNXRUN_IR_TENSOR_H_
