// kernels/cudnn/descriptor.cc: BackendDescriptor — creation, finalization, destruction and the one
// attribute helper.
#include "kernels/cudnn/descriptor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/status.h"

namespace cudnn {

absl::StatusOr<BackendDescriptor> BackendDescriptor::Create(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t desc = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnBackendCreateDescriptor(type, &desc));
  return BackendDescriptor(desc, type);
}

absl::StatusOr<std::vector<BackendDescriptor>> BackendDescriptor::CreateMany(cudnnBackendDescriptorType_t type,
                                                                             int64_t count) {
  std::vector<BackendDescriptor> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor desc, Create(type));
    out.push_back(std::move(desc));
  }
  return out;
}

BackendDescriptor::~BackendDescriptor() {
  if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& other) noexcept
    : desc_(std::exchange(other.desc_, nullptr)),
      type_(other.type_),
      finalized_(std::exchange(other.finalized_, false)) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& other) noexcept {
  if (this != &other) {
    if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
    desc_ = std::exchange(other.desc_, nullptr);
    type_ = other.type_;
    finalized_ = std::exchange(other.finalized_, false);
  }
  return *this;
}

absl::Status BackendDescriptor::CheckNotEmpty() const {
  if (desc_ == nullptr) return absl::FailedPreconditionError("empty cuDNN backend descriptor");
  return absl::OkStatus();
}

absl::Status BackendDescriptor::Finalize() {
  CUDNN_RETURN_IF_NOT_OK(CheckNotEmpty());
  CUDNN_RETURN_IF_ERROR(cudnnBackendFinalize(desc_));
  finalized_ = true;
  return absl::OkStatus();
}

absl::Status BackendDescriptor::SetRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                       int64_t count, const void* values) {
  CUDNN_RETURN_IF_NOT_OK(CheckNotEmpty());
  absl::Status status = ToStatus(cudnnBackendSetAttribute(desc_, name, type, count, values), "cudnnBackendSetAttribute",
                                 __FILE__, __LINE__);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("attribute ", static_cast<int>(name), " (type ",
                                                    static_cast<int>(type), ", ", count, " values) of descriptor type ",
                                                    static_cast<int>(type_), ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status BackendDescriptor::GetRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                       int64_t capacity, int64_t* written, void* values) const {
  CUDNN_RETURN_IF_NOT_OK(CheckNotEmpty());
  absl::Status status = ToStatus(cudnnBackendGetAttribute(desc_, name, type, capacity, written, values),
                                 "cudnnBackendGetAttribute", __FILE__, __LINE__);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("attribute ", static_cast<int>(name), " of descriptor type ",
                                                    static_cast<int>(type_), ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status BackendDescriptor::SetDescriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value) {
  cudnnBackendDescriptor_t raw = value.get();
  return SetRaw(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

absl::Status BackendDescriptor::SetDescriptors(cudnnBackendAttributeName_t name,
                                               absl::Span<const BackendDescriptor* const> values) {
  std::vector<cudnnBackendDescriptor_t> raw;
  raw.reserve(values.size());
  for (const BackendDescriptor* value : values) raw.push_back(value->get());
  return SetRaw(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), raw.data());
}

absl::Status BackendDescriptor::SetPointers(cudnnBackendAttributeName_t name, absl::Span<void* const> values) {
  return SetRaw(name, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(values.size()), values.data());
}

absl::StatusOr<int64_t> BackendDescriptor::Count(cudnnBackendAttributeName_t name,
                                                 cudnnBackendAttributeType_t type) const {
  int64_t count = 0;
  CUDNN_RETURN_IF_NOT_OK(GetRaw(name, type, 0, &count, nullptr));
  return count;
}

absl::StatusOr<int64_t> BackendDescriptor::GetDescriptors(cudnnBackendAttributeName_t name,
                                                          std::vector<BackendDescriptor>& out) const {
  std::vector<cudnnBackendDescriptor_t> raw;
  raw.reserve(out.size());
  for (const BackendDescriptor& desc : out) raw.push_back(desc.get());
  int64_t written = 0;
  CUDNN_RETURN_IF_NOT_OK(
      GetRaw(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), &written, raw.data()));
  const int64_t filled = std::min<int64_t>(written, static_cast<int64_t>(out.size()));
  for (int64_t i = 0; i < filled; ++i) out[i].finalized_ = true;  // cuDNN hands back finalized ones
  return filled;
}

}  // namespace cudnn
