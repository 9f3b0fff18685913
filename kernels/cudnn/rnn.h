// kernels/cudnn/rnn.h: ONNX's recurrent ops (RNN, GRU, LSTM: one layer, forward or bidirectional)
// through cuDNN's RNN API (cudnnRNNForward in inference mode).
//
// Rnn owns the RNN descriptor (cell, direction, sizes, data and math types, padded I/O) and packs
// ONNX's W/R/B into cuDNN's weight space once (LoadWeights). RnnData owns what depends on one
// (T, N, sequence lengths): X and Y as padded unpacked sequences (Y's padding filled with zeros),
// the [dirs, N, H] state descriptor and the work-space size. Shapes are cuDNN's, not ONNX's:
// X [T, N, I] (seq-major) or [N, T, I] (batch-major), Y [T, N, dirs*H] or [N, T, dirs*H], states
// [dirs, N, H]; the caller rearranges ONNX's layouts. Y past a sequence's length is zero and the
// final states are those of each sequence's last valid step, as ONNX defines them.
//
// Gate order: ONNX stacks the rows of W and R per gate as LSTM i, o, f, c and GRU z, r, h. cuDNN
// numbers its linear layers LSTM 0-3 = input, forget, cell, output on the input (W) and 4-7 the
// same on the recurrent state (R); GRU 0-2 = reset, update, new (W) and 3-5 (R); RNN 0 (W) and 1
// (R). RnnLinearLayers is that map; PackRnnWeights applies it (both run without a GPU).
#ifndef ONNXRUN_KERNELS_CUDNN_RNN_H_
#define ONNXRUN_KERNELS_CUDNN_RNN_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cudnn/fused_graph.h"  // IoType
#include "kernels/cudnn/legacy.h"       // Owned, TensorDescriptor

namespace cudnn {

enum class RnnCell { kRnnTanh, kRnnRelu, kGru, kLstm };

// Gates per hidden unit (rows of W per direction / H): RNN 1, GRU 3, LSTM 4.
int RnnGateCount(RnnCell cell);

struct RnnSpec {
  RnnCell cell = RnnCell::kLstm;
  IoType type = IoType::kFloat;  // data and weights; math in float either way
  bool allow_tf32 = false;       // float data: CUDNN_DEFAULT_MATH (TF32 allowed) instead of CUDNN_FMA_MATH
  bool bidirectional = false;
  bool batch_major = false;  // X [N, T, I], Y [N, T, dirs*H] (ONNX layout 1); else sequence-major
  int input_size = 0, hidden_size = 0;
  int directions() const { return bidirectional ? 2 : 1; }
};

// One cuDNN linear layer (a matrix and its bias) and where ONNX keeps it, per direction d: rows
// [onnx_gate*H, (onnx_gate+1)*H) of W[d] (recurrent = false) or R[d] (true); its bias at
// B[d][(recurrent ? gates*H : 0) + onnx_gate*H], H values.
struct RnnLinearLayer {
  int lin_layer_id = 0;
  bool recurrent = false;
  int onnx_gate = 0;
};
// Every linear layer of one direction of `cell`, in cuDNN id order.
std::vector<RnnLinearLayer> RnnLinearLayers(RnnCell cell);

// Where cuDNN keeps one linear layer in the weight space (what cudnnGetRNNWeightParams reports):
// byte offsets from the start of the space, a row-major matrix [rows, cols] and a bias vector.
struct RnnParamSlot {
  size_t matrix_offset = 0, matrix_rows = 0, matrix_cols = 0;
  size_t bias_offset = 0, bias_elements = 0;
};
// The slot of (pseudo-layer = direction, linear-layer id).
using RnnSlotLocator = std::function<absl::StatusOr<RnnParamSlot>(int pseudo_layer, int lin_layer_id)>;

// ONNX's weights of one node in host memory, of the spec's element type: W [dirs, gates*H, I],
// R [dirs, gates*H, H], B [dirs, 2*gates*H] (null: zero biases).
struct RnnOnnxWeights {
  const void* w = nullptr;
  const void* r = nullptr;
  const void* b = nullptr;
};

// Copies ONNX's weights into `space` (an image of cuDNN's weight space, zero-filled by the caller)
// at the slots `locate` reports. InvalidArgument when W or R is missing, or a slot is not H x I,
// H x H or H long, or does not lie inside `space`.
absl::Status PackRnnWeights(const RnnSpec& spec, const RnnOnnxWeights& onnx, const RnnSlotLocator& locate,
                            std::vector<uint8_t>& space);

using RnnDescriptor = legacy_internal::Owned<cudnnRNNDescriptor_t, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor = legacy_internal::Owned<cudnnRNNDataDescriptor_t, cudnnDestroyRNNDataDescriptor>;
using DropoutDescriptor = legacy_internal::Owned<cudnnDropoutDescriptor_t, cudnnDestroyDropoutDescriptor>;

class RnnData;

// Device pointers of one cudnnRNNForward call. Sizes are those of the Rnn and RnnData it runs with.
struct RnnBuffers {
  const int32_t* device_lengths = nullptr;  // RnnData::lengths() again, int32 [N] in device memory
  const void* x = nullptr;
  void* y = nullptr;
  const void* hx = nullptr;       // [dirs, N, H]; null: zero initial state
  void* hy = nullptr;             // [dirs, N, H]; null: not written
  const void* cx = nullptr;       // LSTM only, like hx
  void* cy = nullptr;             // LSTM only, like hy
  const void* weights = nullptr;  // weight space filled by Rnn::LoadWeights
  void* workspace = nullptr;      // RnnData::workspace_bytes()
  void* reserve = nullptr;        // RnnData::reserve_bytes()
};

class Rnn {
 public:
  // The RNN descriptor and its weight-space size; needs a handle on a live GPU. InvalidArgument for
  // sizes below 1; cuDNN's status (e.g. Unimplemented) when it refuses the configuration.
  static absl::StatusOr<Rnn> Create(cudnnHandle_t handle, const RnnSpec& spec);

