// LSTM, GRU and RNN nodes as Legacy steps on cuDNN's RNN API (kernels/cudnn/rnn.h): the support
// rule (the forms cuDNN computes as ONNX defines them, else the reason --explain shows), the cuDNN
// spec of a node, and what a step keeps between runs (the packed weights; per input dims, the data
// descriptors). The runner is CudaExecutor::RunRecurrent (cuda_steps_rnn.cc); a form it does not
// take runs on the host reference kernel.
#ifndef ONNXRUN_RUNTIME_CUDA_STEPS_RNN_H_
#define ONNXRUN_RUNTIME_CUDA_STEPS_RNN_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "kernels/cudnn/rnn.h"
#include "runtime/device_tensor.h"

namespace exec {

// LSTM, GRU and RNN.
bool IsRecurrentOp(std::string_view op_type);

// "" when cuDNN's RNN computes `node` as ONNX defines it, else why not. Taken: float32 or float16;
// direction forward or bidirectional (cuDNN has no reverse-only mode); the default activations
// (LSTM Sigmoid/Tanh/Tanh, GRU Sigmoid/Tanh, RNN Tanh or Relu, the same in both directions); no
// clip; LSTM without input_forget and without peepholes (P absent or a constant of zeros); GRU
// with linear_before_reset = 1 (cuDNN's GRU); layout 0 or 1; W, R and B constants of X's dtype
// with consistent shapes. Dims of X and the values of sequence_lens are checked at run time.
std::string RecurrentRejection(const ir::Graph& graph, const ir::Node& node);

// The cuDNN spec of a node RecurrentRejection accepts.
absl::StatusOr<cudnn::RnnSpec> RecurrentSpecOf(const ir::Graph& graph, const ir::Node& node, bool allow_tf32);

// What a recurrent step keeps for one set of X dims.
struct RecurrentShape {
  absl::Status status;                   // why these dims run on the host
  std::unique_ptr<cudnn::RnnData> data;  // descriptors for the last sequence lengths used
  DeviceTensor full_lengths;             // int32 [N] = T, when the node has no sequence_lens
};

// What a recurrent step keeps between runs (made at its first run).
struct RecurrentStep {
  absl::Status status;                           // why the node runs on the host
  std::unique_ptr<cudnn::Rnn> rnn;               // the RNN descriptor
  DeviceTensor weights;                          // cuDNN's weight space, packed from W, R, B once
  std::map<std::string, RecurrentShape> shapes;  // by X's dims
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_STEPS_RNN_H_
