// Owns Einsum's equation parser (ops/einsum.h) and its type/shape inference.
#include "ops/einsum.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
constexpr int kNumLetters = 52;
constexpr int kVariadic = std::numeric_limits<int>::max();

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One term ("ij", "...ii", "b...j"): its letter labels with -2 marking the ellipsis.
absl::StatusOr<std::vector<int>> ParseTerm(const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      if (ellipsis) return absl::InvalidArgumentError(absl::StrCat("term '", term, "' has two ellipses"));
      ellipsis = true;
      labels.push_back(-2);
      i += 2;
      continue;
    }
    const int label = LetterLabel(term[i]);
    if (label < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid character '", std::string(1, term[i]), "' in einsum term '", term, "'"));
    }
    labels.push_back(label);
  }
  return labels;
}

// Replaces the ellipsis marker of `term` by the labels of its last `count` ellipsis dims.
std::vector<int> ExpandEllipsis(const std::vector<int>& term, int64_t count, int64_t max_count) {
  std::vector<int> out;
  for (int label : term) {
    if (label != -2) {
      out.push_back(label);
      continue;
    }
    for (int64_t i = max_count - count; i < max_count; ++i) out.push_back(kNumLetters + static_cast<int>(i));
  }
  return out;
}

absl::StatusOr<std::vector<ir::TensorType>> InferEinsum(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    absl::Status s = ExpectDType(
        ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64});
    if (!s.ok()) return s;
    if (ctx.type(i).dtype != ctx.type(0).dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " has another dtype than input 0"));
    }
  }
  if (!ctx.attrs().Has("equation")) return absl::InvalidArgumentError("attribute 'equation' is missing");
  ir::TensorType out{ctx.type(0).dtype, std::nullopt};
  std::vector<int64_t> ranks;
  std::vector<ir::Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.type(i).shape) return std::vector<ir::TensorType>{out};
    ranks.push_back(ctx.type(i).rank());
    shapes.push_back(*ctx.type(i).shape);
  }
  absl::StatusOr<EinsumSpec> spec = ParseEinsum(ctx.attrs().GetString("equation", ""), ranks);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::vector<ir::Dim>> dims = EinsumLabelDims(*spec, shapes);
  if (!dims.ok()) return dims.status();
  out.shape = ir::Shape();
  for (int label : spec->output) out.shape->push_back((*dims)[label]);
  return std::vector<ir::TensorType>{out};
}

}  // namespace

absl::StatusOr<EinsumSpec> ParseEinsum(const std::string& equation, const std::vector<int64_t>& input_ranks) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const bool explicit_output = arrow != std::string::npos;
  const std::string lhs = explicit_output ? eq.substr(0, arrow) : eq;
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != input_ranks.size()) {
    return absl::InvalidArgumentError(absl::StrCat("einsum equation '", equation, "' has ", terms.size(),
                                                   " input terms for ", input_ranks.size(), " inputs"));
  }
  std::vector<std::vector<int>> parsed;
  std::vector<int64_t> ellipsis_dims(terms.size(), 0);
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    absl::StatusOr<std::vector<int>> term = ParseTerm(terms[i]);
    if (!term.ok()) return term.status();
    const bool has_ellipsis = std::count(term->begin(), term->end(), -2) > 0;
    const int64_t letters = static_cast<int64_t>(term->size()) - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? input_ranks[i] < letters : input_ranks[i] != letters) {
      return absl::InvalidArgumentError(
          absl::StrCat("einsum term '", terms[i], "' does not match input ", i, " of rank ", input_ranks[i]));
    }
    ellipsis_dims[i] = input_ranks[i] - letters;
    max_ellipsis = std::max(max_ellipsis, ellipsis_dims[i]);
    parsed.push_back(*std::move(term));
  }
  EinsumSpec spec;
  spec.num_labels = kNumLetters + static_cast<int>(max_ellipsis);
  spec.is_ellipsis.assign(spec.num_labels, false);
  for (int64_t i = 0; i < max_ellipsis; ++i) spec.is_ellipsis[kNumLetters + i] = true;
  std::vector<int> count(spec.num_labels, 0);
  for (size_t i = 0; i < parsed.size(); ++i) {
    spec.inputs.push_back(ExpandEllipsis(parsed[i], ellipsis_dims[i], max_ellipsis));
    for (int label : spec.inputs.back()) ++count[label];
  }
  if (explicit_output) {
    absl::StatusOr<std::vector<int>> out = ParseTerm(eq.substr(arrow + 2));
    if (!out.ok()) return out.status();
    spec.output = ExpandEllipsis(*out, max_ellipsis, max_ellipsis);
  } else {
    for (int64_t i = 0; i < max_ellipsis; ++i) spec.output.push_back(kNumLetters + static_cast<int>(i));
    for (int label = 0; label < kNumLetters; ++label) {
      if (count[label] == 1) spec.output.push_back(label);
    }
  }
  std::vector<bool> seen(spec.num_labels, false);
  for (int label : spec.output) {
    if (seen[label] || count[label] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("einsum output of '", equation, "' repeats a label or names one no input has"));
    }
    seen[label] = true;
  }
  return spec;
}

absl::StatusOr<std::vector<ir::Dim>> EinsumLabelDims(const EinsumSpec& spec, const std::vector<ir::Shape>& shapes) {
  std::vector<std::optional<ir::Dim>> dims(spec.num_labels);
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    for (size_t a = 0; a < spec.inputs[i].size(); ++a) {
      const int label = spec.inputs[i][a];
      const ir::Dim& d = shapes[i][a];
      std::optional<ir::Dim>& cur = dims[label];
      if (!cur || (!cur->known() && d.known()) || (spec.is_ellipsis[label] && cur->known() && cur->value == 1)) {
        cur = d;
      } else if (d.known() && cur->known() && d.value != cur->value && !(spec.is_ellipsis[label] && d.value == 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat("einsum dims ", cur->value, " and ", d.value, " of one label do not match"));
      }
    }
  }
  std::vector<ir::Dim> out(spec.num_labels, ir::Dim(1));
  for (int label = 0; label < spec.num_labels; ++label) {
    if (dims[label]) out[label] = *dims[label];
  }
  return out;
}

std::vector<OpDef> EinsumOpDefs() { return {{"Einsum", 1, kVariadic, InferEinsum}}; }

}  // namespace ops
