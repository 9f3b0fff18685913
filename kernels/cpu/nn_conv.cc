// CPU kernels of Conv (float32 on oneDNN, onednn_conv.h; otherwise, and where oneDNN declines,
// im2col + gemm per group, a direct loop for 2-D groups of one input channel) and ConvTranspose (gemm + col2im
// per group), N-d spatial, float32/float64 natively and float16 through float32.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::nn {
namespace {

// The tensors and channel counts shared by Conv and ConvTranspose, validated.
struct ConvArgs {
  const ir::Tensor* x = nullptr;
  const ir::Tensor* w = nullptr;
  const ir::Tensor* b = nullptr;
  ir::Tensor* y = nullptr;
  int64_t group = 1;
  size_t spatial = 0;
  WindowAttrs window;
};

absl::StatusOr<ConvArgs> ReadConvArgs(const KernelContext& ctx) {
  ConvArgs a;
  a.x = ctx.input(0);
  a.w = ctx.input(1);
  a.b = ctx.input(2);
  a.y = ctx.output(0);
  if (a.x == nullptr || a.w == nullptr || a.y == nullptr) {
    return absl::InvalidArgumentError("X, W and Y are required");
  }
  if (a.x->rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat("X must have rank >= 3 (N, C, spatial...), got ", a.x->rank()));
  }
  if (a.w->rank() != a.x->rank()) {
    return absl::InvalidArgumentError(absl::StrCat("W has rank ", a.w->rank(), ", X has rank ", a.x->rank()));
  }
  for (const ir::Tensor* t : {a.w, a.b, static_cast<const ir::Tensor*>(a.y)}) {
    if (t != nullptr && t->dtype() != a.x->dtype()) {
      return absl::InvalidArgumentError("X, W, B and Y must have the same dtype");
    }
  }
  a.group = ctx.attrs().GetInt("group", 1);
  if (a.group <= 0) return absl::InvalidArgumentError(absl::StrCat("group ", a.group, " <= 0"));
  a.spatial = static_cast<size_t>(a.x->rank() - 2);
  absl::Span<const int64_t> kernel = absl::MakeConstSpan(a.w->shape()).subspan(2);
  absl::StatusOr<WindowAttrs> window = ReadWindowAttrs(ctx.attrs(), a.spatial, kernel);
  if (!window.ok()) return window.status();
  a.window = *std::move(window);
  return a;
}

absl::Status CheckBias(const ir::Tensor* b, int64_t channels) {
  if (b != nullptr && (b->rank() != 1 || b->shape()[0] != channels)) {
    return absl::InvalidArgumentError(
        absl::StrCat("B has shape ", ir::ShapeToString(b->shape()), ", expected [", channels, "]"));
  }
  return absl::OkStatus();
}

// y[c, :] = bias[c] for `channels` rows of `size` elements.
template <typename T>
void FillBias(const T* bias, int64_t channels, int64_t size, T* y) {
  for (int64_t c = 0; c < channels; ++c) std::fill(y + c * size, y + (c + 1) * size, bias[c]);
}

// y[c, :] += bias[c].
template <typename T>
void AddBias(const T* bias, int64_t channels, int64_t size, T* y) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < size; ++i) y[c * size + i] += bias[c];
  }
}

