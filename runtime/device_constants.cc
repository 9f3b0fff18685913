// DeviceConstants: each constant's device copies in the layouts its readers ask for, made on first
// need, the logical copy of a weight only cuDNN graphs read dropped once they read it channels-last.
#include "runtime/device_constants.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace exec {

bool LayoutsShareBytes(const DeviceTensor& t) {
  if (t.dims.size() != 4 || t.host_value != nullptr) return false;
  DeviceTensor other = t;
  other.nhwc = !t.nhwc;
  const std::vector<int64_t> a = t.strides(), b = other.strides();
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d] > 1 && a[d] != b[d]) return false;
  }
  return true;
}

namespace {

// `t`'s bytes under the other layout flag (LayoutsShareBytes holds).
DeviceTensor Relabeled(DeviceTensor t, bool nhwc) {
  t.nhwc = nhwc;
  return t;
}

}  // namespace

absl::Status DeviceConstants::Init(const ir::Graph& graph, const std::vector<bool>& read,
                                   const std::vector<bool>& graph_only, cudaStream_t stream) {
  graph_ = &graph;
  const size_t n = graph.values().size();
  logical_.assign(n, DeviceTensor());
  channels_last_.assign(n, DeviceTensor());
  read_ = read;
  read_.resize(n, false);
  graph_only_ = graph_only;
  graph_only_.resize(n, false);
  pinned_.assign(n, false);
  for (size_t id = 0; id < n; ++id) {
    if (!read_[id] || !graph.value(id).constant || graph_only_[id]) continue;
    absl::StatusOr<DeviceTensor> t = Upload(id, false, stream);
    if (!t.ok()) return t.status();
    logical_[id] = *std::move(t);
  }
  return absl::OkStatus();
}

void DeviceConstants::Clear() {
  logical_.clear();
  channels_last_.clear();
  read_.clear();
  graph_only_.clear();
  pinned_.clear();
}

absl::StatusOr<DeviceTensor> DeviceConstants::Upload(ir::ValueId id, bool nhwc, cudaStream_t stream) const {
  ScopedAllocationHook plain(nullptr);  // weights live outside any run's planned arena
  return ::exec::Upload(*graph_->value(id).constant, nhwc, stream);
}

absl::StatusOr<DeviceTensor> DeviceConstants::Made(ir::ValueId id, bool nhwc, const DeviceTensor& other, bool capturing,
                                                   cudaStream_t stream) const {
  if (other.valid() && LayoutsShareBytes(other)) return Relabeled(other, nhwc);  // no memory, no work
  if (capturing) {
    return absl::FailedPreconditionError(
        absl::StrCat("the weight '", graph_->value(id).name, "' would be copied to the device inside a CUDA graph"));
  }
  if (!other.valid()) return Upload(id, nhwc, stream);
  ScopedAllocationHook plain(nullptr);
  return ToLayout(other, nhwc, stream);
}

absl::StatusOr<DeviceTensor> DeviceConstants::Logical(ir::ValueId id, bool capturing, cudaStream_t stream) {
  DeviceTensor& logical = logical_[id];
  if (!logical.valid()) {
    absl::StatusOr<DeviceTensor> made = Made(id, false, channels_last_[id], capturing, stream);
    if (!made.ok()) return made.status();
    logical = *std::move(made);
  }
  if (capturing) pinned_[id] = true;
  return logical;
}

absl::StatusOr<DeviceTensor> DeviceConstants::ChannelsLast(ir::ValueId id, bool capturing, cudaStream_t stream) {
  if (graph_->value(id).constant->shape().size() != 4) return Logical(id, capturing, stream);
  DeviceTensor& cached = channels_last_[id];
  if (!cached.valid()) {
    absl::StatusOr<DeviceTensor> made = Made(id, true, logical_[id], capturing, stream);
    if (!made.ok()) return made.status();
    cached = *std::move(made);
  }
  return cached;
}

void DeviceConstants::DropLogical(ir::ValueId id) {
  if (!graph_only_[id] || pinned_[id] || !channels_last_[id].valid()) return;
  logical_[id] = DeviceTensor();
}

int64_t DeviceConstants::logical_bytes() const {
  int64_t bytes = 0;
  for (size_t id = 0; id < logical_.size(); ++id) {
    const bool shared = channels_last_[id].valid() && logical_[id].buffer == channels_last_[id].buffer;
    if (logical_[id].buffer != nullptr && !shared) bytes += static_cast<int64_t>(logical_[id].bytes());
  }
  return bytes;
}

}  // namespace exec
