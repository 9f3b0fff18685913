// Lowers a FusedGraph plan step (ONNX conv/matmul + pointwise nodes) with concrete shapes into a
// cudnn::FusedGraphSpec: UIDs for every tensor, NHWC strides for 4-D conv tensors, virtual float
// intermediates, by-value host scalars for constant scalars, and the ONNX ops as cuDNN pointwise
// modes (Relu as MAX(x,0), Clip as MAX+MIN, HardSigmoid/HardSwish/LeakyRelu spelled out).
// Unsupported shapes or ops give an error; the executor then runs the step another way.
#ifndef ONNXRUN_RUNTIME_FUSED_LOWERING_H_
#define ONNXRUN_RUNTIME_FUSED_LOWERING_H_

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "kernels/cudnn/fused_graph.h"

namespace exec {

// How a UID of the spec is bound at Execute.
struct UidBinding {
  ir::ValueId value = ir::kNoValue;  // the graph value whose device buffer backs it
  bool channels_last = false;        // the buffer must be stored NHWC (4-D) / KRSC (weights)
  std::vector<int64_t> dims;         // logical dims of the buffer
};

// Float32 convolutions of at most kFloat32StemChannels input channels (an image stem: RGB, padded to
// 4) whose window holds at most kFloat32StemMaxWindow values (3x3, 4x4: what the own stem kernel
// computes in 3xTF32, kernels/cuda/pointwise_conv.h) compute in plain float32 in tf32 plans too.
// Rounding the image and the first weights to TF32 put efficientnet_b0 / b1 / v2_s 2.2-3.2x further
// from float64 (PyTorch's cuDNN stem does not use TF32); the 3xTF32 stem costs 2-5% of those runs
// (efficientnet_b0 tf32 batch 256 8.09 -> 8.37 ms), cuDNN's strict 7x7 stem 25% of resnet50's.
inline constexpr int64_t kFloat32StemChannels = 4;
inline constexpr int64_t kFloat32StemMaxWindow = 80;

// Whether float32 conv weights [K, C, R, S] make a stem in the sense above.
inline bool IsFloat32Stem(const std::vector<int64_t>& w) {
  return w.size() == 4 && w[1] <= kFloat32StemChannels && w[1] * w[2] * w[3] <= kFloat32StemMaxWindow;
}

struct LoweredStep {
  cudnn::FusedGraphSpec spec;
  std::map<int64_t, UidBinding> bindings;  // non-virtual, non-by-value UIDs
  int64_t output_uid = 0;
  std::vector<int64_t> output_dims;  // logical dims of the step's output value
};

// The cuDNN element type of float32, float16 or bfloat16 tensors; Unimplemented for other dtypes.
absl::StatusOr<cudnn::IoType> IoTypeOf(ir::DType dtype);

// `dims` gives the concrete dims of every value the step reads (non-constant inputs); constants are
// read from the graph. `allow_tf32` for the tf32 precision.
absl::StatusOr<LoweredStep> LowerFusedStep(const Plan& plan, const Step& step,
                                           const std::map<ir::ValueId, std::vector<int64_t>>& dims, bool allow_tf32);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_FUSED_LOWERING_H_
