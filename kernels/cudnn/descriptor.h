// kernels/cudnn/descriptor.h: BackendDescriptor, a move-only RAII owner of one cuDNN backend
// descriptor (cudnnBackendCreateDescriptor → set attributes → cudnnBackendFinalize → destroy), with
// typed attribute setters and getters that all go through one helper (SetRaw / GetRaw).
//
// The C++ type of a value picks the cudnnBackendAttributeType_t (see AttributeTypeOf below):
//   int64_t→INT64, int32_t→INT32, float→FLOAT, double→DOUBLE, bool→BOOLEAN, char→CHAR,
//   cudnnDataType_t→DATA_TYPE, cudnnPointwiseMode_t→POINTWISE_MODE, cudnnConvolutionMode_t→
//   CONVOLUTION_MODE, cudnnBackendHeurMode_t→HEUR_MODE, cudnnBackendKnobType_t→KNOB_TYPE,
//   cudnnBackendNumericalNote_t→NUMERICAL_NOTE, cudnnBackendBehaviorNote_t→BEHAVIOR_NOTE,
//   cudnnHandle_t→HANDLE. Descriptors (BACKEND_DESCRIPTOR) and data pointers (VOID_PTR) have their
//   own setters, because cudnnBackendDescriptor_t and void* are the same C type.
#ifndef ONNXRUN_KERNELS_CUDNN_DESCRIPTOR_H_
#define ONNXRUN_KERNELS_CUDNN_DESCRIPTOR_H_

#include <cudnn.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cudnn {

template <typename T>
struct AttributeTypeOf;  // undefined for unsupported types: a compile error names the type
#define ONNXRUN_CUDNN_ATTRIBUTE_TYPE(T, V)                  \
  template <>                                               \
  struct AttributeTypeOf<T> {                               \
    static constexpr cudnnBackendAttributeType_t value = V; \
  }
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(int64_t, CUDNN_TYPE_INT64);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(int32_t, CUDNN_TYPE_INT32);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(float, CUDNN_TYPE_FLOAT);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(double, CUDNN_TYPE_DOUBLE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(bool, CUDNN_TYPE_BOOLEAN);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(char, CUDNN_TYPE_CHAR);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnDataType_t, CUDNN_TYPE_DATA_TYPE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnPointwiseMode_t, CUDNN_TYPE_POINTWISE_MODE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnConvolutionMode_t, CUDNN_TYPE_CONVOLUTION_MODE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnBackendHeurMode_t, CUDNN_TYPE_HEUR_MODE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnBackendKnobType_t, CUDNN_TYPE_KNOB_TYPE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnBackendNumericalNote_t, CUDNN_TYPE_NUMERICAL_NOTE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnBackendBehaviorNote_t, CUDNN_TYPE_BEHAVIOR_NOTE);
ONNXRUN_CUDNN_ATTRIBUTE_TYPE(cudnnHandle_t, CUDNN_TYPE_HANDLE);
#undef ONNXRUN_CUDNN_ATTRIBUTE_TYPE

// Owns one backend descriptor. Move-only; a moved-from or default-constructed object is empty
// (get() == nullptr) and every operation on it but destruction returns FailedPrecondition.
class BackendDescriptor {
 public:
  // cudnnBackendCreateDescriptor(type). Works without a GPU.
  static absl::StatusOr<BackendDescriptor> Create(cudnnBackendDescriptorType_t type);
  // Creates `count` descriptors of `type` (for array-valued descriptor getters).
  static absl::StatusOr<std::vector<BackendDescriptor>> CreateMany(cudnnBackendDescriptorType_t type, int64_t count);

  BackendDescriptor() = default;
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& other) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  cudnnBackendDescriptorType_t type() const { return type_; }
  bool finalized() const { return finalized_; }

  // cudnnBackendFinalize. The Status carries cuDNN's error text.
  absl::Status Finalize();

  // The one helper every setter uses: cudnnBackendSetAttribute(desc, name, type, count, values).
  absl::Status SetRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                      const void* values);
  // The one helper every getter uses; `*written` receives the element count cuDNN reports.
  absl::Status GetRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t capacity,
                      int64_t* written, void* values) const;

  template <typename T>
  absl::Status Set(cudnnBackendAttributeName_t name, const T& value) {
    return SetRaw(name, AttributeTypeOf<T>::value, 1, &value);
  }
  template <typename T>
  absl::Status Set(cudnnBackendAttributeName_t name, absl::Span<const T> values) {
    return SetRaw(name, AttributeTypeOf<T>::value, static_cast<int64_t>(values.size()), values.data());
  }
  template <typename T>
  absl::Status Set(cudnnBackendAttributeName_t name, const std::vector<T>& values) {
    return Set(name, absl::Span<const T>(values));
  }
  // BACKEND_DESCRIPTOR attributes (one or several descriptors).
  absl::Status SetDescriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value);
  absl::Status SetDescriptors(cudnnBackendAttributeName_t name, absl::Span<const BackendDescriptor* const> values);
  // VOID_PTR attributes (device or host data pointers).
  absl::Status SetPointers(cudnnBackendAttributeName_t name, absl::Span<void* const> values);

  template <typename T>
  absl::StatusOr<T> Get(cudnnBackendAttributeName_t name) const {
    T value{};
    int64_t written = 0;
    absl::Status status = GetRaw(name, AttributeTypeOf<T>::value, 1, &written, &value);
    if (!status.ok()) return status;
    return value;
  }
  // Up to `capacity` elements (fewer when cuDNN reports fewer).
  template <typename T>
  absl::StatusOr<std::vector<T>> GetArray(cudnnBackendAttributeName_t name, int64_t capacity) const {
    std::vector<T> values(static_cast<size_t>(capacity));
    int64_t written = 0;
    absl::Status status = GetRaw(name, AttributeTypeOf<T>::value, capacity, &written, values.data());
    if (!status.ok()) return status;
    values.resize(static_cast<size_t>(std::min(written, capacity)));
    return values;
  }
  // The element count of an array attribute (a getter with capacity 0).
  absl::StatusOr<int64_t> Count(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type) const;
  // Fills `out` (descriptors created by the caller, of the type cuDNN expects) and returns the
  // number cuDNN wrote.
  absl::StatusOr<int64_t> GetDescriptors(cudnnBackendAttributeName_t name, std::vector<BackendDescriptor>& out) const;

 private:
  BackendDescriptor(cudnnBackendDescriptor_t desc, cudnnBackendDescriptorType_t type) : desc_(desc), type_(type) {}
  absl::Status CheckNotEmpty() const;

  cudnnBackendDescriptor_t desc_ = nullptr;
  cudnnBackendDescriptorType_t type_ = CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
  bool finalized_ = false;
};

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_DESCRIPTOR_H_
