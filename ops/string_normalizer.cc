// StringNormalizer: attribute parsing, the stopword rule and the type/shape inference (see
// string_normalizer.h). Y's length depends on X's values: it is known when X is a known value or
// when there are no stopwords, unknown otherwise.
#include "ops/string_normalizer.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using Types = std::vector<ir::TensorType>;

absl::StatusOr<CaseChange> ParseCaseChange(const std::string& action) {
  if (action == "NONE") return CaseChange::kNone;
  if (action == "LOWER") return CaseChange::kLower;
  if (action == "UPPER") return CaseChange::kUpper;
  return absl::InvalidArgumentError(
      absl::StrCat("case_change_action must be LOWER, UPPER or NONE, not \"", absl::CHexEscape(action), "\""));
}

// An error unless X's (known) shape is [C] or [1, C].
absl::Status ExpectVectorShape(const ir::Shape& shape) {
  const bool row = shape.size() == 2 && (!shape[0].known() || shape[0].value == 1);
  if (shape.size() == 1 || row) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("X must have shape [C] or [1, C], not ", ir::ShapeToString(shape)));
}

// Y's last dim: exact when X's value is known, X's when nothing can be dropped, else unknown.
ir::Dim OutputLength(const InferContext& ctx, const StringNormalizerAttrs& attrs, const ir::Dim& c) {
  if (const ir::Tensor* x = ctx.value(0); x != nullptr && x->strings() != nullptr) {
    int64_t kept = 0;
    for (int64_t i = 0; i < x->num_elements(); ++i) kept += IsStopword(attrs, x->strings()[i]) ? 0 : 1;
    return std::max<int64_t>(kept, 1);
  }
  if (attrs.stopwords.empty() && c.known()) return std::max<int64_t>(c.value, 1);
  return ir::Dim();
}

absl::StatusOr<Types> InferStringNormalizer(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {ir::DType::kString}); !s.ok()) return s;
  absl::StatusOr<StringNormalizerAttrs> attrs = ParseStringNormalizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (!x.shape) return Types{{ir::DType::kString, std::nullopt}};
  if (absl::Status s = ExpectVectorShape(*x.shape); !s.ok()) return s;
  const ir::Dim length = OutputLength(ctx, *attrs, x.shape->back());
  ir::Shape y = x.shape->size() == 1 ? ir::Shape{length} : ir::Shape{ir::Dim(1), length};
  return Types{{ir::DType::kString, std::move(y)}};
}

}  // namespace

absl::StatusOr<StringNormalizerAttrs> ParseStringNormalizerAttrs(const ir::Node& node) {
  StringNormalizerAttrs attrs;
  absl::StatusOr<CaseChange> change = ParseCaseChange(node.attrs.GetString("case_change_action", "NONE"));
  if (!change.ok()) return change.status();
  absl::StatusOr<bool> sensitive = ParseFlagAttribute(node, "is_case_sensitive", false);
  if (!sensitive.ok()) return sensitive.status();
  attrs.case_change = *change;
  attrs.case_sensitive = *sensitive;
  for (const std::string& word : node.attrs.GetStrings("stopwords")) {
    attrs.stopwords.insert(attrs.case_sensitive ? word : absl::AsciiStrToLower(word));
  }
  return attrs;
}

bool IsStopword(const StringNormalizerAttrs& attrs, const std::string& s) {
  if (attrs.stopwords.empty()) return false;
  return attrs.stopwords.contains(attrs.case_sensitive ? s : absl::AsciiStrToLower(s));
}

std::vector<int64_t> StringNormalizerDims(const std::vector<int64_t>& x_dims, int64_t kept) {
  const int64_t length = std::max<int64_t>(kept, 1);
  if (x_dims.size() == 2) return {1, length};
  return {length};
}

std::vector<OpDef> StringOpDefs() {
  return {{"StringNormalizer", 1, 1, InferStringNormalizer, /*takes_non_tensors=*/false, /*takes_strings=*/true}};
}

}  // namespace ops
