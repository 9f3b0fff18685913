// Plan-time folding of shape computations for concrete input dims: the Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape/Range/ConstantOfShape/Expand chains exporters write for a dynamic
// H and W depend only on constants and the input dims, so for each input dims the GPU backend
// evaluates them once on the host, keeps the results on the device, and skips their steps at run
// time (no host step, so the run can be captured into a CUDA graph).
#ifndef ONNXRUN_RUNTIME_SHAPE_FOLDING_H_
#define ONNXRUN_RUNTIME_SHAPE_FOLDING_H_

#include <cstdint>
#include <map>
#include <vector>

#include "exec/plan.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace exec {

// Values of `plan` that are not constants in the plan but become constants once the graph inputs
// have `input_dims` (one per graph input): value id -> its tensor. A value past 2^20 elements is
// left to its step.
std::map<ir::ValueId, ir::Tensor> FoldShapeComputations(const Plan& plan,
                                                        const std::vector<std::vector<int64_t>>& input_dims);

// True when every output of `step` is in `folded`: the step has nothing left to compute.
bool StepIsFolded(const Step& step, const std::map<ir::ValueId, ir::Tensor>& folded);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_SHAPE_FOLDING_H_
