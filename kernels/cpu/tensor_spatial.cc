// CPU kernels of the spatial rearrangement ops and their kernel table: MaxUnpool (values scattered
// to MaxPool's flat indices), Col2Im (blocks summed back into the image) and CenterCropPad (centred
// crop or zero pad per axis). Geometry is read through ops/tensor_spatial_attrs.h.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "ops/tensor_spatial_attrs.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// Input i as int64 values; an error unless present with an integer dtype.
absl::StatusOr<std::vector<int64_t>> IntValues(const KernelContext& ctx, size_t i) {
  if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  const ir::Tensor& t = *ctx.input(i);
  if (t.dtype() != ir::DType::kInt64 && t.dtype() != ir::DType::kInt32) {
    return Invalid(absl::StrCat("input ", i, " must be int32 or int64"));
  }
  return t.ToInt64Vector();
}

// ---- MaxUnpool ----

// The output size MaxPool's indices refer to: N, C and the unpooled spatial dims.
absl::StatusOr<std::vector<int64_t>> MaxUnpoolDefaultShape(const ir::Tensor& x, const ops::Window& window) {
  std::vector<int64_t> shape = {x.shape()[0], x.shape()[1]};
  for (int64_t i = 2; i < x.rank(); ++i) {
    absl::StatusOr<int64_t> d = ops::MaxUnpoolDim(window, i - 2, x.shape()[i]);
    if (!d.ok()) return d.status();
    shape.push_back(*d);
  }
  return shape;
}

// Scatters x to the flat indices of the default shape; an explicit output_shape (no smaller in any
// dim) pads that result with zeros at the end of each dim.
absl::Status MaxUnpoolKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &x = *ctx.input(0), &indices = *ctx.input(1);
  if (x.rank() < 3) return Invalid(absl::StrCat("input must have rank >= 3, has ", x.rank()));
  if (indices.dtype() != ir::DType::kInt64 || indices.shape() != x.shape()) {
    return Invalid("indices must be int64 with the input's shape");
  }
  absl::StatusOr<ops::Window> window = ops::ParseMaxUnpoolWindow(ctx.attrs(), x.rank() - 2);
  if (!window.ok()) return window.status();
  absl::StatusOr<std::vector<int64_t>> base = MaxUnpoolDefaultShape(x, *window);
  if (!base.ok()) return base.status();
  std::vector<int64_t> shape = *base;
  if (ctx.input(2) != nullptr && ctx.input(2)->valid()) {
    absl::StatusOr<std::vector<int64_t>> given = IntValues(ctx, 2);
    if (!given.ok()) return given.status();
    bool fits = given->size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) fits = (*given)[d] >= shape[d];
    if (!fits) {
      return Invalid(absl::StrCat("output_shape ", ir::ShapeToString(*given), " is smaller than the unpooled shape ",
                                  ir::ShapeToString(shape)));
    }
    shape = *std::move(given);
  }
  if (absl::Status s = CheckOutput(ctx, 0, x.dtype(), shape); !s.ok()) return s;
  int64_t base_size = 1;
  for (int64_t d : *base) base_size *= d;
  const size_t es = ir::DTypeSize(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t at = indices.data<int64_t>()[i];
    if (at < 0 || at >= base_size) {
      return Invalid(absl::StrCat("index ", at, " out of range for an unpooled size of ", base_size));
    }
    int64_t target = 0, scale = 1;  // the same coordinate in the (padded) output
    for (int64_t d = x.rank() - 1; d >= 0; --d) {
      target += (at % (*base)[d]) * scale;
      at /= (*base)[d];
      scale *= shape[d];
    }
    std::memcpy(dst + target * es, src + i * es, es);
  }
  return absl::OkStatus();
}

// ---- Col2Im ----

