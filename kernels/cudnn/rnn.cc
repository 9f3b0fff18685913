// kernels/cudnn/rnn.cc: the gate map and weight packing of ONNX's recurrent ops, and the cuDNN RNN
// descriptors and call (see rnn.h).
#include "kernels/cudnn/rnn.h"

#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/operation_graph.h"  // ToCudnnDataType
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

cudnnRNNMode_t CellMode(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnnTanh: return CUDNN_RNN_TANH;
    case RnnCell::kRnnRelu: return CUDNN_RNN_RELU;
    case RnnCell::kGru: return CUDNN_GRU;
    case RnnCell::kLstm: return CUDNN_LSTM;
  }
  return CUDNN_LSTM;
}

// Half: tensor cores (math stays float). Float: FMA only unless TF32 is allowed.
cudnnMathType_t MathType(const RnnSpec& spec) {
  if (spec.type == IoType::kHalf) return CUDNN_TENSOR_OP_MATH;
  return spec.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

// Checks that [offset, offset + bytes) lies in a space of `space_bytes`, aligned to `element`.
absl::Status CheckInside(size_t offset, size_t bytes, size_t element, size_t space_bytes, const char* what) {
  if (offset % element != 0 || offset > space_bytes || bytes > space_bytes - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " at byte ", offset, " (", bytes, " bytes) outside the weight space of ", space_bytes));
  }
  return absl::OkStatus();
}

// Copies one linear layer of direction `dir` from ONNX's tensors into its slot.
absl::Status PackLayer(const RnnSpec& spec, const RnnOnnxWeights& onnx, int dir, const RnnLinearLayer& layer,
                       const RnnParamSlot& slot, std::vector<uint8_t>& space) {
  const size_t elem = ElementBytes(spec.type);
  const size_t h = static_cast<size_t>(spec.hidden_size);
  const size_t gates = static_cast<size_t>(RnnGateCount(spec.cell));
  const size_t cols = layer.recurrent ? h : static_cast<size_t>(spec.input_size);
  if (slot.matrix_rows != h || slot.matrix_cols != cols || slot.bias_elements != h) {
    return absl::InvalidArgumentError(absl::StrCat("cuDNN linear layer ", layer.lin_layer_id, " is ", slot.matrix_rows,
                                                   "x", slot.matrix_cols, " with ", slot.bias_elements,
                                                   " biases; expected ", h, "x", cols, " with ", h));
  }
  const size_t matrix_bytes = h * cols * elem, bias_bytes = h * elem;
  CUDNN_RETURN_IF_NOT_OK(CheckInside(slot.matrix_offset, matrix_bytes, elem, space.size(), "matrix"));
  CUDNN_RETURN_IF_NOT_OK(CheckInside(slot.bias_offset, bias_bytes, elem, space.size(), "bias"));
  const auto* matrices = static_cast<const uint8_t*>(layer.recurrent ? onnx.r : onnx.w);
  const size_t first_row = (static_cast<size_t>(dir) * gates + static_cast<size_t>(layer.onnx_gate)) * h;
  std::memcpy(space.data() + slot.matrix_offset, matrices + first_row * cols * elem, matrix_bytes);
  if (onnx.b != nullptr) {
    const size_t first = static_cast<size_t>(dir) * 2 * gates * h + (layer.recurrent ? gates * h : 0) +
                         static_cast<size_t>(layer.onnx_gate) * h;
    std::memcpy(space.data() + slot.bias_offset, static_cast<const uint8_t*>(onnx.b) + first * elem, bias_bytes);
  }
  return absl::OkStatus();
}

// The shape of a weight-space tensor descriptor cudnnGetRNNWeightParams filled: {1, rows, cols},
// packed along cols. InvalidArgument for anything else (another data type included).
absl::StatusOr<std::pair<size_t, size_t>> SlotShape(cudnnTensorDescriptor_t desc, cudnnDataType_t expected) {
  cudnnDataType_t type;
  int rank = 0, dims[3] = {}, strides[3] = {};
  CUDNN_RETURN_IF_ERROR(cudnnGetTensorNdDescriptor(desc, 3, &type, &rank, dims, strides));
  if (rank != 3 || type != expected || dims[0] != 1 || dims[1] < 1 || dims[2] < 1 || (dims[2] > 1 && strides[2] != 1) ||
      (dims[1] > 1 && strides[1] != dims[2])) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected weight-space slot: rank ", rank, ", dims ", dims[0], "x",
                                                   dims[1], "x", dims[2], ", strides ", strides[1], ",", strides[2]));
  }
  return std::make_pair(static_cast<size_t>(dims[1]), static_cast<size_t>(dims[2]));
}

absl::StatusOr<TensorDescriptor> NewTensorDescriptor() {
  cudnnTensorDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&raw));
  return TensorDescriptor(raw);
}

