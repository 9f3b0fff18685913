// ir::Tensor: a dense, row-major, host-memory array with a dtype and a concrete shape.
// Copies share the buffer (cheap, like a view); Clone() makes an independent copy.
// It also carries ONNX's non-tensor values, so that executor slots, kernel signatures and the APIs
// hold them unchanged: a sequence (its element tensors; dtype() is theirs, shape() empty, no bytes
// of its own), a map (ZipMap's elements: 1-D keys and values; dtype() is the values') and an
// empty optional ("none"). A present optional is simply its element.
// A string tensor (dtype kString) holds std::string elements (strings()), not bytes: raw_data() is
// null and byte_size() 0, so code that moves bytes must not see one (ops reject strings unless
// they say they take them, ops::OpDef::takes_strings); CopyDataFrom and Clone copy either kind.
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

// What holding one element of a sequence or a map costs beside its bytes (the Tensor and its
// shared buffers), for accounting.
inline constexpr size_t kValueOverheadBytes = 128;

// Largest tensor the runtime allocates (bytes); larger requests are an error, not a crash.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;  // 64 GiB

// Product of dims; an error on negative dims or overflow past kMaxTensorBytes / element size.
absl::StatusOr<int64_t> CheckedElementCount(absl::Span<const int64_t> shape, DType dtype);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor (empty strings for kString; each string counts kStringElementBytes against
  // the limit). Fails on an unknown dtype, negative dims or a size past the limit.
  static absl::StatusOr<Tensor> Create(DType dtype, std::vector<int64_t> shape);
  // Like Create, but the bytes of a dense non-string tensor are left as the allocator gives them:
  // for a writer that sets every element.
  static absl::StatusOr<Tensor> CreateUninitialized(DType dtype, std::vector<int64_t> shape);
  // A dense tensor over bytes someone else allocated (page-locked staging, a caller's array):
  // `buffer` must hold the elements; its deleter runs when the last copy goes. Not for kString.
  static absl::StatusOr<Tensor> FromBuffer(DType dtype, std::vector<int64_t> shape, std::shared_ptr<uint8_t[]> buffer);
  // Scalar and vector helpers for constants built by passes and tests.
  static Tensor Scalar(float value);
  static Tensor FromInt64s(std::vector<int64_t> values);
  static Tensor FromFloats(std::vector<float> values, std::vector<int64_t> shape);
  // A 1-D string tensor.
  static Tensor FromStrings(std::vector<std::string> values);
  // A sequence of `elements` (each dense, of `elem_dtype`; or each a map with values of it).
  static Tensor Sequence(DType elem_dtype, std::vector<Tensor> elements);
  // A map from keys[i] to values[i]: two 1-D dense tensors of one length (int64 or string keys).
  static absl::StatusOr<Tensor> Map(Tensor keys, Tensor values);
  // An optional without an element; `elem_kind` says what it would hold.
  static Tensor None(DType elem_dtype, ValueKind elem_kind);

  bool is_sequence() const { return kind_ == ValueKind::kSequence && !none_; }
  bool is_map() const { return kind_ == ValueKind::kMap && !none_; }
  // A sequence whose elements are maps (ZipMap's output); the sequence ops take none of these.
  bool is_map_sequence() const { return is_sequence() && !elements_->empty() && elements_->front().is_map(); }
  bool is_none() const { return none_; }
  // A plain dense tensor: neither a sequence nor a none.
  bool is_dense() const { return kind_ == ValueKind::kTensor && !none_; }
  ValueKind kind() const { return kind_; }
  // The elements of a sequence (empty for anything else).
  const std::vector<Tensor>& elements() const;
  // A map's keys and values (invalid tensors for anything else).
  const Tensor& map_keys() const;
  const Tensor& map_values() const;
  // "float32[2,3]", "seq(float32) of 4", "map(int64,float32) of 3", "none".
  std::string Describe() const;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  // Bytes of dense storage: 0 for a string tensor (whose elements are not bytes).
  size_t byte_size() const { return static_cast<size_t>(num_elements_) * DTypeSize(dtype_); }
  // Host memory the elements take, for accounting: byte_size(), or for a string tensor
  // kStringElementBytes per element plus the characters (it reads every string), or for a sequence
  // or a map its elements' plus kValueOverheadBytes each (a map's shared keys count in every map).
  size_t host_bytes() const;
  bool valid() const { return dtype_ != DType::kUndefined; }
  // True when this tensor is the only holder of its dense bytes (no copy or reshape shares them):
  // writing them then changes no other tensor.
  bool OwnsBytesAlone() const { return buffer_ != nullptr && buffer_.use_count() == 1; }

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

  // The elements of a dense string tensor (num_elements() of them); nullptr for anything else.
  // Copies of the tensor share them, as they share bytes.
  const std::string* strings() const { return strings_.get(); }
  std::string* mutable_strings() { return strings_.get(); }

  // Same elements (shared), another shape with the same element count.
  absl::StatusOr<Tensor> Reshaped(std::vector<int64_t> shape) const;
  Tensor Clone() const;
  // Copies src's elements into this tensor's own: dense tensors of one dtype and element count
  // (strings one by one, other dtypes as bytes); an error otherwise.
  absl::Status CopyDataFrom(const Tensor& src);
  // Copies element `from` of `src` (dense, of this tensor's dtype) into element `to` of this one: a
  // string as a string, any other dtype as its bytes.
  void CopyElementFrom(const Tensor& src, int64_t from, int64_t to);
  // Element i converted to double / int64 (any numeric dtype; 0 for strings); for shape inputs and
  // printing.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  // All elements as int64 (for shape, axes, indices inputs).
  std::vector<int64_t> ToInt64Vector() const;

 private:
  static absl::StatusOr<Tensor> Allocate(DType dtype, std::vector<int64_t> shape, bool zero);

  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<uint8_t[]> buffer_;       // dense storage; null for strings
  std::shared_ptr<std::string[]> strings_;  // set for a dense string tensor
  ValueKind kind_ = ValueKind::kTensor;
  bool none_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;  // a sequence's elements; a map's keys, values
};

std::string ShapeToString(absl::Span<const int64_t> shape);

}  // namespace ir

#endif  // ONNXRUN_IR_TENSOR_H_
