// DFT, STFT and MelWeightMatrix: scalar inputs, attributes, extents and type/shape inference (see
// spectral.h).
#include "ops/spectral.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/tensor_ops_util.h"

namespace ops {
namespace {

using tensor_ops::Invalid;

// One integer from a scalar (or one-element) input.
absl::StatusOr<int64_t> ScalarInt(const ir::Tensor& t, const char* what) {
  if (t.num_elements() != 1 || (t.dtype() != ir::DType::kInt32 && t.dtype() != ir::DType::kInt64))
    return Invalid(absl::StrCat(what, " must be one integer"));
  return t.GetAsInt64(0);
}

absl::StatusOr<int64_t> CheckedLength(int64_t n, const char* what) {
  if (n < 1 || n > kMaxDftLength) {
    return Invalid(absl::StrCat(what, " ", n, " is outside [1, ", kMaxDftLength, "]"));
  }
  return n;
}

absl::Status CheckWork(int64_t lines, int64_t points, int64_t samples) {
  const double work = static_cast<double>(lines) * static_cast<double>(points) * static_cast<double>(samples);
  if (work > static_cast<double>(kMaxDftWork)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the transform needs ", work, " multiply-adds, more than the limit of ", kMaxDftWork));
  }
  return absl::OkStatus();
}

// The DFT axis: the `axis` attribute before opset 20, the optional axis input (default -2) from
// 20 on; in [0, rank - 2] after adding rank to a negative one (the last dim holds components).
absl::StatusOr<int64_t> DftAxis(const ir::Node& node, const ir::Tensor* axis_input, int64_t rank) {
  int64_t axis = node.attrs.GetInt("axis", 1);
  if (node.opset >= 20) {
    axis = -2;
    if (axis_input != nullptr) {
      absl::StatusOr<int64_t> a = ScalarInt(*axis_input, "axis");
      if (!a.ok()) return a.status();
      axis = *a;
    }
  }
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized > rank - 2) {
    return Invalid(absl::StrCat("axis ", axis, " is not a signal axis of a rank-", rank, " input"));
  }
  return normalized;
}

// MelWeightMatrix's output_datatype: float32, float64 or float16.
absl::StatusOr<ir::DType> MelOutputDType(const ir::Node& node) {
  const auto dtype = static_cast<ir::DType>(node.attrs.GetInt("output_datatype", 1));
  if (dtype != ir::DType::kFloat32 && dtype != ir::DType::kFloat64 && dtype != ir::DType::kFloat16 &&
      dtype != ir::DType::kBFloat16) {
    return Invalid(absl::StrCat("output_datatype ", static_cast<int>(dtype), " is not a floating-point type"));
  }
  return dtype;
}

struct DftAttrs {
  bool inverse = false, onesided = false;
  bool irfft() const { return inverse && onesided; }  // Hermitian half in, real signal out
};
absl::StatusOr<DftAttrs> ParseDftAttrs(const ir::Node& node) {
  DftAttrs attrs;
  absl::StatusOr<bool> inverse = ParseFlagAttribute(node, "inverse", false);
  if (!inverse.ok()) return inverse.status();
  absl::StatusOr<bool> onesided = ParseFlagAttribute(node, "onesided", false);
  if (!onesided.ok()) return onesided.status();
  attrs.inverse = *inverse;
  attrs.onesided = *onesided;
  return attrs;
}

// The output shape from the input's: the axis dim becomes `bins` (unknown unless computable), the
// last dim 2.
absl::StatusOr<std::vector<ir::TensorType>> InferDft(const InferContext& ctx) {
  if (absl::Status s =
          ExpectDType(ctx, 0, {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16});
      !s.ok()) {
    return s;
  }
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.has_input(i)) {
      if (absl::Status s = ExpectDType(ctx, i, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
    }
  }
  absl::StatusOr<DftAttrs> attrs = ParseDftAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (!x.shape) return tensor_ops::One(x.dtype, std::nullopt);
  const int64_t rank = x.rank();
  if (rank < 2) return Invalid(absl::StrCat("input must have rank >= 2, not ", rank));
  const ir::Dim components = x.shape->back();
  if (components.known() && components.value != 1 && components.value != 2) {
    return Invalid(absl::StrCat("the last dim must be 1 (real) or 2 (complex), not ", components.value));
  }
  if (attrs->irfft() && components.known() && components.value != 2) {
    return Invalid("an inverse onesided DFT needs complex input (a last dim of 2)");
  }
  ir::Shape out = *x.shape;
  out.back() = attrs->irfft() ? 1 : 2;
  if (ctx.node.opset >= 20 && ctx.has_input(2) && ctx.value(2) == nullptr) {
    ir::Shape unknown = tensor_ops::UnknownShape(rank);
    unknown.back() = out.back();
    return tensor_ops::One(x.dtype, unknown);
  }
  absl::StatusOr<int64_t> axis = DftAxis(ctx.node, ctx.value(2), rank);
  if (!axis.ok()) return axis.status();
  ir::Dim n = out[*axis];
  if (attrs->irfft() && !ctx.has_input(1)) {  // the default length: 2 (input length - 1)
    n = ir::Dim();
    if (out[*axis].known()) {
      absl::StatusOr<int64_t> checked = CheckedLength(2 * (out[*axis].value - 1), "dft_length");
      if (!checked.ok()) return checked.status();
      n = *checked;
    }
  }
  if (ctx.has_input(1)) {
    n = ir::Dim();
    if (ctx.value(1) != nullptr) {
      absl::StatusOr<int64_t> length = ScalarInt(*ctx.value(1), "dft_length");
      if (!length.ok()) return length.status();
      absl::StatusOr<int64_t> checked = CheckedLength(*length, "dft_length");
      if (!checked.ok()) return checked.status();
      n = *checked;
    }
  }
  out[*axis] = !attrs->onesided || attrs->irfft() ? n : n.known() ? ir::Dim(n.value / 2 + 1) : ir::Dim();
  return tensor_ops::One(x.dtype, out);
}

// STFT's output [batch, frames, bins, 2], computed when the sizes are known.
absl::StatusOr<std::vector<ir::TensorType>> InferStft(const InferContext& ctx) {
  if (absl::Status s =
          ExpectDType(ctx, 0, {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  const ir::TensorType& signal = ctx.type(0);
  if (signal.shape && signal.shape->size() != 3) {
    return Invalid(absl::StrCat("signal must have rank 3 ([batch, length, 1 or 2]), not ", signal.shape->size()));
  }
  if (ctx.has_input(2) && ctx.type(2).dtype != signal.dtype) return Invalid("window must have the signal's dtype");
  const bool sizes_known = signal.shape && ir::ShapeToInts(*signal.shape) && ctx.value(1) != nullptr &&
                           (!ctx.has_input(3) || ctx.value(3) != nullptr) &&
                           (!ctx.has_input(2) || (ctx.type(2).shape && ir::ShapeToInts(*ctx.type(2).shape)));
  if (!sizes_known) {
    ir::Shape out = tensor_ops::UnknownShape(4);
    if (signal.shape) out[0] = (*signal.shape)[0];
    out[3] = 2;
    return tensor_ops::One(signal.dtype, out);
  }
  const std::optional<std::vector<int64_t>> window_dims =
      ctx.has_input(2) ? ir::ShapeToInts(*ctx.type(2).shape) : std::nullopt;
  absl::StatusOr<StftExtents> e = StftExtentsOf(ctx.node, *ir::ShapeToInts(*signal.shape), *ctx.value(1),
                                                window_dims ? &*window_dims : nullptr, ctx.value(3));
  if (!e.ok()) return e.status();
  return tensor_ops::One(signal.dtype, ir::Shape{e->batch, e->frames, e->bins, 2});
}

absl::StatusOr<std::vector<ir::TensorType>> InferMelWeightMatrix(const InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = ExpectDType(ctx, i, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  }
  for (size_t i = 3; i < 5; ++i) {
    if (absl::Status s =
            ExpectDType(ctx, i, {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16});
        !s.ok()) {
      return s;
    }
  }
  std::vector<const ir::Tensor*> values;
  for (size_t i = 0; i < 5; ++i) values.push_back(ctx.value(i));
  if (std::find(values.begin(), values.end(), nullptr) != values.end()) {
    absl::StatusOr<ir::DType> dtype = MelOutputDType(ctx.node);
    if (!dtype.ok()) return dtype.status();
    return tensor_ops::One(*dtype, tensor_ops::UnknownShape(2));
  }
  absl::StatusOr<MelParams> p = MelParamsOf(ctx.node, values);
  if (!p.ok()) return p.status();
  return tensor_ops::One(p->dtype, ir::Shape{p->dft_length / 2 + 1, p->num_mel_bins});
}

}  // namespace

absl::StatusOr<DftExtents> DftExtentsOf(const ir::Node& node, const std::vector<int64_t>& dims,
                                        const ir::Tensor* dft_length, const ir::Tensor* axis_input) {
  absl::StatusOr<DftAttrs> attrs = ParseDftAttrs(node);
  if (!attrs.ok()) return attrs.status();
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < 2) return Invalid(absl::StrCat("input must have rank >= 2, not ", rank));
  absl::StatusOr<int64_t> axis = DftAxis(node, axis_input, rank);
  if (!axis.ok()) return axis.status();
  DftExtents e;
  e.inverse = attrs->inverse;
  e.real_output = attrs->irfft();
  e.components = dims.back();
  if (e.components != 1 && e.components != 2) {
    return Invalid(absl::StrCat("the last dim must be 1 (real) or 2 (complex), not ", e.components));
  }
  if (e.real_output && e.components != 2) {
    return Invalid("an inverse onesided DFT needs complex input (a last dim of 2)");
  }
  for (int64_t d = 0; d < rank - 1; ++d) (d < *axis ? e.outer : d == *axis ? e.length : e.inner) *= dims[d];
  int64_t n = e.real_output ? 2 * (e.length - 1) : e.length;
  if (dft_length != nullptr) {
    absl::StatusOr<int64_t> v = ScalarInt(*dft_length, "dft_length");
    if (!v.ok()) return v.status();
    n = *v;
  }
  absl::StatusOr<int64_t> checked = CheckedLength(n, "dft_length");
  if (!checked.ok()) return checked.status();
  e.dft_length = *checked;
  e.bins = attrs->onesided && !e.real_output ? e.dft_length / 2 + 1 : e.dft_length;
  const int64_t samples = e.real_output ? e.dft_length / 2 + 1 : e.dft_length;
  if (absl::Status s = CheckWork(e.outer * e.inner, e.bins, std::min(e.length, samples)); !s.ok()) return s;
  return e;
}

absl::StatusOr<StftExtents> StftExtentsOf(const ir::Node& node, const std::vector<int64_t>& signal_dims,
                                          const ir::Tensor& frame_step, const std::vector<int64_t>* window_dims,
                                          const ir::Tensor* frame_length) {
  absl::StatusOr<bool> onesided = ParseFlagAttribute(node, "onesided", true);
  if (!onesided.ok()) return onesided.status();
  if (signal_dims.size() != 3 || (signal_dims[2] != 1 && signal_dims[2] != 2)) {
    return Invalid("signal must have shape [batch, length, 1 or 2]");
  }
  StftExtents e;
  e.batch = signal_dims[0];
  e.length = signal_dims[1];
  e.components = signal_dims[2];
  absl::StatusOr<int64_t> step = ScalarInt(frame_step, "frame_step");
  if (!step.ok()) return step.status();
  if (*step < 1) return Invalid(absl::StrCat("frame_step must be positive, not ", *step));
  e.frame_step = *step;
  if (window_dims != nullptr && window_dims->size() != 1) return Invalid("window must be 1-D");
  if (frame_length == nullptr && window_dims == nullptr) return Invalid("STFT needs a window or a frame_length");
  int64_t length = window_dims != nullptr ? window_dims->front() : 0;
  if (frame_length != nullptr) {
    absl::StatusOr<int64_t> v = ScalarInt(*frame_length, "frame_length");
    if (!v.ok()) return v.status();
    if (window_dims != nullptr && *v != length) {
      return Invalid(absl::StrCat("frame_length ", *v, " differs from the window's length ", length));
    }
    length = *v;
  }
  absl::StatusOr<int64_t> checked = CheckedLength(length, "frame_length");
  if (!checked.ok()) return checked.status();
  e.frame_length = *checked;
  if (e.frame_length > e.length) {
    return Invalid(absl::StrCat("frame_length ", e.frame_length, " is longer than the signal (", e.length, ")"));
  }
  e.frames = (e.length - e.frame_length) / e.frame_step + 1;
  e.bins = *onesided ? e.frame_length / 2 + 1 : e.frame_length;
  if (absl::Status s = CheckWork(e.batch * e.frames, e.bins, e.frame_length); !s.ok()) return s;
  return e;
}

absl::StatusOr<MelParams> MelParamsOf(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs) {
  MelParams p;
  absl::StatusOr<ir::DType> dtype = MelOutputDType(node);
  if (!dtype.ok()) return dtype.status();
  p.dtype = *dtype;
  if (inputs.size() != 5) return Invalid("MelWeightMatrix takes 5 inputs");
  int64_t* ints[] = {&p.num_mel_bins, &p.dft_length, &p.sample_rate};
  const char* names[] = {"num_mel_bins", "dft_length", "sample_rate"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<int64_t> v = ScalarInt(*inputs[i], names[i]);
    if (!v.ok()) return v.status();
    if (*v < 1 || *v > kMaxDftLength)
      return Invalid(absl::StrCat(names[i], " ", *v, " is outside [1, ", kMaxDftLength, "]"));
    *ints[i] = *v;
  }
  if (inputs[3]->num_elements() != 1 || inputs[4]->num_elements() != 1) return Invalid("the edges must be scalars");
  p.lower_edge_hertz = inputs[3]->GetAsDouble(0);
  p.upper_edge_hertz = inputs[4]->GetAsDouble(0);
  if (!(p.lower_edge_hertz >= 0 && p.lower_edge_hertz < p.upper_edge_hertz &&
        p.upper_edge_hertz <= static_cast<double>(p.sample_rate) / 2)) {
    return Invalid("the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2");
  }
  if (!CheckWork(p.dft_length / 2 + 1, p.num_mel_bins, 1).ok()) {
    return absl::ResourceExhaustedError("the mel weight matrix would be too large");
  }
  return p;
}

std::vector<OpDef> SpectralOpDefs() {
  return {{"DFT", 1, 3, InferDft}, {"STFT", 2, 4, InferStft}, {"MelWeightMatrix", 5, 5, InferMelWeightMatrix}};
}

}  // namespace ops
