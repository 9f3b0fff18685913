// Owns the run-time ISA choice of Axpy (see axpy.h): one loop, compiled three times.
#include "kernels/cpu/axpy.h"

namespace kernels::cpu {
namespace {

template <typename T>
__attribute__((always_inline)) inline void AxpyLoop(T* __restrict acc, const T* __restrict x, T a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += a * x[i];
}

template <typename T>
__attribute__((target("avx512f"))) void AxpyAvx512(T* acc, const T* x, T a, int64_t n) {
  AxpyLoop(acc, x, a, n);
}

template <typename T>
__attribute__((target("avx2,fma"))) void AxpyAvx2(T* acc, const T* x, T a, int64_t n) {
  AxpyLoop(acc, x, a, n);
}

template <typename T>
void AxpyBaseline(T* acc, const T* x, T a, int64_t n) {
  AxpyLoop(acc, x, a, n);
}

template <typename T>
using AxpyFn = void (*)(T*, const T*, T, int64_t);

template <typename T>
AxpyFn<T> ChooseAxpy() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return &AxpyAvx512<T>;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &AxpyAvx2<T>;
  return &AxpyBaseline<T>;
}

}  // namespace

void Axpy(float* acc, const float* x, float a, int64_t n) {
  static const AxpyFn<float> fn = ChooseAxpy<float>();
  fn(acc, x, a, n);
}

void Axpy(double* acc, const double* x, double a, int64_t n) {
  static const AxpyFn<double> fn = ChooseAxpy<double>();
  fn(acc, x, a, n);
}

}  // namespace kernels::cpu
