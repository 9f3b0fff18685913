// acc[i] += a * x[i]: the inner loop of the CPU Attention kernel, vectorised for
// AVX-512, AVX2+FMA or the baseline ISA, picked once at run time with __builtin_cpu_supports (not
// an ifunc: sanitizer builds crash in ifunc resolvers, which run before the runtime starts).
#ifndef ONNXRUN_KERNELS_CPU_AXPY_H_
#define ONNXRUN_KERNELS_CPU_AXPY_H_

#include <cstdint>

namespace kernels::cpu {

// acc and x must not overlap. Each acc[i] gets one multiply-add, in order.
void Axpy(float* acc, const float* x, float a, int64_t n);
void Axpy(double* acc, const double* x, double a, int64_t n);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_AXPY_H_