// One output channel of a 2-D conv whose group has a single input channel (depthwise convs): each
// output row starts at the bias and adds, tap by tap, the weight times the input row over the
// outputs whose tap falls inside the image (a contiguous, vectorisable loop at stride 1). im2col
// plus a one-row gemm per channel costs several times the convolution itself there.
template <typename T>
void SingleChannelConv2d(const T* x, const T* w, T bias, const WindowGeometry& geo, T* y) {
  const int64_t in_h = geo.image[0], in_w = geo.image[1], out_w = geo.grid[1];
  const int64_t sw = geo.strides[1];
  for (int64_t oh = 0; oh < geo.grid[0]; ++oh) {
    T* row = y + oh * out_w;
    std::fill(row, row + out_w, bias);
    for (int64_t i = 0; i < geo.kernel[0]; ++i) {
      const int64_t ih = oh * geo.strides[0] - geo.pad_begin[0] + i * geo.dilations[0];
      if (ih < 0 || ih >= in_h) continue;
      const T* in = x + ih * in_w;
      for (int64_t j = 0; j < geo.kernel[1]; ++j) {
        const T wv = w[i * geo.kernel[1] + j];
        const int64_t offset = j * geo.dilations[1] - geo.pad_begin[1];  // iw = ow * sw + offset
        const int64_t first = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
        const int64_t last = in_w - 1 - offset < 0 ? -1 : std::min(out_w - 1, (in_w - 1 - offset) / sw);
        if (sw == 1) {
          for (int64_t ow = first; ow <= last; ++ow) row[ow] += wv * in[ow + offset];
        } else {
          for (int64_t ow = first; ow <= last; ++ow) row[ow] += wv * in[ow * sw + offset];
        }
      }
    }
  }
}

// Conv's channel, bias and output checks; its geometry.
absl::StatusOr<WindowGeometry> CheckConv(const ConvArgs& a) {
  const int64_t channels = a.x->shape()[1], out_channels = a.w->shape()[0], group_in = a.w->shape()[1];
  if (channels != group_in * a.group) {
    return absl::InvalidArgumentError(
        absl::StrCat("X has ", channels, " channels, W expects ", group_in, " x group ", a.group));
  }
  if (out_channels % a.group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("W's ", out_channels, " output channels not divisible by group ", a.group));
  }
  if (absl::Status s = CheckBias(a.b, out_channels); !s.ok()) return s;
  absl::StatusOr<WindowGeometry> geo = ForwardGeometry(a.window, absl::MakeConstSpan(a.x->shape()).subspan(2));
  if (!geo.ok()) return geo.status();
  std::vector<int64_t> y_shape = {a.x->shape()[0], out_channels};
  y_shape.insert(y_shape.end(), geo->grid.begin(), geo->grid.end());
  if (absl::Status s = ExpectShape(*a.y, y_shape, "Y"); !s.ok()) return s;
  return geo;
}

