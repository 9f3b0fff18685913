// DecodeImage (see decode.h): the format from the magic bytes; BMP and PNM decoded here, the rest
// by codecs.h's library wrappers.
#include "kernels/image/decode.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/image/codecs.h"

namespace kernels::image {
namespace {

bool StartsWith(absl::Span<const uint8_t> bytes, const char* magic, size_t size, size_t at = 0) {
  return bytes.size() >= at + size && std::memcmp(bytes.data() + at, magic, size) == 0;
}

absl::Status Truncated(const char* format) {
  return absl::InvalidArgumentError(absl::StrCat("the ", format, " image is truncated or malformed"));
}

uint32_t U16(absl::Span<const uint8_t> b, size_t at) { return b[at] | (b[at + 1] << 8); }
uint32_t U32(absl::Span<const uint8_t> b, size_t at) {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (static_cast<uint32_t>(b[at + 3]) << 24);
}

// One channel of a BMP's 16- or 32-bit pixel under `mask`, scaled to 8 bits.
uint8_t MaskedChannel(uint32_t pixel, uint32_t mask) {
  if (mask == 0) return 0;
  int shift = 0;
  while (((mask >> shift) & 1) == 0) ++shift;
  const uint32_t max = mask >> shift;
  return static_cast<uint8_t>((((pixel & mask) >> shift) * 255 + max / 2) / max);
}

struct BmpHeader {
  int64_t width = 0, height = 0;  // height < 0: rows stored top-down
  uint32_t bpp = 0, compression = 0, pixels_at = 0, palette_at = 0, palette_entry = 4, colors = 0;
  uint32_t masks[3] = {0, 0, 0};
};

absl::StatusOr<BmpHeader> ReadBmpHeader(absl::Span<const uint8_t> b) {
  if (b.size() < 26) return Truncated("BMP");
  BmpHeader h;
  h.pixels_at = U32(b, 10);
  const uint32_t dib = U32(b, 14);
  if (dib == 12) {  // BITMAPCOREHEADER
    h.width = U16(b, 18), h.height = static_cast<int16_t>(U16(b, 20)), h.bpp = U16(b, 24);
    h.palette_entry = 3;
  } else if (dib >= 40 && b.size() >= 14 + static_cast<size_t>(dib)) {
    h.width = static_cast<int32_t>(U32(b, 18)), h.height = static_cast<int32_t>(U32(b, 22));
    h.bpp = U16(b, 28), h.compression = U32(b, 30), h.colors = U32(b, 46);
    const size_t masks_at = dib >= 52 ? 54 : 14 + dib;
    if (h.compression == 3 && b.size() >= masks_at + 12) {
      for (int c = 0; c < 3; ++c) h.masks[c] = U32(b, masks_at + 4 * c);
    }
  } else {
    return Truncated("BMP");
  }
  h.palette_at = 14 + dib + (h.compression == 3 && dib == 40 ? 12 : 0);
  if (h.compression != 0 && !(h.compression == 3 && (h.bpp == 16 || h.bpp == 32))) {
    return absl::UnimplementedError(absl::StrCat("BMP compression ", h.compression, " (RLE) is not supported"));
  }
  if (h.compression == 0 && h.bpp == 16) h.masks[0] = 0x7C00, h.masks[1] = 0x03E0, h.masks[2] = 0x001F;
  if (h.compression == 0 && h.bpp == 32) h.masks[0] = 0xFF0000, h.masks[1] = 0xFF00, h.masks[2] = 0xFF;
  if (h.bpp != 1 && h.bpp != 4 && h.bpp != 8 && h.bpp != 16 && h.bpp != 24 && h.bpp != 32) {
    return absl::UnimplementedError(absl::StrCat("BMP with ", h.bpp, " bits per pixel is not supported"));
  }
  return h;
}

absl::StatusOr<RgbImage> DecodeBmp(absl::Span<const uint8_t> b) {
  absl::StatusOr<BmpHeader> h = ReadBmpHeader(b);
  if (!h.ok()) return h.status();
  const int64_t rows = h->height < 0 ? -h->height : h->height;
  if (absl::Status dims = CheckDims("BMP", rows, h->width); !dims.ok()) return dims;
  const int64_t stride = (h->width * h->bpp + 31) / 32 * 4;
  if (h->pixels_at > b.size() || (b.size() - h->pixels_at) / stride < static_cast<uint64_t>(rows)) {
    return Truncated("BMP");  // before the pixels are allocated
  }
  absl::StatusOr<RgbImage> image = AllocateRgb("BMP", rows, h->width);
  if (!image.ok()) return image.status();
  const uint32_t palette_size = h->bpp <= 8 ? (h->colors != 0 ? h->colors : 1u << h->bpp) : 0;
  if (palette_size > 256 || h->palette_at + static_cast<size_t>(palette_size) * h->palette_entry > b.size()) {
    return Truncated("BMP");
  }
  for (int64_t y = 0; y < rows; ++y) {
    const uint8_t* row = b.data() + h->pixels_at + (h->height < 0 ? y : rows - 1 - y) * stride;
    uint8_t* out = image->rgb.data() + y * h->width * 3;
    for (int64_t x = 0; x < h->width; ++x, out += 3) {
      if (h->bpp == 24 || (h->bpp == 32 && h->compression == 0)) {
        const uint8_t* p = row + x * (h->bpp / 8);
        out[0] = p[2], out[1] = p[1], out[2] = p[0];
      } else if (h->bpp >= 16) {
        const uint32_t pixel = h->bpp == 16 ? U16(b, row - b.data() + 2 * x) : U32(b, row - b.data() + 4 * x);
        for (int c = 0; c < 3; ++c) out[c] = MaskedChannel(pixel, h->masks[c]);
      } else {
        const int64_t bit = x * h->bpp;
        const uint32_t index = (row[bit / 8] >> (8 - h->bpp - bit % 8)) & ((1u << h->bpp) - 1);
        if (index >= palette_size) return Truncated("BMP");
        const uint8_t* entry = b.data() + h->palette_at + index * h->palette_entry;
        out[0] = entry[2], out[1] = entry[1], out[2] = entry[0];
      }
    }
  }
  return image;
}

// Reads PNM's header tokens and samples: whitespace and '#' comments between ASCII numbers.
class PnmReader {
 public:
  explicit PnmReader(absl::Span<const uint8_t> b) : b_(b), at_(2) {}
  absl::StatusOr<int64_t> Number() {
    SkipSpaceAndComments();
    if (at_ >= b_.size() || !std::isdigit(b_[at_])) return Truncated("PNM");
    int64_t value = 0;
    while (at_ < b_.size() && std::isdigit(b_[at_]) && value < (int64_t{1} << 32))
      value = value * 10 + (b_[at_++] - '0');
    return value;
  }
  // One bit of a P1 image: the next '0' or '1'.
  absl::StatusOr<int> Bit() {
    SkipSpaceAndComments();
    if (at_ >= b_.size() || (b_[at_] != '0' && b_[at_] != '1')) return Truncated("PNM");
    return b_[at_++] - '0';
  }
  // The binary raster after the header's single whitespace byte: `size` bytes.
  absl::StatusOr<const uint8_t*> Raster(int64_t size) {
    const size_t start = at_ + 1;
    if (start > b_.size() || static_cast<uint64_t>(size) > b_.size() - start) return Truncated("PNM");
    return b_.data() + start;
  }

