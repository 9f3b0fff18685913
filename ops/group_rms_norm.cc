// GroupNormalization and RMSNormalization: attribute parsing and type/shape inference (see
// group_rms_norm.h).
#include "ops/group_rms_norm.h"

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
using Types = std::vector<ir::TensorType>;

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  return ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

// The element count input i must have, or -1 when unknown.
int64_t KnownCount(const InferContext& ctx, size_t i) {
  const ir::TensorType& t = ctx.type(i);
  if (!t.shape) return -1;
  int64_t n = 1;
  for (const ir::Dim& d : *t.shape) {
    if (!d.known()) return -1;
    n *= d.value;
  }
  return n;
}

absl::StatusOr<Types> InferGroupNorm(const InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = ExpectFloat(ctx, i); !s.ok()) return s;
  }
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && x.rank() < 2) return absl::InvalidArgumentError("X must be [N, C, ...]");
  const int64_t channels = x.shape && (*x.shape)[1].known() ? (*x.shape)[1].value : -1;
  absl::StatusOr<GroupNormAttrs> attrs = ParseGroupNormAttrs(ctx.node, channels);
  if (!attrs.ok()) return attrs.status();
  const int64_t want = attrs->per_channel_affine ? channels : attrs->num_groups;
  for (size_t i : {1, 2}) {
    const int64_t n = KnownCount(ctx, i);
    if (want > 0 && n >= 0 && n != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(i == 1 ? "scale" : "bias", " has ", n, " values, expected ", want,
                       attrs->per_channel_affine ? " (one per channel)" : " (one per group)"));
    }
  }
  return SameAsInput0(ctx);
}

absl::StatusOr<Types> InferRmsNorm(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectFloat(ctx, 1); !s.ok()) return s;
  const ir::TensorType& x = ctx.type(0);
  if (x.shape) {
    absl::StatusOr<RmsNormAttrs> attrs = ParseRmsNormAttrs(ctx.node, x.rank());
    if (!attrs.ok()) return attrs.status();
  }
  return Types{ir::TensorType{ctx.type(1).dtype, x.shape}};
}

}  // namespace

absl::StatusOr<GroupNormAttrs> ParseGroupNormAttrs(const ir::Node& node, int64_t channels) {
  GroupNormAttrs attrs;
  if (!node.attrs.Has("num_groups")) return absl::InvalidArgumentError("num_groups is required");
  attrs.num_groups = node.attrs.GetInt("num_groups", 1);
  attrs.epsilon = node.attrs.GetFloat("epsilon", 1e-5f);
  attrs.per_channel_affine = node.opset >= 21;
  if (attrs.num_groups < 1) return absl::InvalidArgumentError(absl::StrCat("num_groups ", attrs.num_groups, " < 1"));
  if (channels > 0 && channels % attrs.num_groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_groups ", attrs.num_groups, " does not divide the ", channels, " channels"));
  }
  return attrs;
}

absl::StatusOr<RmsNormAttrs> ParseRmsNormAttrs(const ir::Node& node, int64_t rank) {
  RmsNormAttrs attrs;
  absl::StatusOr<int64_t> axis = NormalizeAxis(node.attrs.GetInt("axis", -1), rank);
  if (!axis.ok()) return axis.status();
  attrs.axis = *axis;
  attrs.epsilon = node.attrs.GetFloat("epsilon", 1e-5f);
  return attrs;
}

std::vector<OpDef> GroupRmsNormOpDefs() {
  return {{"GroupNormalization", 3, 3, InferGroupNorm}, {"RMSNormalization", 2, 2, InferRmsNorm}};
}

}  // namespace ops
