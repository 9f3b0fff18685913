// The device copies of a plan's constants: as given (logical layout, what split, legacy and own
// kernels read) and channels-last (KRSC / NHWC, what cuDNN graphs bind). A 4-D constant that only
// cuDNN graph steps read is held channels-last only: its logical copy is made on first need (from
// the channels-last copy on the device) and goes again once a cuDNN graph was chosen for its step,
// unless a captured CUDA graph read it. Where both layouts place every element alike (a 1x1 conv's
// weights) the two share bytes. Used under the executor's lock (eager runs and captures only).
#ifndef ONNXRUN_RUNTIME_DEVICE_CONSTANTS_H_
#define ONNXRUN_RUNTIME_DEVICE_CONSTANTS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/device_tensor.h"

namespace exec {

class DeviceConstants {
 public:
  // Uploads every constant in `read` but those `graph_only` marks (made on first need instead).
  absl::Status Init(const ir::Graph& graph, const std::vector<bool>& read, const std::vector<bool>& graph_only,
                    cudaStream_t stream);
  void Clear();
  // Whether `id` is a constant some step reads (Init's `read`).
  bool Serves(ir::ValueId id) const { return id < read_.size() && read_[id]; }

  // The constant `id` in its logical layout; made now when absent (refused inside a capture).
  absl::StatusOr<DeviceTensor> Logical(ir::ValueId id, bool capturing, cudaStream_t stream);
  // The constant `id` stored channels-last (4-D; others as Logical); made now when absent.
  absl::StatusOr<DeviceTensor> ChannelsLast(ir::ValueId id, bool capturing, cudaStream_t stream);
  // A cuDNN graph now reads `id` channels-last for good: its logical copy goes when only graphs
  // read it and no captured graph holds it.
  void DropLogical(ir::ValueId id);
  // How many bytes the logical copies hold (for tests and --explain).
  int64_t logical_bytes() const;

 private:
  absl::StatusOr<DeviceTensor> Upload(ir::ValueId id, bool nhwc, cudaStream_t stream) const;
  // `id` in the layout `nhwc`: from `other` (its copy in the other layout, the same bytes where
  // both layouts agree) when valid, else from the host; refused inside a capture.
  absl::StatusOr<DeviceTensor> Made(ir::ValueId id, bool nhwc, const DeviceTensor& other, bool capturing,
                                    cudaStream_t stream) const;

  const ir::Graph* graph_ = nullptr;
  std::vector<DeviceTensor> logical_, channels_last_;  // by value id
  std::vector<bool> read_;                             // read by some step
  std::vector<bool> graph_only_;                       // 4-D, read by cuDNN graph steps only
  std::vector<bool> pinned_;                           // a captured graph read the logical copy
};

// Whether `t` stored in the other layout puts every element at the same offset (4-D with C == 1 or
// H * W == 1), so that one buffer serves both.
bool LayoutsShareBytes(const DeviceTensor& t);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_DEVICE_CONSTANTS_H_
