// What the executors may assume of a CPU kernel beyond kernel.h's contract, per op type: that it
// writes every element of its outputs (so they need not be zero-filled first), that its output 0
// may take over the bytes of an input of the same dtype and dims (it reads element i of that input
// only to write element i of the output), and that it is elementwise (output element i from
// element i of each full-size input and the broadcast ones: it computes the same on the elements
// of every full-size operand permuted alike, e.g. channels-last, runtime/cpu_layout.h).
#ifndef ONNXRUN_KERNELS_CPU_KERNEL_TRAITS_H_
#define ONNXRUN_KERNELS_CPU_KERNEL_TRAITS_H_

#include <string_view>

namespace kernels::cpu {

bool WritesEveryOutputElement(std::string_view op_type);
bool MayWriteOverInput(std::string_view op_type);
bool IsElementwise(std::string_view op_type);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_KERNEL_TRAITS_H_