  const RnnSpec& spec() const { return spec_; }
  size_t weight_space_bytes() const { return weight_bytes_; }
  // Packs `onnx` into `device_space` (device memory of weight_space_bytes()): a host image filled
  // through PackRnnWeights at cudnnGetRNNWeightParams' slots, one copy on `stream`, then a
  // synchronisation (the image is freed on return). Not for use inside a CUDA-graph capture.
  absl::Status LoadWeights(cudnnHandle_t handle, const RnnOnnxWeights& onnx, void* device_space,
                           cudaStream_t stream) const;
  // cudnnRNNForward (inference) on `buffers`, laid out as `data` describes.
  absl::Status Forward(cudnnHandle_t handle, const RnnData& data, const RnnBuffers& buffers) const;
  cudnnRNNDescriptor_t descriptor() const { return rnn_.get(); }

 private:
  Rnn() = default;
  RnnSpec spec_;
  DropoutDescriptor dropout_;
  RnnDescriptor rnn_;
  size_t weight_bytes_ = 0;
};

class RnnData {
 public:
  // Descriptors for `batch` sequences of at most `seq_length` steps; `lengths` has one entry per
  // sequence, each in [1, seq_length] (cuDNN takes no empty sequence), else InvalidArgument.
  static absl::StatusOr<RnnData> Create(cudnnHandle_t handle, const Rnn& rnn, int seq_length, int batch,
                                        std::vector<int32_t> lengths);

  const std::vector<int32_t>& lengths() const { return lengths_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  size_t reserve_bytes() const { return reserve_bytes_; }

 private:
  friend class Rnn;
  RnnData() = default;
  std::vector<int32_t> lengths_;
  RnnDataDescriptor x_, y_;
  TensorDescriptor state_;
  size_t workspace_bytes_ = 0, reserve_bytes_ = 0;
};

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_RNN_H_