 private:
  void SkipSpaceAndComments() {
    while (at_ < b_.size() && (std::isspace(b_[at_]) || b_[at_] == '#')) {
      if (b_[at_] == '#') {
        while (at_ < b_.size() && b_[at_] != '\n') ++at_;
      } else {
        ++at_;
      }
    }
  }

  absl::Span<const uint8_t> b_;
  size_t at_;
};

absl::StatusOr<RgbImage> DecodePnm(absl::Span<const uint8_t> b) {
  const char kind = static_cast<char>(b[1]);
  const bool bitmap = kind == '1' || kind == '4', color = kind == '3' || kind == '6', binary = kind >= '4';
  PnmReader reader(b);
  absl::StatusOr<int64_t> width = reader.Number(), height = width.ok() ? reader.Number() : width;
  absl::StatusOr<int64_t> max = bitmap || !height.ok() ? absl::StatusOr<int64_t>(1) : reader.Number();
  if (!width.ok() || !height.ok() || !max.ok()) return Truncated("PNM");
  if (*max < 1 || *max > 65535)
    return absl::InvalidArgumentError(absl::StrCat("PNM maxval ", *max, " is out of range"));
  if (absl::Status dims = CheckDims("PNM", *height, *width); !dims.ok()) return dims;
  const int channels = color ? 3 : 1, sample_bytes = *max > 255 ? 2 : 1;
  const int64_t pixels = *height * *width;
  const int64_t row_bytes = bitmap ? (*width + 7) / 8 : *width * channels * sample_bytes;
  absl::StatusOr<const uint8_t*> raster = binary ? reader.Raster(row_bytes * *height) : nullptr;
  if (!raster.ok()) return raster.status();  // before the pixels are allocated
  absl::StatusOr<RgbImage> image = AllocateRgb("PNM", *height, *width);
  if (!image.ok()) return image.status();
  auto scaled = [&](int64_t v) { return static_cast<uint8_t>((v * 255 + *max / 2) / *max); };
  for (int64_t i = 0; i < pixels; ++i) {
    uint8_t* out = image->rgb.data() + i * 3;
    if (bitmap) {
      const int64_t y = i / *width, x = i % *width;
      absl::StatusOr<int> bit = binary ? ((*raster)[y * row_bytes + x / 8] >> (7 - x % 8)) & 1 : reader.Bit();
      if (!bit.ok()) return bit.status();
      out[0] = out[1] = out[2] = *bit ? 0 : 255;  // 1 is black
      continue;
    }
    for (int c = 0; c < channels; ++c) {
      int64_t v;
      if (binary) {
        const uint8_t* s = *raster + (i * channels + c) * sample_bytes;
        v = sample_bytes == 2 ? (s[0] << 8) | s[1] : s[0];
      } else {
        absl::StatusOr<int64_t> n = reader.Number();
        if (!n.ok()) return n.status();
        v = std::min(*n, *max);
      }
      out[c] = scaled(v);
    }
    if (!color) out[1] = out[2] = out[0];
  }
  return image;
}

}  // namespace

absl::Status CheckDims(const char* format, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("the ", format, " image has dims ", height, "x", width));
  }
  if (height > kMaxPixels / width) {
    return absl::ResourceExhaustedError(absl::StrCat("the ", format, " image is ", height, "x", width,
                                                     ", more than the limit of ", kMaxPixels, " pixels"));
  }
  return absl::OkStatus();
}

