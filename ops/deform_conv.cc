// DeformConv's op definition and type/shape inference (Y's shape is Conv's for X and W; offset,
// mask and B are checked against it), and the helpers of ops/deform_conv.h.
#include "ops/deform_conv.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/window_attrs.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

// Past this, offset_group * K * r cannot be a tensor's dim (and is no longer exact in a double).
constexpr double kMaxTaps = static_cast<double>(int64_t{1} << 53);

constexpr const char* kInputNames[] = {"X", "W", "offset", "B", "mask"};

// The kernel's element count (kernel_shape, else W's spatial dims); nullopt when not known.
absl::StatusOr<std::optional<int64_t>> KernelSize(const InferContext& ctx, size_t spatial) {
  std::optional<std::vector<int64_t>> from_weights;
  if (ctx.type(1).shape && ctx.type(1).rank() >= 2) {
    from_weights = ir::ShapeToInts(Shape(ctx.type(1).shape->begin() + 2, ctx.type(1).shape->end()));
  }
  absl::StatusOr<Window> window = ReadWindow(ctx.attrs(), spatial, from_weights, false);
  if (!window.ok()) return window.status();
  if (!window->kernel) return std::optional<int64_t>();
  double size = 1;
  for (int64_t k : *window->kernel) size *= static_cast<double>(k);
  if (size > kMaxTaps) return absl::InvalidArgumentError("the kernel has too many elements");
  return std::optional<int64_t>(static_cast<int64_t>(size));
}

// offset_group * K * per_tap: the channels of offset (per_tap = r) or of mask (per_tap = 1).
absl::StatusOr<Dim> TapChannels(int64_t offset_group, const std::optional<int64_t>& kernel_size, int64_t per_tap) {
  if (!kernel_size) return Dim();
  const double channels = static_cast<double>(offset_group) * static_cast<double>(*kernel_size) * per_tap;
  if (channels > kMaxTaps) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset_group ", offset_group, " x ", *kernel_size, " kernel taps is too large"));
  }
  return Dim(static_cast<int64_t>(channels));
}

absl::StatusOr<Types> InferDeformConv(const InferContext& ctx) {
  absl::StatusOr<DeformConvGroups> groups = ParseDeformConvGroups(ctx.attrs());
  if (!groups.ok()) return groups.status();
  // Y as Conv has it for X and W: their dtypes, ranks, channels, group and window checked there.
  InferContext conv{ctx.node, {ctx.input_types[0], ctx.input_types[1]}, {nullptr, nullptr}};
  absl::StatusOr<Types> y = FindOpDef("Conv")->infer(conv);
  if (!y.ok()) return y.status();
  if (!ctx.has_input(2)) return absl::InvalidArgumentError("offset is missing");
  for (size_t i : {2, 3, 4}) {
    if (ctx.has_input(i) && ctx.type(i).dtype != ctx.type(0).dtype) {
      return absl::InvalidArgumentError(absl::StrCat(kInputNames[i], " has dtype ", ir::DTypeName(ctx.type(i).dtype),
                                                     ", X has ", ir::DTypeName(ctx.type(0).dtype)));
    }
  }
  const TensorType& x = ctx.type(0);
  const std::optional<Shape>& out = (*y)[0].shape;
  if (!x.shape || !out) return y;
  const int64_t spatial = x.rank() - 2;
  if (spatial > kMaxDeformConvSpatialDims) {
    return absl::UnimplementedError(
        absl::StrCat("X has ", spatial, " spatial dims, more than ", kMaxDeformConvSpatialDims));
  }
  const Dim& channels = (*x.shape)[1];
  if (channels.known() && channels.value % groups->offset_group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("X's ", channels.value, " channels are not divisible by offset_group ", groups->offset_group));
  }
  absl::StatusOr<std::optional<int64_t>> kernel_size = KernelSize(ctx, static_cast<size_t>(spatial));
  if (!kernel_size.ok()) return kernel_size.status();
  absl::StatusOr<Dim> offset_channels = TapChannels(groups->offset_group, *kernel_size, spatial);
  if (!offset_channels.ok()) return offset_channels.status();
  absl::StatusOr<Dim> mask_channels = TapChannels(groups->offset_group, *kernel_size, 1);
  if (!mask_channels.ok()) return mask_channels.status();
  Shape offset_shape = *out, mask_shape = *out;
  offset_shape[1] = *offset_channels;
  mask_shape[1] = *mask_channels;
  if (absl::Status s = ExpectDims(ctx.type(2), offset_shape, "offset"); !s.ok()) return s;
  if (ctx.has_input(4)) {
    if (absl::Status s = ExpectDims(ctx.type(4), mask_shape, "mask"); !s.ok()) return s;
  }
  if (ctx.has_input(3)) {
    if (absl::Status s = ExpectDims(ctx.type(3), {(*out)[1]}, "B"); !s.ok()) return s;
  }
  std::optional<std::vector<int64_t>> dims = ir::ShapeToInts(*out);
  if (dims && channels.known() && *kernel_size) {
    if (absl::Status s = CheckDeformConvWork((*dims)[0], channels.value, (*dims)[1], groups->group, **kernel_size,
                                             absl::MakeConstSpan(*dims).subspan(2));
        !s.ok()) {
      return s;
    }
  }
  return y;
}

}  // namespace

absl::StatusOr<DeformConvGroups> ParseDeformConvGroups(const ir::Attributes& attrs) {
  for (const char* name : {"auto_pad", "ceil_mode"}) {
    if (attrs.Has(name)) {
      return absl::InvalidArgumentError(absl::StrCat("DeformConv has no ", name, " attribute (it is Conv's)"));
    }
  }
  DeformConvGroups g;
  g.group = attrs.GetInt("group", 1);
  g.offset_group = attrs.GetInt("offset_group", 1);
  for (auto [name, value] : {std::pair<const char*, int64_t>{"group", g.group}, {"offset_group", g.offset_group}}) {
    if (value < 1 || value > kMaxWindowValue) {
      return absl::InvalidArgumentError(absl::StrCat(name, " ", value, " outside [1, ", kMaxWindowValue, "]"));
    }
  }
  return g;
}

absl::Status CheckDeformConvWork(int64_t batch, int64_t channels, int64_t out_channels, int64_t group,
                                 int64_t kernel_size, absl::Span<const int64_t> out_spatial) {
  double positions = static_cast<double>(batch) * static_cast<double>(kernel_size);
  for (int64_t d : out_spatial) positions *= static_cast<double>(d);
  const double corners = std::ldexp(1.0, static_cast<int>(std::min<size_t>(out_spatial.size(), 64)));
  const double samples = positions * static_cast<double>(channels) * corners;
  const double macs = positions * static_cast<double>(out_channels) * static_cast<double>(channels / group);
  if (samples + macs > static_cast<double>(kMaxDeformConvWork)) {
    return absl::ResourceExhaustedError(absl::StrCat("DeformConv needs ", samples + macs,
                                                     " pixel reads and multiply-adds, more than the limit of ",
                                                     kMaxDeformConvWork));
  }
  return absl::OkStatus();
}

std::vector<OpDef> DeformConvOpDefs() {
  return {
      {"DeformConv", 3, 5, InferDeformConv},
  };
}

}  // namespace ops