// Sums every block element of input [N, C * block_size, positions] into image [N, C, image...].
template <typename T>
void Col2ImSum(const T* in, T* out, int64_t planes, const ops::Col2ImGeometry& g) {
  const size_t spatial = g.image.size();
  int64_t image_size = 1;
  for (int64_t d : g.image) image_size *= d;
  std::vector<double> acc(image_size);
  std::vector<int64_t> kb(spatial), gp(spatial);
  for (int64_t plane = 0; plane < planes; ++plane) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t b = 0; b < g.block_size; ++b) {
      for (int64_t r = b, d = spatial - 1; d >= 0; --d) kb[d] = r % g.block[d], r /= g.block[d];
      for (int64_t p = 0; p < g.positions; ++p) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t r = p, d = spatial - 1; d >= 0; --d) gp[d] = r % g.grid[d], r /= g.grid[d];
        for (size_t d = 0; inside && d < spatial; ++d) {
          const int64_t x = gp[d] * g.strides[d] - g.pads[d] + kb[d] * g.dilations[d];
          inside = x >= 0 && x < g.image[d];
          offset = offset * g.image[d] + x;
        }
        if (inside) acc[offset] += static_cast<double>(in[(plane * g.block_size + b) * g.positions + p]);
      }
    }
    for (int64_t i = 0; i < image_size; ++i) out[plane * image_size + i] = static_cast<T>(acc[i]);
  }
}

absl::Status Col2ImKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> image = IntValues(ctx, 1), block = IntValues(ctx, 2);
  if (!image.ok()) return image.status();
  if (!block.ok()) return block.status();
  absl::StatusOr<ops::Col2ImGeometry> g = ops::ParseCol2ImGeometry(ctx.attrs(), *image, *block);
  if (!g.ok()) return g.status();
  if (in.rank() != 3 || in.shape()[1] % g->block_size != 0 || in.shape()[2] != g->positions) {
    return Invalid(absl::StrCat("input ", ir::ShapeToString(in.shape()), " does not hold blocks of ", g->block_size,
                                " at ", g->positions, " positions"));
  }
  const int64_t channels = in.shape()[1] / g->block_size;
  std::vector<int64_t> shape = {in.shape()[0], channels};
  shape.insert(shape.end(), image->begin(), image->end());
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), shape); !s.ok()) return s;
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  return DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Col2ImSum(in.data<T>(), ctx.output(0)->data<T>(), in.shape()[0] * channels, *g);
    return absl::OkStatus();
  });
}

// ---- CenterCropPad ----

absl::Status CenterCropPadKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> sizes = IntValues(ctx, 1);
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::vector<int64_t>> axes =
      ops::ParseCenterCropPadAxes(ctx.attrs(), in.rank(), static_cast<int64_t>(sizes->size()));
  if (!axes.ok()) return axes.status();
  const int64_t rank = in.rank();
  std::vector<int64_t> shape = in.shape(), shift(rank, 0);  // input coord = output coord + shift
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t a = (*axes)[i], dim = in.shape()[a], size = (*sizes)[i];
    if (size < 0) return Invalid(absl::StrCat("negative size ", size));
    shape[a] = size;
    shift[a] = size <= dim ? (dim - size) / 2 : -((size - dim) / 2);
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), shape); !s.ok()) return s;
  ir::Tensor& out = *ctx.output(0);
  const size_t es = ir::DTypeSize(in.dtype());
  if (out.num_elements() == 0 || in.num_elements() == 0) return absl::OkStatus();
  if (rank == 0) {
    std::memcpy(out.raw_data(), in.raw_data(), es);
    return absl::OkStatus();
  }
  // Copy the overlap of each output row (the last dim) with its input row.
  const int64_t last = rank - 1, cols = shape[last];
  const int64_t begin = std::max<int64_t>(0, -shift[last]);
  const int64_t end = std::min<int64_t>(cols, in.shape()[last] - shift[last]);
  const std::vector<int64_t> in_strides = ContiguousStrides(in.shape());
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  std::vector<int64_t> coord(last, 0);
  for (int64_t row = 0; row < out.num_elements() / cols; ++row) {
    int64_t offset = 0;
    bool inside = end > begin;
    for (int64_t d = 0; inside && d < last; ++d) {
      const int64_t x = coord[d] + shift[d];
      inside = x >= 0 && x < in.shape()[d];
      offset += x * in_strides[d];
    }
    if (inside)
      std::memcpy(dst + (row * cols + begin) * es, src + (offset + begin + shift[last]) * es, (end - begin) * es);
    for (int64_t d = last - 1; d >= 0 && ++coord[d] == shape[d]; --d) coord[d] = 0;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> TensorSpatialKernels() {
  return {
      {"MaxUnpool", MaxUnpoolKernel},
      {"Col2Im", Col2ImKernel},
      {"CenterCropPad", CenterCropPadKernel},
  };
}

}  // namespace kernels::cpu
