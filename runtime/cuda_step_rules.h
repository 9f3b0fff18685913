// Support rules of the pointwise and copy Kernel steps that run on onnxrun's own CUDA kernels
// (defined in cuda_steps_kernel.cc; the executor's dispatch and the split fallback ask them).
#ifndef ONNXRUN_RUNTIME_CUDA_STEP_RULES_H_
#define ONNXRUN_RUNTIME_CUDA_STEP_RULES_H_

#include "exec/plan.h"
#include "ir/graph.h"

namespace exec {

// Unary/binary float ops of kernels/cuda/elementwise.h, Clip with constant bounds, Gelu, float Cast.
bool RunsOnDevicePointwise(const ir::Graph& graph, const ir::Node& node);
// Concat, and constant Pad with constant non-negative pads: strided copies on the device.
bool RunsOnDeviceCopy(const ir::Graph& graph, const ir::Node& node);
// A Kernel step of a float Cast followed by the channel Pad of its result (partitioner/cover.cc):
// one own kernel casts, stores NHWC and pads (kernels/cuda/cast_pad.h).
bool IsCastPadStep(const ir::Graph& graph, const Step& step);
// A Pad (RunsOnDeviceCopy) of zeros at the end of a 4-D tensor's channel axis only: the channel
// padding before a stem conv; from an NCHW float map into NHWC it runs as that one kernel too.
bool IsChannelZeroPad(const ir::Graph& graph, const ir::Node& pad);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_STEP_RULES_H_
