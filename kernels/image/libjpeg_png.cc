// DecodeJpeg on libjpeg-turbo and DecodePng on libpng (see codecs.h). Both libraries report errors
// by longjmp: each decode keeps its C++ objects outside the frame that calls setjmp, so nothing
// with a destructor is skipped, and the library's error text becomes the Status.
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/image/codecs.h"
// clang-format off: jpeglib.h needs <cstdio> first
#include <jpeglib.h>
#include <png.h>
// clang-format on

namespace kernels::image {
namespace {

struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr info) {
  auto* error = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, error->message);
  std::longjmp(error->jump, 1);
}

void JpegIgnoreMessage(j_common_ptr) {}

// The decode proper; `image` is allocated once the header is read (or holds why its dims are
// refused). Returns false on a libjpeg error, its text in error.message.
bool RunJpeg(absl::Span<const uint8_t> bytes, JpegError& error, absl::StatusOr<RgbImage>& image) {
  jpeg_decompress_struct info;
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = JpegErrorExit;
  error.manager.output_message = JpegIgnoreMessage;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
    std::snprintf(error.message, sizeof(error.message), "CMYK JPEG images are not supported");
    jpeg_destroy_decompress(&info);
    return false;
  }
  info.out_color_space = JCS_RGB;
  image = AllocateRgb("JPEG", info.image_height, info.image_width);
  if (!image.ok()) {
    jpeg_destroy_decompress(&info);
    return true;
  }
  jpeg_start_decompress(&info);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = image->rgb.data() + static_cast<size_t>(info.output_scanline) * info.output_width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

struct PngSource {
  absl::Span<const uint8_t> bytes;
  size_t at = 0;
  char message[256] = "";
};

void PngRead(png_structp png, png_bytep out, png_size_t size) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (size > source->bytes.size() - source->at) png_error(png, "the PNG image is truncated");
  std::memcpy(out, source->bytes.data() + source->at, size);
  source->at += size;
}

void PngError(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  std::snprintf(source->message, sizeof(source->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}

// Transformations to 8-bit RGB without alpha, as Pillow reads it (alpha and tRNS dropped, not
// composited; 16-bit samples keep their high byte).
void ExpandToRgb8(png_structp png, png_infop info) {
  const int color = png_get_color_type(png, info);
  if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_strip_alpha(png);  // also the alpha a palette's or gray image's tRNS would expand to
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

bool RunPng(PngSource& source, absl::StatusOr<RgbImage>& image, std::vector<png_bytep>& rows) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(source.message, sizeof(source.message), "out of memory");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &source, PngRead);
  png_set_error_fn(png, &source, PngError, PngWarning);
  png_read_info(png, info);
  image = AllocateRgb("PNG", png_get_image_height(png, info), png_get_image_width(png, info));
  if (image.ok()) {
    ExpandToRgb8(png, info);
    if (png_get_channels(png, info) != 3 || png_get_rowbytes(png, info) != static_cast<size_t>(image->width) * 3) {
      image = absl::UnimplementedError("the PNG image does not read as 8-bit RGB");
      png_destroy_read_struct(&png, &info, nullptr);
      return true;
    }
    rows.resize(static_cast<size_t>(image->height));
    for (int64_t y = 0; y < image->height; ++y) rows[y] = image->rgb.data() + y * image->width * 3;
    png_read_image(png, rows.data());
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

absl::StatusOr<RgbImage> DecodeJpeg(absl::Span<const uint8_t> bytes) {
  JpegError error{};
  absl::StatusOr<RgbImage> image = absl::UnknownError("not decoded");
  if (!RunJpeg(bytes, error, image)) {
    return absl::InvalidArgumentError(absl::StrCat("the JPEG image cannot be decoded: ", error.message));
  }
  return image;
}

absl::StatusOr<RgbImage> DecodePng(absl::Span<const uint8_t> bytes) {
  PngSource source{bytes};
  absl::StatusOr<RgbImage> image = absl::UnknownError("not decoded");
  std::vector<png_bytep> rows;
  if (!RunPng(source, image, rows)) {
    return absl::InvalidArgumentError(absl::StrCat("the PNG image cannot be decoded: ", source.message));
  }
  return image;
}

}  // namespace kernels::image
