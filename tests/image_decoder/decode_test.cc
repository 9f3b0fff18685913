// kernels/image on the files of tests/image_decoder/cases (make_cases.py: every format and mode
// Pillow writes): each decodes to Pillow's pixels (the case's stored output, via onnxrun test in
// image_decoder_cases_test); here every file cut short and with bytes overwritten decodes or fails
// with a Status, never a crash (the ASan stage runs this), and oversized dims are refused before
// any pixel is decoded.
#include "kernels/image/decode.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"

namespace kernels::image {
namespace {

using ::testing::HasSubstr;

// The encoded file of every case (its input_0.pb).
std::vector<std::pair<std::string, std::vector<uint8_t>>> CaseFiles() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  for (const auto& entry : std::filesystem::directory_iterator("tests/image_decoder/cases")) {
    absl::StatusOr<ir::Tensor> input =
        importer::ReadTensorProtoFile((entry.path() / "test_data_set_0" / "input_0.pb").string());
    if (!input.ok()) continue;
    const uint8_t* data = input->data<uint8_t>();
    files.emplace_back(entry.path().filename().string(), std::vector<uint8_t>(data, data + input->num_elements()));
  }
  return files;
}

TEST(ImageDecodeTest, EveryCaseDecodesToItsDims) {
  const auto files = CaseFiles();
  ASSERT_GE(files.size(), 37u);
  for (const auto& [name, bytes] : files) {
    absl::StatusOr<RgbImage> image = DecodeImage(bytes);
    ASSERT_TRUE(image.ok()) << name << ": " << image.status();
    EXPECT_EQ(image->height, 29) << name;
    EXPECT_EQ(image->width, 37) << name;
  }
}

// Deterministic damage: every prefix length on a grid, and single bytes overwritten through the
// header and the data.
TEST(ImageDecodeTest, TruncatedAndCorruptedFilesFailCleanly) {
  for (const auto& [name, bytes] : CaseFiles()) {
    SCOPED_TRACE(name);
    const size_t step = std::max<size_t>(1, bytes.size() / 97);
    for (size_t n = 0; n < bytes.size(); n += (n < 64 ? 1 : step)) {
      absl::StatusOr<RgbImage> cut = DecodeImage(absl::MakeConstSpan(bytes.data(), n));
      if (cut.ok()) EXPECT_EQ(cut->rgb.size(), static_cast<size_t>(cut->height * cut->width * 3));
    }
    for (size_t at = 0; at < bytes.size(); at += (at < 128 ? 3 : step)) {
      for (uint8_t value : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x7F}}) {
        std::vector<uint8_t> damaged = bytes;
        damaged[at] = value;
        absl::StatusOr<RgbImage> image = DecodeImage(damaged);
        if (image.ok()) EXPECT_EQ(image->rgb.size(), static_cast<size_t>(image->height * image->width * 3));
      }
    }
  }
}

TEST(ImageDecodeTest, UnknownFormatsAndHugeDimsAreRefused) {
  EXPECT_THAT(DecodeImage({}).status().message(), HasSubstr("not an image format ImageDecoder reads"));
  const std::string text = "hello, not an image";
  EXPECT_FALSE(DecodeImage({reinterpret_cast<const uint8_t*>(text.data()), text.size()}).ok());
  const std::string pnm = "P6\n100000 100000\n255\n";
  absl::StatusOr<RgbImage> huge = DecodeImage({reinterpret_cast<const uint8_t*>(pnm.data()), pnm.size()});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(huge.status().message(), HasSubstr("more than the limit of 67108864 pixels"));
  // A BMP header claiming 60000 x 60000 pixels of 24 bits, and no pixels.
  std::vector<uint8_t> bmp(54, 0);
  bmp[0] = 'B', bmp[1] = 'M', bmp[10] = 54, bmp[14] = 40, bmp[26] = 1, bmp[28] = 24;
  for (int at : {18, 22}) bmp[at] = 0x60, bmp[at + 1] = 0xEA;  // 60000 little-endian
  EXPECT_EQ(DecodeImage(bmp).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace kernels::image
