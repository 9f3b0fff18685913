// Mod kernel (see mod.h): a per-element functor run by the broadcasting kernel of broadcast.h.
#include <type_traits>

#include "kernels/cuda/broadcast.h"
#include "kernels/cuda/mod.h"

namespace kernels::cuda {
namespace {

struct ModFn {
  bool fmod;

  __device__ float operator()(float a, float b) const { return fmodf(a, b); }
  __device__ __half operator()(__half a, __half b) const {
    return __float2half_rn(fmodf(__half2float(a), __half2float(b)));
  }
  __device__ __nv_bfloat16 operator()(__nv_bfloat16 a, __nv_bfloat16 b) const {
    return __float2bfloat16_rn(fmodf(__bfloat162float(a), __bfloat162float(b)));
  }
  // Integers: the remainder of truncating division, moved to the divisor's sign unless fmod.
  template <typename T>
  __device__ T operator()(T x, T y) const {
    if (y == 0) return T{0};
    if constexpr (std::is_signed_v<T>) {
      if (y == T(-1)) return T{0};  // also avoids the INT_MIN % -1 overflow
      const T r = static_cast<T>(x % y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
      return r;
    } else {
      return static_cast<T>(x % y);
    }
  }
};

}  // namespace

cudaError_t Mod(ElementType type, bool fmod, const void* a, const void* b, void* out, const BroadcastShape& shape,
                cudaStream_t stream) {
  return VisitElementType(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if constexpr (std::is_same_v<T, Bool8>) {
      return cudaErrorInvalidValue;
    } else {
      return LaunchBroadcastBinary<T, T, T>(a, b, out, shape, ModFn{fmod}, stream);
    }
  });
}

}  // namespace kernels::cuda