// im2col + gemm per group, or the direct loop for 2-D groups of one input channel; `geo` from CheckConv.
template <typename T>
absl::Status ConvTyped(const ConvArgs& a, const WindowGeometry& geo) {
  const int64_t n_batch = a.x->shape()[0], channels = a.x->shape()[1];
  const int64_t out_channels = a.w->shape()[0], group_in = a.w->shape()[1];
  const int64_t kernel_size = Product(geo.kernel);
  const int64_t in_size = Product(geo.image), out_size = Product(geo.grid);
  const int64_t rows = group_in * kernel_size, group_out = out_channels / a.group;
  bool direct = kernel_size == 1;
  for (size_t i = 0; i < a.spatial; ++i) {
    direct = direct && geo.strides[i] == 1 && geo.pad_begin[i] == 0 && geo.pad_end[i] == 0;
  }
  if (group_in == 1 && a.spatial == 2 && a.group > 1) {
    const T* x = a.x->data<T>();
    const T* w = a.w->data<T>();
    const int64_t min_planes = ItemsForWork(out_size * kernel_size, 1 << 14);
    ParallelFor(n_batch * out_channels, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t n = plane / out_channels, oc = plane % out_channels;
        const T* xc = x + (n * channels + oc / group_out) * in_size;
        const T bias = a.b != nullptr ? a.b->data<T>()[oc] : T{0};
        SingleChannelConv2d(xc, w + oc * kernel_size, bias, geo, a.y->data<T>() + plane * out_size);
      }
    });
    return absl::OkStatus();
  }
  // Im2Col writes every element (zeros where a tap falls in the padding): no need to zero it first.
  absl::StatusOr<std::unique_ptr<T[]>> col = UninitializedScratch<T>(direct ? 0 : rows, out_size);
  if (!col.ok()) return col.status();
  const T* x = a.x->data<T>();
  const T* w = a.w->data<T>();
  const T* bias = a.b != nullptr ? a.b->data<T>() : nullptr;
  T* y = a.y->data<T>();
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t g = 0; g < a.group; ++g) {
      const T* xg = x + (n * channels + g * group_in) * in_size;
      if (!direct) Im2Col(xg, group_in, geo, col->get());
      T* yg = y + (n * out_channels + g * group_out) * out_size;
      if (bias != nullptr) FillBias(bias + g * group_out, group_out, out_size, yg);
      absl::Status s = Gemm(false, false, group_out, out_size, rows, T{1}, w + g * group_out * rows,
                            direct ? xg : col->get(), bias != nullptr ? T{1} : T{0}, yg);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// Float32 Conv: on oneDNN where it takes the convolution, else ConvTyped (on an NCHW copy of X when
// the executor handed X channels-last).
absl::Status ConvFloat32(KernelContext& ctx, ConvArgs a, const WindowGeometry& geo) {
  const ConvProblem problem{a.x->shape()[0], a.x->shape()[1], a.w->shape()[0], a.group, &geo};
  absl::StatusOr<bool> done = OneDnnConvFloat(ctx, problem, a.x->data<float>(), a.w->data<float>(),
                                              a.b != nullptr ? a.b->data<float>() : nullptr, a.y->data<float>());
  if (!done.ok() || *done) return done.status();
  absl::StatusOr<ir::Tensor> nchw_x;
  if ((ctx.channels_last_inputs & 1) != 0) {
    nchw_x = ChannelsLastToNchw(*a.x);
    if (!nchw_x.ok()) return nchw_x.status();
    a.x = &*nchw_x;
  }
  return ConvTyped<float>(a, geo);
}

}  // namespace

