// The CPU kernels of StringConcat, StringSplit and RegexFullMatch (ops/string_text.h has the
// rules). StringConcat checks the characters it would make against ir::kMaxTensorBytes before
// making them; StringSplit makes Y when its length depended on X's values.
#include "ops/string_text.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/elementwise_broadcast.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

absl::Status ExpectStrings(const ir::Tensor* t, const char* op, const char* name) {
  if (t != nullptr && t->strings() != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": ", name, " must be a string tensor, not ", t == nullptr ? "missing" : t->Describe()));
}

// Output i with `dtype` and `dims`: the one inference allocated (checked), or a new one when its
// shape depended on input values. nullptr for an absent output.
absl::StatusOr<ir::Tensor*> OutputWithDims(KernelContext& ctx, size_t i, ir::DType dtype,
                                           const std::vector<int64_t>& dims) {
  ir::Tensor* out = ctx.output(i);
  if (out == nullptr) return nullptr;
  if (!out->valid()) {
    absl::StatusOr<ir::Tensor> created = ir::Tensor::Create(dtype, dims);
    if (!created.ok()) return created.status();
    *out = *std::move(created);
  }
  if (out->dtype() != dtype || out->shape() != dims) {
    return absl::InternalError(absl::StrCat("output ", i, " is ", out->Describe(), ", expected ", ir::DTypeName(dtype),
                                            ir::ShapeToString(dims)));
  }
  return out;
}

absl::Status StringConcat(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* y = ctx.input(1);
  if (absl::Status s = ExpectStrings(x, "StringConcat", "X"); !s.ok()) return s;
  if (absl::Status s = ExpectStrings(y, "StringConcat", "Y"); !s.ok()) return s;
  ir::Tensor* z = ctx.output(0);
  if (z == nullptr || z->strings() == nullptr) return absl::InternalError("StringConcat: output Z is not allocated");
  absl::StatusOr<elementwise::BroadcastPlan> plan =
      elementwise::MakeBroadcastPlan(z->shape(), {x->shape(), y->shape()});
  if (!plan.ok()) return plan.status();
  int64_t bytes = z->num_elements() * static_cast<int64_t>(ir::kStringElementBytes);
  elementwise::ForEachRun<2>(*plan, [&](int64_t, const std::array<int64_t, 2>& off, int64_t n,
                                        const std::array<int64_t, 2>& step) {
    for (int64_t i = 0; i < n && bytes <= ir::kMaxTensorBytes; ++i) {
      bytes +=
          static_cast<int64_t>(x->strings()[off[0] + i * step[0]].size() + y->strings()[off[1] + i * step[1]].size());
    }
  });
  if (bytes > ir::kMaxTensorBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("StringConcat: the result would take more than the limit of ", ir::kMaxTensorBytes, " bytes"));
  }
  elementwise::BroadcastBinary(*plan, x->strings(), y->strings(), z->mutable_strings(),
                               [](const std::string& a, const std::string& b) { return a + b; });
  return absl::OkStatus();
}

absl::Status StringSplit(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (absl::Status s = ExpectStrings(x, "StringSplit", "X"); !s.ok()) return s;
  absl::StatusOr<ops::StringSplitAttrs> attrs = ops::ParseStringSplitAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const int64_t n = x->num_elements();
  std::vector<int64_t> counts(n, 0);
  int64_t most = 0;
  for (int64_t i = 0; i < n; ++i) {
    ops::ForEachSplitPiece(x->strings()[i], *attrs, [&](std::string_view) { ++counts[i]; });
    most = std::max(most, counts[i]);
  }
  std::vector<int64_t> y_dims = x->shape();
  y_dims.push_back(most);
  absl::StatusOr<ir::Tensor*> y = OutputWithDims(ctx, 0, ir::DType::kString, y_dims);
  if (!y.ok()) return y.status();
  absl::StatusOr<ir::Tensor*> z = OutputWithDims(ctx, 1, ir::DType::kInt64, x->shape());
  if (!z.ok()) return z.status();
  if (*y != nullptr) {
    std::string* out = (*y)->mutable_strings();
    for (int64_t i = 0; i < n; ++i) {
      std::string* row = out + i * most;
      ops::ForEachSplitPiece(x->strings()[i], *attrs, [&](std::string_view piece) { (row++)->assign(piece); });
      for (std::string* end = out + (i + 1) * most; row < end; ++row) row->clear();
    }
  }
  if (*z != nullptr) std::copy(counts.begin(), counts.end(), (*z)->data<int64_t>());
  return absl::OkStatus();
}

absl::Status RegexFullMatch(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (absl::Status s = ExpectStrings(x, "RegexFullMatch", "X"); !s.ok()) return s;
  absl::StatusOr<ops::FullMatchRegex> regex = ops::ParseRegexFullMatchPattern(ctx.node);
  if (!regex.ok()) return regex.status();
  absl::StatusOr<ir::Tensor*> y = OutputWithDims(ctx, 0, ir::DType::kBool, x->shape());
  if (!y.ok()) return y.status();
  if (*y == nullptr) return absl::OkStatus();
  uint8_t* out = (*y)->data<uint8_t>();
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    absl::StatusOr<bool> match = regex->Matches(x->strings()[i]);
    if (!match.ok())
      return absl::Status(match.status().code(), absl::StrCat("element ", i, ": ", match.status().message()));
    out[i] = *match ? 1 : 0;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> StringTextKernels() {
  return {{"StringConcat", StringConcat}, {"StringSplit", StringSplit}, {"RegexFullMatch", RegexFullMatch}};
}

}  // namespace kernels::cpu