absl::StatusOr<RnnDataDescriptor> MakeDataDescriptor(const RnnSpec& spec, int seq_length, int batch, int vector_size,
                                                     const std::vector<int32_t>& lengths) {
  cudnnRNNDataDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateRNNDataDescriptor(&raw));
  RnnDataDescriptor desc(raw);
  double zero = 0;  // the padding symbol, read as the data type (all-zero bytes: 0 in float and half)
  const cudnnRNNDataLayout_t layout =
      spec.batch_major ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
  CUDNN_RETURN_IF_ERROR(cudnnSetRNNDataDescriptor(raw, ToCudnnDataType(spec.type), layout, seq_length, batch,
                                                  vector_size, lengths.data(), &zero));
  return desc;
}

}  // namespace

int RnnGateCount(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnnTanh:
    case RnnCell::kRnnRelu: return 1;
    case RnnCell::kGru: return 3;
    case RnnCell::kLstm: return 4;
  }
  return 1;
}

std::vector<RnnLinearLayer> RnnLinearLayers(RnnCell cell) {
  // ONNX gate index per cuDNN id of the input half (the recurrent half repeats it).
  std::vector<int> onnx_gate_of_id;
  switch (cell) {
    case RnnCell::kRnnTanh:
    case RnnCell::kRnnRelu: onnx_gate_of_id = {0}; break;
    case RnnCell::kGru: onnx_gate_of_id = {1, 0, 2}; break;      // reset=r, update=z, new=h of (z, r, h)
    case RnnCell::kLstm: onnx_gate_of_id = {0, 2, 3, 1}; break;  // input, forget, cell, output of (i, o, f, c)
  }
  std::vector<RnnLinearLayer> layers;
  const int n = static_cast<int>(onnx_gate_of_id.size());
  for (int recurrent = 0; recurrent < 2; ++recurrent) {
    for (int id = 0; id < n; ++id) layers.push_back({recurrent * n + id, recurrent == 1, onnx_gate_of_id[id]});
  }
  return layers;
}

absl::Status PackRnnWeights(const RnnSpec& spec, const RnnOnnxWeights& onnx, const RnnSlotLocator& locate,
                            std::vector<uint8_t>& space) {
  if (onnx.w == nullptr || onnx.r == nullptr) return absl::InvalidArgumentError("W and R are required");
  if (spec.hidden_size < 1 || spec.input_size < 1) return absl::InvalidArgumentError("sizes must be positive");
  for (int dir = 0; dir < spec.directions(); ++dir) {
    for (const RnnLinearLayer& layer : RnnLinearLayers(spec.cell)) {
      absl::StatusOr<RnnParamSlot> slot = locate(dir, layer.lin_layer_id);
      if (!slot.ok()) return slot.status();
      CUDNN_RETURN_IF_NOT_OK(PackLayer(spec, onnx, dir, layer, *slot, space));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Rnn> Rnn::Create(cudnnHandle_t handle, const RnnSpec& spec) {
  if (spec.input_size < 1 || spec.hidden_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("RNN sizes must be positive: input ", spec.input_size, ", hidden ", spec.hidden_size));
  }
  Rnn rnn;
  rnn.spec_ = spec;
  cudnnDropoutDescriptor_t dropout = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateDropoutDescriptor(&dropout));
  rnn.dropout_.reset(dropout);
  // No dropout: no random states are needed (nor initialised).
  CUDNN_RETURN_IF_ERROR(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, nullptr, 0, 0));
  cudnnRNNDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateRNNDescriptor(&raw));
  rnn.rnn_.reset(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetRNNDescriptor_v8(
      raw, CUDNN_RNN_ALGO_STANDARD, CellMode(spec.cell), CUDNN_RNN_DOUBLE_BIAS,
      spec.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, ToCudnnDataType(spec.type),
      CUDNN_DATA_FLOAT, MathType(spec), spec.input_size, spec.hidden_size, /*projSize=*/spec.hidden_size,
      /*numLayers=*/1, dropout, CUDNN_RNN_PADDED_IO_ENABLED));
  CUDNN_RETURN_IF_ERROR(cudnnGetRNNWeightSpaceSize(handle, raw, &rnn.weight_bytes_));
  if (rnn.weight_bytes_ == 0) return absl::InternalError("cuDNN reports an empty RNN weight space");
  return rnn;
}

