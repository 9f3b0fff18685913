// Attention nodes (ONNX's Attention, and the attention pattern partitioner/attention_fusion.cc
// rewrites to it) as one GPU step: cuDNN's fused attention graph (kernels/cudnn/sdpa.h) where cuDNN
// supports the form (float16, head sizes multiples of 8 up to 256, no causal flag, an additive or
// no mask), else the own attention kernel (kernels/cuda/attention.h), else (past keys/values,
// softcap, extra outputs, a mask shorter than the keys) the host reference kernel. The runner is
// CudaExecutor::RunAttention (cuda_steps_attention.cc); what ran and why is the step's note.
#ifndef ONNXRUN_RUNTIME_CUDA_STEPS_ATTENTION_H_
#define ONNXRUN_RUNTIME_CUDA_STEPS_ATTENTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"
#include "kernels/cuda/attention.h"
#include "kernels/cudnn/sdpa.h"
#include "runtime/device_tensor.h"

namespace exec {

// "" when the node's form runs on the device (cuDNN or the own kernel), else why it runs on the
// host: past keys/values, nonpad_kv_seqlen, softcap or outputs beyond Y.
std::string AttentionDeviceRejection(const ir::Graph& graph, const ir::Node& node);

// Q, K, V or the mask as an Attention step reads it: the tensor (for a head view, its data pointer
// is where the view starts; runtime/cuda_views.cc) and the element strides of its logical dims.
// Binary pointwise steps read operands the same way (strides empty: a dense or NHWC tensor).
struct HeadsInput {
  DeviceTensor tensor;
  std::vector<int64_t> strides;
};

// An operand's element strides at each index of an output with dims `out_dims` (numpy
// broadcasting: 0 along broadcast dims), in logical dim order (runtime/cuda_views.cc).
std::vector<int64_t> OperandStrides(const HeadsInput& operand, const std::vector<int64_t>& out_dims);

// What an Attention step keeps for one set of input dims.
struct AttentionShape {
  absl::Status status;                    // why these dims run on the host
  kernels::cuda::AttentionArgs args;      // dims, strides, mask kind, scale (pointers set per run)
  std::shared_ptr<cudnn::SdpaPlan> sdpa;  // null: the own kernel; shared by steps of one spec
  bool tuned = false;                     // sdpa's engine configs timed (at the first run)
  bool expand_bias = false;               // the mask is expanded to [B|1, H|1, S, L] for cuDNN
  std::vector<int64_t> bias_dims;         // that expansion's dims
  std::vector<int64_t> y_dims;
  std::string note;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_STEPS_ATTENTION_H_
