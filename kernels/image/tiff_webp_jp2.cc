// DecodeTiff on libtiff, DecodeWebp on libwebp, DecodeJpeg2000 on OpenJPEG (see codecs.h): each
// reads the file from memory, checks the dims before decoding pixels and turns the library's error
// text into the Status.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/image/codecs.h"
// clang-format off
#include <openjpeg.h>
#include <tiffio.h>
#include <webp/decode.h>
// clang-format on

namespace kernels::image {
namespace {

// A file in memory read through a library's callbacks, and the last error the library reported.
struct MemoryFile {
  absl::Span<const uint8_t> bytes;
  uint64_t at = 0;
  std::string error;

  size_t Read(void* out, size_t size) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size, bytes.size() - at));
    std::memcpy(out, bytes.data() + at, n);
    at += n;
    return n;
  }
  bool Seek(int64_t offset) {
    if (offset < 0 || static_cast<uint64_t>(offset) > bytes.size()) return false;
    at = static_cast<uint64_t>(offset);
    return true;
  }
  void SetError(const char* format, va_list args) {
    char text[512];
    std::vsnprintf(text, sizeof(text), format, args);
    error = text;
  }
};

// ---- TIFF ----

MemoryFile& FileOf(thandle_t handle) { return *static_cast<MemoryFile*>(handle); }
tmsize_t TiffRead(thandle_t h, void* out, tmsize_t size) {
  return size < 0 ? -1 : static_cast<tmsize_t>(FileOf(h).Read(out, static_cast<size_t>(size)));
}
tmsize_t TiffWrite(thandle_t, void*, tmsize_t) { return -1; }
toff_t TiffSeek(thandle_t h, toff_t offset, int whence) {
  MemoryFile& file = FileOf(h);
  const int64_t base = whence == SEEK_CUR   ? static_cast<int64_t>(file.at)
                       : whence == SEEK_END ? static_cast<int64_t>(file.bytes.size())
                                            : 0;
  return file.Seek(base + static_cast<int64_t>(offset)) ? file.at : static_cast<toff_t>(-1);
}
int TiffClose(thandle_t) { return 0; }
toff_t TiffSize(thandle_t h) { return FileOf(h).bytes.size(); }
int TiffMap(thandle_t, void**, toff_t*) { return 0; }
void TiffUnmap(thandle_t, void*, toff_t) {}
int TiffError(TIFF*, void* user, const char*, const char* format, va_list args) {
  static_cast<MemoryFile*>(user)->SetError(format, args);
  return 1;
}
int TiffWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

absl::Status TiffFailed(const MemoryFile& file) {
  return absl::InvalidArgumentError(absl::StrCat("the TIFF image cannot be decoded: ", file.error));
}

// ---- JPEG 2000 ----

OPJ_SIZE_T Jp2Read(void* out, OPJ_SIZE_T size, void* user) {
  const size_t n = static_cast<MemoryFile*>(user)->Read(out, size);
  return n == 0 ? static_cast<OPJ_SIZE_T>(-1) : n;
}
OPJ_OFF_T Jp2Skip(OPJ_OFF_T n, void* user) {
  MemoryFile& file = *static_cast<MemoryFile*>(user);
  return file.Seek(static_cast<int64_t>(file.at) + n) ? n : -1;
}
OPJ_BOOL Jp2Seek(OPJ_OFF_T offset, void* user) { return static_cast<MemoryFile*>(user)->Seek(offset); }
void Jp2Error(const char* message, void* user) { static_cast<MemoryFile*>(user)->error = message; }
void Jp2Ignore(const char*, void*) {}

// Component `c` of `image` as 8-bit samples into every third byte of `out` from offset `channel`.
absl::Status CopyComponent(const opj_image_comp_t& c, RgbImage& out, int channel) {
  if (c.dx != 1 || c.dy != 1 || c.w != out.width || c.h != out.height || c.prec < 1 || c.prec > 31) {
    return absl::UnimplementedError("JPEG 2000 images with subsampled components are not supported");
  }
  const int64_t offset = c.sgnd ? int64_t{1} << (c.prec - 1) : 0, max = (int64_t{1} << c.prec) - 1;
  for (int64_t i = 0; i < out.width * out.height; ++i) {
    const int64_t v = std::clamp<int64_t>(c.data[i] + offset, 0, max);
    out.rgb[3 * i + channel] = static_cast<uint8_t>(c.prec > 8 ? v >> (c.prec - 8) : (v * 255 + max / 2) / max);
  }
  return absl::OkStatus();
}

