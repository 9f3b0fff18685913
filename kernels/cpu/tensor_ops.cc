// STUB: replaced by the family implementation.
#include "kernels/cpu/kernel.h"
namespace kernels::cpu {
std::vector<KernelDef> TensorKernels() { return {}; }
}  // namespace kernels::cpu
