// StringNormalizer's CPU kernel and the string family's kernel table: drops the stopwords of X
// and changes the case of the rest (ops/string_normalizer.h has the rules; ASCII case mapping).
#include "ops/string_normalizer.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

std::string ChangeCase(const std::string& s, ops::CaseChange change) {
  switch (change) {
    case ops::CaseChange::kLower: return absl::AsciiStrToLower(s);
    case ops::CaseChange::kUpper: return absl::AsciiStrToUpper(s);
    case ops::CaseChange::kNone: return s;
  }
  return s;
}

// Output 0 with `dims`: the one inference allocated (checked), or a new one when its length
// depended on X's values.
absl::StatusOr<ir::Tensor*> OutputWithDims(KernelContext& ctx, const std::vector<int64_t>& dims) {
  ir::Tensor* out = ctx.output(0);
  if (out == nullptr) return absl::InvalidArgumentError("StringNormalizer: output 0 is missing");
  if (!out->valid()) {
    absl::StatusOr<ir::Tensor> created = ir::Tensor::Create(ir::DType::kString, dims);
    if (!created.ok()) return created.status();
    *out = *std::move(created);
  }
  if (out->dtype() != ir::DType::kString || out->shape() != dims) {
    return absl::InternalError(
        absl::StrCat("StringNormalizer: output is ", out->Describe(), ", expected string", ir::ShapeToString(dims)));
  }
  return out;
}

absl::Status StringNormalizer(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr || x->strings() == nullptr) return absl::InvalidArgumentError("StringNormalizer: X is not strings");
  absl::StatusOr<ops::StringNormalizerAttrs> attrs = ops::ParseStringNormalizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  std::vector<const std::string*> kept;
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    if (!ops::IsStopword(*attrs, x->strings()[i])) kept.push_back(&x->strings()[i]);
  }
  absl::StatusOr<ir::Tensor*> out =
      OutputWithDims(ctx, ops::StringNormalizerDims(x->shape(), static_cast<int64_t>(kept.size())));
  if (!out.ok()) return out.status();
  std::string* y = (*out)->mutable_strings();
  for (size_t j = 0; j < kept.size(); ++j) y[j] = ChangeCase(*kept[j], attrs->case_change);
  if (kept.empty()) y[0].clear();
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> StringKernels() { return {{"StringNormalizer", StringNormalizer}}; }

}  // namespace kernels::cpu