absl::StatusOr<RgbImage> Jp2Pixels(opj_codec_t* codec, opj_stream_t* stream, opj_image_t*& image, MemoryFile& file) {
  if (!opj_read_header(stream, codec, &image)) {
    return absl::InvalidArgumentError(absl::StrCat("the JPEG 2000 image cannot be decoded: ", file.error));
  }
  if (image->numcomps > 4) {  // OpenJPEG would allocate every component at full size
    return absl::UnimplementedError(
        absl::StrCat("JPEG 2000 images with ", image->numcomps, " components are not supported (at most 4)"));
  }
  absl::StatusOr<RgbImage> rgb = AllocateRgb("JPEG 2000", static_cast<int64_t>(image->y1) - image->y0,
                                             static_cast<int64_t>(image->x1) - image->x0);
  if (!rgb.ok()) return rgb.status();
  if (!opj_decode(codec, stream, image) || !opj_end_decompress(codec, stream) || image->numcomps == 0) {
    return absl::InvalidArgumentError(absl::StrCat("the JPEG 2000 image cannot be decoded: ", file.error));
  }
  const bool color = image->numcomps >= 3;
  for (int ch = 0; ch < 3; ++ch) {
    if (absl::Status s = CopyComponent(image->comps[color ? ch : 0], *rgb, ch); !s.ok()) return s;
  }
  return rgb;
}

}  // namespace

absl::StatusOr<RgbImage> DecodeTiff(absl::Span<const uint8_t> bytes) {
  MemoryFile file{bytes};
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, TiffError, &file);
  TIFFOpenOptionsSetWarningHandlerExtR(options, TiffWarning, &file);
  TIFF* tiff = TIFFClientOpenExt("memory", "rm", &file, TiffRead, TiffWrite, TiffSeek, TiffClose, TiffSize, TiffMap,
                                 TiffUnmap, options);
  TIFFOpenOptionsFree(options);
  if (tiff == nullptr) return TiffFailed(file);
  uint32_t width = 0, height = 0;
  TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &height);
  absl::StatusOr<RgbImage> image = AllocateRgb("TIFF", height, width);
  std::vector<uint32_t> raster(image.ok() ? static_cast<size_t>(width) * height : 0);
  const bool read = image.ok() && TIFFReadRGBAImageOriented(tiff, width, height, raster.data(), ORIENTATION_TOPLEFT, 0);
  TIFFClose(tiff);
  if (!image.ok()) return image.status();
  if (!read) return TiffFailed(file);
  for (size_t i = 0; i < raster.size(); ++i) {
    image->rgb[3 * i] = TIFFGetR(raster[i]), image->rgb[3 * i + 1] = TIFFGetG(raster[i]);
    image->rgb[3 * i + 2] = TIFFGetB(raster[i]);
  }
  return image;
}

absl::StatusOr<RgbImage> DecodeWebp(absl::Span<const uint8_t> bytes) {
  int width = 0, height = 0;
  if (!WebPGetInfo(bytes.data(), bytes.size(), &width, &height)) {
    return absl::InvalidArgumentError("the WebP image cannot be decoded (malformed, or animated)");
  }
  absl::StatusOr<RgbImage> image = AllocateRgb("WebP", height, width);
  if (!image.ok()) return image.status();
  if (WebPDecodeRGBInto(bytes.data(), bytes.size(), image->rgb.data(), image->rgb.size(), width * 3) == nullptr) {
    return absl::InvalidArgumentError("the WebP image cannot be decoded");
  }
  return image;
}

absl::StatusOr<RgbImage> DecodeJpeg2000(absl::Span<const uint8_t> bytes) {
  MemoryFile file{bytes};
  opj_stream_t* stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
  opj_stream_set_read_function(stream, Jp2Read);
  opj_stream_set_skip_function(stream, Jp2Skip);
  opj_stream_set_seek_function(stream, Jp2Seek);
  opj_stream_set_user_data(stream, &file, nullptr);
  opj_stream_set_user_data_length(stream, bytes.size());
  const bool codestream = bytes[0] == 0xFF;
  opj_codec_t* codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  opj_set_error_handler(codec, Jp2Error, &file);
  opj_set_warning_handler(codec, Jp2Ignore, &file);
  opj_set_info_handler(codec, Jp2Ignore, &file);
  opj_dparameters_t parameters;
  opj_set_default_decoder_parameters(&parameters);
  opj_image_t* image = nullptr;
  absl::StatusOr<RgbImage> rgb = opj_setup_decoder(codec, &parameters)
                                     ? Jp2Pixels(codec, stream, image, file)
                                     : absl::InternalError("OpenJPEG's decoder setup failed");
  if (image != nullptr) opj_image_destroy(image);
  opj_destroy_codec(codec);
  opj_stream_destroy(stream);
  return rgb;
}

}  // namespace kernels::image
