// Whether a FusedGraph step is a MatMul whose pointwise tail the own matmul-epilogue kernel
// (kernels/cuda/matmul_epilogue.h) applies: MatMul with a constant 2-D weight, then in this order an optional Add of a
// constant bias row (one value per output column), an optional Relu or Gelu (erf or tanh), and an optional Add of a
// computed tensor of the output's shape (a residual), each reading the value before it. Then the step can run as a
// cuBLASLt matmul (kernels/cublas/lt_matmul.h) followed by the kernel in place. No GPU needed.
#ifndef ONNXRUN_RUNTIME_MATMUL_EPILOGUE_FORM_H_
#define ONNXRUN_RUNTIME_MATMUL_EPILOGUE_FORM_H_

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "kernels/cuda/matmul_epilogue.h"

namespace exec {

struct MatmulEpilogueForm {
  ir::ValueId x = ir::kNoValue, weights = ir::kNoValue;  // the MatMul's inputs
  ir::ValueId bias = ir::kNoValue, residual = ir::kNoValue;
  kernels::cuda::MatmulEpilogueParams::Activation activation = kernels::cuda::MatmulEpilogueParams::kNone;
};

// The form of `step`, or an error saying why not (e.g. "Sigmoid after the matmul"). A MatMul with
// no tail is one only with `allow_plain` (the exact-float32 fallback; the measured choice times
// cuBLASLt against cuDNN for steps with an epilogue).
absl::StatusOr<MatmulEpilogueForm> MatchMatmulEpilogue(const ir::Graph& g, const Step& step, bool allow_plain = false);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_MATMUL_EPILOGUE_FORM_H_
