// Single nodes run by onnxrun's own CUDA kernels (kernels/cuda) instead of the host reference:
// data movement (Transpose, Slice, Split, Gather, Expand, Tile, Where), reductions (ReduceMean, ReduceSum,
// ReduceMax, ReduceMin, ReduceProd, ReduceL2), Softmax/LogSoftmax, LayerNormalization,
// InstanceNormalization, Resize, CumSum, the comparisons (Equal, Greater, GreaterOrEqual, Less,
// LessOrEqual), And/Or/Xor/Not, IsNaN, IsInf and Mod. The executor asks CudaKernelSupports once
// per node when it plans, and calls RunCudaKernel at run time; Unimplemented from RunCudaKernel
// means "run this node on the host" (a run-time form the kernels do not cover), never a wrong
// result.
//
// Floating-point ops take float32 and float16 (math in float or double, as the host reference);
// byte-moving ops take every dtype of 1, 2, 4 or 8 bytes; comparisons and Mod take float32,
// float16, int8, uint8, int32 and int64 (Equal also bool). Nothing here synchronises with the host,
// so the steps can be captured into CUDA graphs.
#ifndef ONNXRUN_RUNTIME_CUDA_KERNEL_STEPS_H_
#define ONNXRUN_RUNTIME_CUDA_KERNEL_STEPS_H_

#include <cuda_runtime_api.h>

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/device_tensor.h"

namespace exec {

// Whether `node` runs on the device with kernels/cuda (attributes and constant inputs checked here;
// dims are concrete only at run time).
bool CudaKernelSupports(const ir::Graph& graph, const ir::Node& node);
// Whether some form of this op type has a device runner.
bool HasDeviceRunner(std::string_view op_type);

// Runs it: `inputs` are the node's inputs on the device (entries for absent optional inputs are
// invalid DeviceTensors; constant inputs are also available through graph.value(id).constant on
// the host). Returns the outputs in LOGICAL (row-major, nhwc=false) layout, allocated with
// DeviceTensor::Allocate on `stream` (an invalid DeviceTensor for an absent optional output).
// Unimplemented when a run-time form is not covered (the caller then runs the node on the host).
// No host synchronisation: the executor captures steps into CUDA graphs.
//
// Device-side semantics that differ from the host reference: a Gather index read on the device
// that is out of range yields zeros (the host reports an error); constant indices are checked here
// and out-of-range ones return Unimplemented so the host reports them.
// `residual` (LayerNormalization only, else InvalidArgument): added to input 0 first, in one pass
// (a residual Add joined to the norm); Unimplemented when its dims or dtype differ from input 0's.
absl::StatusOr<std::vector<exec::DeviceTensor>> RunCudaKernel(const ir::Graph& graph, const ir::Node& node,
                                                              const std::vector<exec::DeviceTensor>& inputs,
                                                              cudaStream_t stream,
                                                              const exec::DeviceTensor* residual = nullptr);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_KERNEL_STEPS_H_
