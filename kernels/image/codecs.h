// The decoders decode.cc dispatches to that wrap system libraries, one per format, and the checks
// they share. Each takes the whole file and returns RGB (see decode.h).
#ifndef ONNXRUN_KERNELS_IMAGE_CODECS_H_
#define ONNXRUN_KERNELS_IMAGE_CODECS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/image/decode.h"

namespace kernels::image {

// An error when the dims are not positive or exceed kMaxPixels.
absl::Status CheckDims(const char* format, int64_t height, int64_t width);
// An image of `height` x `width` with its pixels allocated (CheckDims first).
absl::StatusOr<RgbImage> AllocateRgb(const char* format, int64_t height, int64_t width);

absl::StatusOr<RgbImage> DecodeJpeg(absl::Span<const uint8_t> bytes);      // libjpeg_png.cc
absl::StatusOr<RgbImage> DecodePng(absl::Span<const uint8_t> bytes);       // libjpeg_png.cc
absl::StatusOr<RgbImage> DecodeTiff(absl::Span<const uint8_t> bytes);      // tiff_webp_jp2.cc
absl::StatusOr<RgbImage> DecodeWebp(absl::Span<const uint8_t> bytes);      // tiff_webp_jp2.cc
absl::StatusOr<RgbImage> DecodeJpeg2000(absl::Span<const uint8_t> bytes);  // tiff_webp_jp2.cc

}  // namespace kernels::image

#endif  // ONNXRUN_KERNELS_IMAGE_CODECS_H_
