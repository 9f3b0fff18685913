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
