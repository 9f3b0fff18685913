// The spectral ops of opset 17+: DFT, STFT and MelWeightMatrix. Their attributes and scalar inputs are
// read once here, into the extents the CPU kernel loops over, and their type/shape inference.
// Complex values are stored as a trailing dim of 2 (real, imaginary); a trailing dim of 1 is real.
// The transforms are direct sums (no FFT); the lengths and the total work are capped, so a tiny
// model cannot ask for hours of compute.
#ifndef ONNXRUN_OPS_SPECTRAL_H_
#define ONNXRUN_OPS_SPECTRAL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/op_def.h"

namespace ops {

// The longest transform (dft_length, frame_length), and the most complex multiply-adds one node
// may ask for (about a second of CPU time).
inline constexpr int64_t kMaxDftLength = int64_t{1} << 24;
inline constexpr int64_t kMaxDftWork = int64_t{1} << 30;

// One batch of 1-D transforms: the input viewed as [outer, length, inner, components] (components 1
// real or 2 complex), each of the outer × inner lines transformed at `dft_length` points (the
// input zero-padded or truncated to it), of which the first `bins` are written, complex.
// The inverse one-sided transform (irfft: inverse and onesided) instead reads the first
// dft_length / 2 + 1 points of each complex line as half of a Hermitian spectrum and writes all
// `bins` = dft_length points of its real inverse (components 1 out); dft_length defaults to
// 2 (length - 1) there.
struct DftExtents {
  int64_t outer = 1, length = 1, inner = 1, components = 1;
  int64_t dft_length = 1, bins = 1;
  bool inverse = false;
  bool real_output = false;  // irfft
};

// DFT's extents for concrete input dims and its optional dft_length and (opset 20+) axis inputs.
absl::StatusOr<DftExtents> DftExtentsOf(const ir::Node& node, const std::vector<int64_t>& dims,
                                        const ir::Tensor* dft_length, const ir::Tensor* axis);

// STFT: `frames` windows of `frame_length` samples, `frame_step` apart, over [batch, length,
// components] signals; each windowed frame is transformed and its first `bins` values written.
struct StftExtents {
  int64_t batch = 1, length = 1, components = 1;
  int64_t frame_step = 1, frame_length = 1, frames = 0, bins = 1;
};

// STFT's extents for concrete signal dims, its frame_step, the optional window's dims (nullptr when
// absent; only its length matters) and the optional frame_length.
absl::StatusOr<StftExtents> StftExtentsOf(const ir::Node& node, const std::vector<int64_t>& signal_dims,
                                          const ir::Tensor& frame_step, const std::vector<int64_t>* window_dims,
                                          const ir::Tensor* frame_length);

// MelWeightMatrix's scalar inputs, read and checked.
struct MelParams {
  int64_t num_mel_bins = 0, dft_length = 0, sample_rate = 0;
  double lower_edge_hertz = 0, upper_edge_hertz = 0;
  ir::DType dtype = ir::DType::kFloat32;
};
absl::StatusOr<MelParams> MelParamsOf(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs);

std::vector<OpDef> SpectralOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_SPECTRAL_H_