absl::Status Rnn::LoadWeights(cudnnHandle_t handle, const RnnOnnxWeights& onnx, void* device_space,
                              cudaStream_t stream) const {
  if (device_space == nullptr) return absl::InvalidArgumentError("no weight space");
  CUDNN_ASSIGN_OR_RETURN(TensorDescriptor matrix, NewTensorDescriptor());
  CUDNN_ASSIGN_OR_RETURN(TensorDescriptor bias, NewTensorDescriptor());
  const cudnnDataType_t type = ToCudnnDataType(spec_.type);
  const auto* base = static_cast<const uint8_t*>(device_space);
  RnnSlotLocator locate = [&](int pseudo_layer, int id) -> absl::StatusOr<RnnParamSlot> {
    void* matrix_addr = nullptr;
    void* bias_addr = nullptr;
    CUDNN_RETURN_IF_ERROR(cudnnGetRNNWeightParams(handle, rnn_.get(), pseudo_layer, weight_bytes_, device_space, id,
                                                  matrix.get(), &matrix_addr, bias.get(), &bias_addr));
    const auto* m = static_cast<const uint8_t*>(matrix_addr);
    const auto* b = static_cast<const uint8_t*>(bias_addr);
    if (m == nullptr || b == nullptr || m < base || b < base) {
      return absl::InternalError(absl::StrCat("cuDNN gave no weight or bias address for linear layer ", id));
    }
    CUDNN_ASSIGN_OR_RETURN(auto matrix_shape, SlotShape(matrix.get(), type));
    CUDNN_ASSIGN_OR_RETURN(auto bias_shape, SlotShape(bias.get(), type));
    RnnParamSlot slot;
    slot.matrix_offset = static_cast<size_t>(m - base);
    slot.matrix_rows = matrix_shape.first;
    slot.matrix_cols = matrix_shape.second;
    slot.bias_offset = static_cast<size_t>(b - base);
    slot.bias_elements = bias_shape.first * bias_shape.second;
    return slot;
  };
  std::vector<uint8_t> image(weight_bytes_, 0);
  CUDNN_RETURN_IF_NOT_OK(PackRnnWeights(spec_, onnx, locate, image));
  CUDNN_RETURN_IF_ERROR(cudaMemcpyAsync(device_space, image.data(), image.size(), cudaMemcpyHostToDevice, stream));
  CUDNN_RETURN_IF_ERROR(cudaStreamSynchronize(stream));  // `image` dies here
  return absl::OkStatus();
}

absl::Status Rnn::Forward(cudnnHandle_t handle, const RnnData& data, const RnnBuffers& b) const {
  if (b.device_lengths == nullptr || b.x == nullptr || b.y == nullptr || b.weights == nullptr ||
      (data.workspace_bytes() > 0 && b.workspace == nullptr) || (data.reserve_bytes() > 0 && b.reserve == nullptr)) {
    return absl::InvalidArgumentError("cudnnRNNForward: a required buffer is missing");
  }
  const bool lstm = spec_.cell == RnnCell::kLstm;
  CUDNN_RETURN_IF_ERROR(cudnnRNNForward(handle, rnn_.get(), CUDNN_FWD_MODE_INFERENCE, b.device_lengths, data.x_.get(),
                                        b.x, data.y_.get(), b.y, data.state_.get(), b.hx, b.hy, data.state_.get(),
                                        lstm ? b.cx : nullptr, lstm ? b.cy : nullptr, weight_bytes_, b.weights,
                                        data.workspace_bytes(), b.workspace, data.reserve_bytes(), b.reserve));
  return absl::OkStatus();
}

absl::StatusOr<RnnData> RnnData::Create(cudnnHandle_t handle, const Rnn& rnn, int seq_length, int batch,
                                        std::vector<int32_t> lengths) {
  if (seq_length < 1 || batch < 1 || lengths.size() != static_cast<size_t>(batch)) {
    return absl::InvalidArgumentError(absl::StrCat("RNN data: ", batch, " sequences of up to ", seq_length,
                                                   " steps with ", lengths.size(), " lengths"));
  }
  for (int32_t length : lengths) {
    if (length < 1 || length > seq_length) {
      return absl::InvalidArgumentError(absl::StrCat("sequence length ", length, " outside [1, ", seq_length, "]"));
    }
  }
  const RnnSpec& spec = rnn.spec();
  if (int64_t{batch} * spec.directions() * spec.hidden_size > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("RNN state larger than cuDNN's int range");
  }
  RnnData data;
  data.lengths_ = std::move(lengths);
  CUDNN_ASSIGN_OR_RETURN(data.x_, MakeDataDescriptor(spec, seq_length, batch, spec.input_size, data.lengths_));
  CUDNN_ASSIGN_OR_RETURN(
      data.y_, MakeDataDescriptor(spec, seq_length, batch, spec.directions() * spec.hidden_size, data.lengths_));
  CUDNN_ASSIGN_OR_RETURN(data.state_, NewTensorDescriptor());
  const int dims[3] = {spec.directions(), batch, spec.hidden_size};
  const int strides[3] = {batch * spec.hidden_size, spec.hidden_size, 1};
  CUDNN_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(data.state_.get(), ToCudnnDataType(spec.type), 3, dims, strides));
  CUDNN_RETURN_IF_ERROR(cudnnGetRNNTempSpaceSizes(handle, rnn.descriptor(), CUDNN_FWD_MODE_INFERENCE, data.x_.get(),
                                                  &data.workspace_bytes_, &data.reserve_bytes_));
  return data;
}

}  // namespace cudnn
