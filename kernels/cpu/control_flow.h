// The control-flow kernels shared between control_flow.cc (If, Loop, the table row) and
// control_flow_scan.cc (Scan).
#ifndef ONNXRUN_KERNELS_CPU_CONTROL_FLOW_H_
#define ONNXRUN_KERNELS_CPU_CONTROL_FLOW_H_

#include "absl/status/status.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {

// Scan 9+ and Scan-8 (batched, sequence_lens all full length).
absl::Status RunScan(KernelContext& ctx);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_CONTROL_FLOW_H_