// ConvTranspose geometry: the image is the output, computed from the grid (X's spatial dims).
absl::StatusOr<WindowGeometry> TransposeGeometry(const ir::Attributes& attrs, const WindowAttrs& w,
                                                 absl::Span<const int64_t> input_spatial) {
  const size_t nd = w.kernel.size();
  std::vector<int64_t> output_padding = attrs.GetInts("output_padding", std::vector<int64_t>(nd, 0));
  std::vector<int64_t> output_shape = attrs.GetInts("output_shape");
  if (output_padding.size() != nd) {
    return absl::InvalidArgumentError(
        absl::StrCat("output_padding has ", output_padding.size(), " entries, expected ", nd));
  }
  if (output_shape.size() == nd + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != nd) {
    return absl::InvalidArgumentError(
        absl::StrCat("output_shape has ", output_shape.size(), " entries, expected ", nd));
  }
  WindowGeometry geo;
  geo.grid.assign(input_spatial.begin(), input_spatial.end());
  geo.kernel = w.kernel;
  geo.strides = w.strides;
  geo.dilations = w.dilations;
  const bool same = w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower;
  for (size_t i = 0; i < nd; ++i) {
    if (output_padding[i] < 0) return absl::InvalidArgumentError("negative output_padding");
    const int64_t in = input_spatial[i], s = w.strides[i];
    const int64_t full = s * (in - 1) + output_padding[i] + (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t out, pb;
    if (!output_shape.empty() || same) {
      out = !output_shape.empty() ? output_shape[i] : in * s;
      const int64_t total = std::max<int64_t>(0, full - out);
      pb = w.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    } else {
      const bool valid = w.auto_pad == AutoPad::kValid;
      pb = valid ? 0 : w.pads[i];
      out = full - pb - (valid ? 0 : w.pads[i + nd]);
    }
    if (out < 0) {
      return absl::InvalidArgumentError(absl::StrCat("negative output extent ", out));
    }
    geo.image.push_back(out);
    geo.pad_begin.push_back(pb);
    geo.pad_end.push_back(0);  // unused by col2im
  }
  return geo;
}

namespace {

template <typename T>
absl::Status ConvTransposeTyped(const ConvArgs& a, const ir::Attributes& attrs) {
  const int64_t n_batch = a.x->shape()[0], channels = a.x->shape()[1];
  const int64_t group_out = a.w->shape()[1];
  if (a.w->shape()[0] != channels || channels % a.group != 0) {
    return absl::InvalidArgumentError(absl::StrCat("W has shape ", ir::ShapeToString(a.w->shape()), " for X with ",
                                                   channels, " channels and group ", a.group));
  }
  const int64_t out_channels = group_out * a.group, group_in = channels / a.group;
  if (absl::Status s = CheckBias(a.b, out_channels); !s.ok()) return s;
  absl::StatusOr<WindowGeometry> geo = TransposeGeometry(attrs, a.window, absl::MakeConstSpan(a.x->shape()).subspan(2));
  if (!geo.ok()) return geo.status();
  std::vector<int64_t> y_shape = {n_batch, out_channels};
  y_shape.insert(y_shape.end(), geo->image.begin(), geo->image.end());
  if (absl::Status s = ExpectShape(*a.y, y_shape, "Y"); !s.ok()) return s;

  const int64_t kernel_size = Product(geo->kernel);
  const int64_t in_size = Product(geo->grid), out_size = Product(geo->image);
  const int64_t rows = group_out * kernel_size;
  absl::StatusOr<std::vector<T>> col = ScratchBuffer<T>(rows, in_size);
  if (!col.ok()) return col.status();
  const T* x = a.x->data<T>();
  const T* w = a.w->data<T>();
  T* y = a.y->data<T>();
  std::fill(y, y + a.y->num_elements(), T{});
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t g = 0; g < a.group; ++g) {
      const T* xg = x + (n * channels + g * group_in) * in_size;
      absl::Status s = Gemm(true, false, rows, in_size, group_in, T{1}, w + g * group_in * rows, xg, T{0}, col->data());
      if (!s.ok()) return s;
      T* yg = y + (n * out_channels + g * group_out) * out_size;
      Col2Im(col->data(), group_out, *geo, yg);
      if (a.b != nullptr) AddBias(a.b->data<T>() + g * group_out, group_out, out_size, yg);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Conv(KernelContext& ctx) {
  if (IsHalf(ctx)) return RunAsFloat32(ctx, &Conv);
  absl::StatusOr<ConvArgs> args = ReadConvArgs(ctx);
  if (!args.ok()) return args.status();
  absl::StatusOr<WindowGeometry> geo = CheckConv(*args);
  if (!geo.ok()) return geo.status();
  switch (args->x->dtype()) {
    case ir::DType::kFloat32: return ConvFloat32(ctx, *std::move(args), *geo);
    case ir::DType::kFloat64: return ConvTyped<double>(*args, *geo);
    default:
      return absl::UnimplementedError(absl::StrCat("Conv: dtype ", ir::DTypeName(args->x->dtype()), " not supported"));
  }
}

absl::Status ConvTranspose(KernelContext& ctx) {
  if (IsHalf(ctx)) return RunAsFloat32(ctx, &ConvTranspose);
  absl::StatusOr<ConvArgs> args = ReadConvArgs(ctx);
  if (!args.ok()) return args.status();
  switch (args->x->dtype()) {
    case ir::DType::kFloat32: return ConvTransposeTyped<float>(*args, ctx.attrs());
    case ir::DType::kFloat64: return ConvTransposeTyped<double>(*args, ctx.attrs());
    default:
      return absl::UnimplementedError(
          absl::StrCat("ConvTranspose: dtype ", ir::DTypeName(args->x->dtype()), " not supported"));
  }
}

}  // namespace kernels::cpu::nn
