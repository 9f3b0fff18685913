// ImageDecoder (opset 20): a 1-D uint8 encoded image -> uint8 [H, W, C], C = 3 for RGB / BGR and 1
// for Grayscale; H and W are known only once the image is decoded (kernels/image/decode.h).
#include "absl/strings/str_cat.h"
#include "ops/op_def.h"

namespace ops {
namespace {

absl::StatusOr<std::vector<ir::TensorType>> InferImageDecoder(const InferContext& ctx) {
  const ir::TensorType& in = ctx.type(0);
  if (in.dtype != ir::DType::kUint8 || (in.shape && in.shape->size() != 1)) {
    return absl::InvalidArgumentError("encoded_stream must be a 1-D uint8 tensor");
  }
  const std::string format = ctx.attrs().GetString("pixel_format", "RGB");
  if (format != "RGB" && format != "BGR" && format != "Grayscale") {
    return absl::InvalidArgumentError(absl::StrCat("pixel_format '", format, "' is not one of RGB, BGR, Grayscale"));
  }
  const int64_t channels = format == "Grayscale" ? 1 : 3;
  return std::vector<ir::TensorType>{{ir::DType::kUint8, ir::Shape{ir::Dim(), ir::Dim(), channels}}};
}

}  // namespace

std::vector<OpDef> ImageDecoderOpDefs() { return {{"ImageDecoder", 1, 1, InferImageDecoder}}; }

}  // namespace ops