absl::StatusOr<RgbImage> AllocateRgb(const char* format, int64_t height, int64_t width) {
  if (absl::Status dims = CheckDims(format, height, width); !dims.ok()) return dims;
  RgbImage image;
  image.height = height, image.width = width;
  image.rgb.resize(static_cast<size_t>(height * width * 3));
  return image;
}

absl::StatusOr<RgbImage> DecodeImage(absl::Span<const uint8_t> bytes) {
  if (StartsWith(bytes, "\xFF\xD8\xFF", 3)) return DecodeJpeg(bytes);
  if (StartsWith(bytes, "\x89PNG\r\n\x1A\n", 8)) return DecodePng(bytes);
  if (StartsWith(bytes, "BM", 2)) return DecodeBmp(bytes);
  if (StartsWith(bytes, "II*\0", 4) || StartsWith(bytes, "MM\0*", 4)) return DecodeTiff(bytes);
  if (StartsWith(bytes, "RIFF", 4) && StartsWith(bytes, "WEBP", 4, 8)) return DecodeWebp(bytes);
  if (StartsWith(bytes, "\xFF\x4F\xFF\x51", 4) || StartsWith(bytes, "\0\0\0\x0CjP  \r\n\x87\n", 12)) {
    return DecodeJpeg2000(bytes);
  }
  if (bytes.size() >= 3 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6' && std::isspace(bytes[2])) {
    return DecodePnm(bytes);
  }
  return absl::InvalidArgumentError(
      "the encoded stream is not an image format ImageDecoder reads (JPEG, PNG, BMP, TIFF, WebP, JPEG 2000, PNM)");
}

void RgbToGray(const RgbImage& image, uint8_t* gray) {
  for (int64_t i = 0; i < image.height * image.width; ++i) {
    const uint8_t* p = image.rgb.data() + 3 * i;
    gray[i] = static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
  }
}

}  // namespace kernels::image
