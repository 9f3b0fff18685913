// StridedView: a tensor read in place from another tensor's dense buffer, after data-movement ops
// that move no data when done as index arithmetic (Reshape, Transpose, Gather of one index, Slice
// or Split along one axis). Each logical dim is a list of (size, stride) atoms, outermost first, so
// a Reshape that merges dims whose strides do not line up (torch's [S, B*H, D] view of
// [S, B, H*D]) stays exact until a later Reshape splits them again (attention's [B, H, S, D]).
// The GPU executor uses it to let attention read its heads and write its output in the layout
// the surrounding transposes name, instead of copying them (runtime/cuda_views.cc).
#ifndef ONNXRUN_RUNTIME_STRIDED_VIEW_H_
#define ONNXRUN_RUNTIME_STRIDED_VIEW_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace exec {

struct ViewAtom {
  int64_t size = 1;
  int64_t stride = 0;  // in elements
};

class StridedView {
 public:
  // The row-major view of a dense tensor with `dims`.
  static StridedView Dense(const std::vector<int64_t>& dims);

  // Each returns false, leaving the view unspecified, when the op cannot be expressed as a view
  // (a Reshape splitting an atom unevenly, a zero-size dim, a Slice across atoms).
  bool Reshape(const std::vector<int64_t>& dims);
  bool Transpose(const std::vector<int64_t>& perm);
  // Gather of one index along `axis`: the axis goes.
  bool Select(int64_t axis, int64_t index);
  // Slice with step 1 (and each Split output) along `axis`.
  bool Narrow(int64_t axis, int64_t start, int64_t length);

  std::vector<int64_t> dims() const;
  int64_t offset() const { return offset_; }
  // One stride per dim, when every dim is a single atom (size-1 dims get stride 0); else nullopt.
  std::optional<std::vector<int64_t>> Strides() const;
  // Every atom in order: the view as a (higher-rank) strided tensor, for a copy that materialises it.
  std::vector<ViewAtom> Atoms() const;

 private:
  std::vector<std::vector<ViewAtom>> dims_;  // per logical dim; empty for a dim of size 1
  int64_t offset_ = 0;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_STRIDED_VIEW_H_
