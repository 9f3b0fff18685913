// ImageDecoder's kernel: kernels/image decodes to RGB, then the pixel format's channel order or
// Pillow's luma conversion.
#include <algorithm>

#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_select_util.h"
#include "kernels/image/decode.h"

namespace kernels::cpu {
namespace {

absl::Status ImageDecoderKernel(KernelContext& ctx) {
  const ir::Tensor& encoded = *ctx.input(0);
  absl::StatusOr<image::RgbImage> decoded =
      image::DecodeImage({encoded.data<uint8_t>(), static_cast<size_t>(encoded.num_elements())});
  if (!decoded.ok()) return decoded.status();
  const std::string format = ctx.attrs().GetString("pixel_format", "RGB");
  const int64_t channels = format == "Grayscale" ? 1 : 3;
  absl::StatusOr<ir::Tensor> out =
      ir::Tensor::CreateUninitialized(ir::DType::kUint8, {decoded->height, decoded->width, channels});
  if (!out.ok()) return out.status();
  uint8_t* pixels = out->data<uint8_t>();
  if (format == "Grayscale") {
    image::RgbToGray(*decoded, pixels);
  } else {
    std::copy(decoded->rgb.begin(), decoded->rgb.end(), pixels);
    if (format == "BGR") {
      for (size_t i = 0; i < decoded->rgb.size(); i += 3) std::swap(pixels[i], pixels[i + 2]);
    }
  }
  return SetCreatedOutput(ctx, 0, *std::move(out));
}

}  // namespace

std::vector<KernelDef> ImageDecoderKernels() { return {{"ImageDecoder", ImageDecoderKernel}}; }

}  // namespace kernels::cpu
