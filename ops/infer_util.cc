// Broadcasting and axis helpers for inference functions.
#include "ops/infer_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ops {

absl::StatusOr<ir::Shape> BroadcastShapes(const ir::Shape& a, const ir::Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  ir::Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i + a.size() >= rank, has_b = i + b.size() >= rank;
    ir::Dim da = has_a ? a[i + a.size() - rank] : ir::Dim(1);
    ir::Dim db = has_b ? b[i + b.size() - rank] : ir::Dim(1);
    if (da.known() && da.value == 1) {
      out[i] = db;
    } else if (db.known() && db.value == 1) {
      out[i] = da;
    } else if (da.known() && db.known()) {
      if (da.value != db.value) {
        return absl::InvalidArgumentError(
            absl::StrCat("shapes ", ir::ShapeToString(a), " and ", ir::ShapeToString(b), " do not broadcast"));
      }
      out[i] = da;
    } else if (da == db) {
      out[i] = da;
    } else {
      out[i] = da.known() ? da : db;  // a symbolic dim broadcast against a known one must equal it
    }
  }
  return out;
}

absl::StatusOr<std::optional<ir::Shape>> BroadcastInputs(const InferContext& ctx) {
  std::optional<ir::Shape> result = ir::Shape{};
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (!ctx.type(i).shape) return std::optional<ir::Shape>();
    absl::StatusOr<ir::Shape> s = BroadcastShapes(*result, *ctx.type(i).shape);
    if (!s.ok()) return s.status();
    result = *s;
  }
  return result;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::vector<int64_t>> ResolvePermutation(const ir::Attributes& attrs, int64_t rank) {
  std::vector<int64_t> perm = attrs.GetInts("perm");
  if (!attrs.Has("perm")) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < rank && !seen[perm[i]];
    if (ok) seen[perm[i]] = true;
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("perm [", absl::StrJoin(perm, ","), "] is not a permutation of rank ", rank));
  }
  return perm;
}

absl::StatusOr<std::vector<ir::TensorType>> SameAsInput0(const InferContext& ctx) {
  std::vector<ir::TensorType> out(ctx.num_outputs(), ctx.type(0));
  return out;
}

absl::Status ExpectDType(const InferContext& ctx, size_t i, std::initializer_list<ir::DType> allowed) {
  if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  for (ir::DType d : allowed) {
    if (ctx.type(i).dtype == d) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("input ", i, " has unsupported dtype ", ir::DTypeName(ctx.type(i).dtype)));
}

absl::Status ExpectScalarLike(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return absl::OkStatus();
  for (const ir::Dim& d : *ctx.type(i).shape) {
    if (d.known() && d.value != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be a scalar, got shape ", ir::ShapeToString(*ctx.type(i).shape)));
    }
  }
  return absl::OkStatus();
}

absl::Status ExpectDims(const ir::TensorType& t, const ir::Shape& expected, const char* name) {
  if (!t.shape) return absl::OkStatus();
  const ir::Shape& s = *t.shape;
  bool ok = s.size() == expected.size();
  for (size_t i = 0; ok && i < s.size(); ++i) {
    ok = !s[i].known() || !expected[i].known() || s[i].value == expected[i].value;
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has shape ", ir::ShapeToString(s), ", expected ", ir::ShapeToString(expected)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ParseFlagAttribute(const ir::Node& node, const char* name, bool default_value) {
  const int64_t value = node.attrs.GetInt(name, default_value ? 1 : 0);
  if (value != 0 && value != 1) {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' must be 0 or 1, not ", value));
  }
  return value == 1;
}

ir::Tensor ShapeOrSizeOf(const ir::Node& node, const std::vector<int64_t>& dims) {
  const auto rank = static_cast<int64_t>(dims.size());
  if (node.op_type == "Size") {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    return *ir::Tensor::FromInt64s({count}).Reshaped({});
  }
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(node.attrs.GetInt("start", 0));
  const int64_t end = std::max(start, clamp(node.attrs.GetInt("end", rank)));
  return ir::Tensor::FromInt64s(std::vector<int64_t>(dims.begin() + start, dims.begin() + end));
}

}  // namespace ops
