// STUB: replaced by the family implementation.
#include "kernels/cpu/kernel.h"
namespace kernels::cpu {
std::vector<KernelDef> NnKernels() { return {}; }
}  // namespace kernels::cpu
