// Comparison, logic and predicate kernels (see compare.h): per-element functors run by the
// broadcasting kernels of broadcast.h, one instantiation per element type.
#include <type_traits>

#include "kernels/cuda/broadcast.h"
#include "kernels/cuda/compare.h"

namespace kernels::cuda {
namespace {

template <typename V>
__device__ __forceinline__ bool Truth(V v) {
  return v != V(0);
}

struct CompareFn {
  CompareOp op;

  template <typename T>
  __device__ uint8_t operator()(T a, T b) const {
    const auto x = ValueOf(a);
    const auto y = ValueOf(b);
    bool r = false;
    switch (op) {
      case CompareOp::kEqual: r = x == y; break;
      case CompareOp::kGreater: r = x > y; break;
      case CompareOp::kGreaterOrEqual: r = x >= y; break;
      case CompareOp::kLess: r = x < y; break;
      case CompareOp::kLessOrEqual: r = x <= y; break;
      case CompareOp::kAnd: r = Truth(x) && Truth(y); break;
      case CompareOp::kOr: r = Truth(x) || Truth(y); break;
      case CompareOp::kXor: r = Truth(x) != Truth(y); break;
    }
    return r ? 1 : 0;
  }
};

struct PredicateFn {
  PredicateOp op;
  PredicateParams params;

  template <typename T>
  __device__ uint8_t operator()(T a) const {
    const auto x = ValueOf(a);
    bool r = false;
    switch (op) {
      case PredicateOp::kNot: r = !Truth(x); break;
      case PredicateOp::kIsNaN: r = x != x; break;  // only NaN differs from itself
      case PredicateOp::kIsInf:
        if constexpr (std::is_floating_point_v<decltype(x)>) {
          r = isinf(x) && (x > 0 ? params.detect_positive : params.detect_negative);
        }
        break;
    }
    return r ? 1 : 0;
  }
};

}  // namespace

cudaError_t Compare(CompareOp op, ElementType type, const void* a, const void* b, void* out,
                    const BroadcastShape& shape, cudaStream_t stream) {
  return VisitElementType(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return LaunchBroadcastBinary<T, T, uint8_t>(a, b, out, shape, CompareFn{op}, stream);
  });
}

cudaError_t Predicate(PredicateOp op, PredicateParams params, ElementType type, const void* x, void* out,
                      const BroadcastShape& shape, cudaStream_t stream) {
  if (op == PredicateOp::kIsInf && type != ElementType::kFloat32 && type != ElementType::kFloat16 &&
      type != ElementType::kBFloat16) {
    return cudaErrorInvalidValue;
  }
  return VisitElementType(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return LaunchBroadcastUnary<T, uint8_t>(x, out, shape, PredicateFn{op, params}, stream);
  });
}

}  // namespace kernels::cuda
