// Decoding of encoded images (ONNX's ImageDecoder): the format is read from the first bytes; BMP and
// PNM are parsed here, JPEG, PNG, TIFF, WebP and JPEG 2000 through Debian's libjpeg-turbo, libpng,
// libtiff, libwebp and OpenJPEG (codecs.h). Every decoder gives 8-bit RGB, as Pillow (ONNX's
// reference) reads the same files: grayscale and palette images expanded, alpha dropped, samples
// wider than 8 bits shifted down. Malformed, truncated or oversized input is an error, never a crash.
#ifndef ONNXRUN_KERNELS_IMAGE_DECODE_H_
#define ONNXRUN_KERNELS_IMAGE_DECODE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace kernels::image {

// An image of height x width pixels, rgb holding R, G, B per pixel, row by row from the top.
struct RgbImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> rgb;
};

// The most pixels an image may have (2^26, 8192 x 8192: 192 MiB of RGB); a larger one is refused
// before any pixel is decoded.
inline constexpr int64_t kMaxPixels = int64_t{1} << 26;

absl::StatusOr<RgbImage> DecodeImage(absl::Span<const uint8_t> bytes);

// Pillow's RGB -> L conversion (ITU-R 601-2 luma in 16-bit fixed point): one byte per pixel into
// `gray` (height x width bytes).
void RgbToGray(const RgbImage& image, uint8_t* gray);

}  // namespace kernels::image

#endif  // ONNXRUN_KERNELS_IMAGE_DECODE_H_
