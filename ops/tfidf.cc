// TfIdfVectorizer: attribute parsing into the pool's n-grams and its type/shape inference (see
// tfidf.h).
#include "ops/tfidf.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;

absl::StatusOr<TfIdfMode> ParseMode(const ir::Node& node) {
  if (!node.attrs.Has("mode")) return absl::InvalidArgumentError("attribute 'mode' is missing");
  const std::string mode = node.attrs.GetString("mode", "");
  if (mode == "TF") return TfIdfMode::kTf;
  if (mode == "IDF") return TfIdfMode::kIdf;
  if (mode == "TFIDF") return TfIdfMode::kTfIdf;
  return absl::InvalidArgumentError(absl::StrCat("mode must be TF, IDF or TFIDF, not \"", mode, "\""));
}

absl::Status ParseLengths(const ir::Node& node, TfIdfAttrs& attrs) {
  for (const char* name : {"min_gram_length", "max_gram_length", "max_skip_count"}) {
    if (!node.attrs.Has(name)) return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is missing"));
  }
  attrs.min_gram_length = node.attrs.GetInt("min_gram_length", 1);
  attrs.max_gram_length = node.attrs.GetInt("max_gram_length", 1);
  attrs.max_skip_count = node.attrs.GetInt("max_skip_count", 0);
  if (attrs.min_gram_length < 1 || attrs.max_gram_length < attrs.min_gram_length) {
    return absl::InvalidArgumentError(absl::StrCat("need 1 <= min_gram_length <= max_gram_length, got ",
                                                   attrs.min_gram_length, " and ", attrs.max_gram_length));
  }
  if (attrs.max_skip_count < 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_skip_count must be >= 0, got ", attrs.max_skip_count));
  }
  return absl::OkStatus();
}

// ngram_counts[k] starts the (k+1)-grams; the segment runs to the next start or the pool's end.
absl::StatusOr<std::vector<PoolNgram>> PoolNgrams(const std::vector<int64_t>& counts, int64_t pool_size) {
  std::vector<PoolNgram> ngrams;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t start = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    const int64_t length = static_cast<int64_t>(k) + 1;
    if (start < 0 || end < start || end > pool_size) {
      return absl::InvalidArgumentError(absl::StrCat("ngram_counts must be non-decreasing offsets into the pool of ",
                                                     pool_size, " items; entry ", k, " is ", start));
    }
    if ((end - start) % length != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the pool's ", length, "-grams take ", end - start, " items, not a multiple of ", length));
    }
    for (int64_t at = start; at < end; at += length) ngrams.push_back({at, length});
  }
  return ngrams;
}

absl::Status ParsePool(const ir::Node& node, TfIdfAttrs& attrs) {
  attrs.strings = node.attrs.Has("pool_strings");
  if (attrs.strings == node.attrs.Has("pool_int64s")) {
    return absl::InvalidArgumentError("TfIdfVectorizer needs exactly one of pool_int64s and pool_strings");
  }
  if (attrs.strings) {
    for (const std::string& item : node.attrs.GetStrings("pool_strings")) {
      const auto [it, added] = attrs.string_ids.emplace(item, static_cast<int64_t>(attrs.string_ids.size()));
      attrs.pool.push_back(it->second);
    }
  } else {
    attrs.pool = node.attrs.GetInts("pool_int64s");
  }
  absl::StatusOr<std::vector<PoolNgram>> ngrams =
      PoolNgrams(node.attrs.GetInts("ngram_counts"), static_cast<int64_t>(attrs.pool.size()));
  if (!ngrams.ok()) return ngrams.status();
  attrs.ngrams = *std::move(ngrams);
  attrs.ngram_indexes = node.attrs.GetInts("ngram_indexes");
  if (attrs.ngram_indexes.size() != attrs.ngrams.size()) {
    return absl::InvalidArgumentError(absl::StrCat("ngram_indexes has ", attrs.ngram_indexes.size(),
                                                   " entries for the pool's ", attrs.ngrams.size(), " n-grams"));
  }
  for (int64_t index : attrs.ngram_indexes) {
    if (index < 0 || index == std::numeric_limits<int64_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("ngram_indexes has an entry out of range: ", index));
    }
    attrs.output_size = std::max(attrs.output_size, index + 1);
  }
  attrs.weights = node.attrs.GetFloats("weights");
  if (!attrs.weights.empty() && attrs.weights.size() != attrs.ngrams.size()) {
    return absl::InvalidArgumentError(absl::StrCat("weights has ", attrs.weights.size(), " entries for the pool's ",
                                                   attrs.ngrams.size(), " n-grams"));
  }
  return absl::OkStatus();
}

// X [C] -> Y [output_size]; X [N, C] -> Y [N, output_size]; float32.
absl::StatusOr<std::vector<ir::TensorType>> InferTfIdf(const InferContext& ctx) {
  absl::StatusOr<TfIdfAttrs> attrs = ParseTfIdfAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  if (attrs->strings) {
    if (absl::Status s = ExpectDType(ctx, 0, {DType::kString}); !s.ok()) return s;
  } else if (absl::Status s = ExpectDType(ctx, 0, {DType::kInt32, DType::kInt64}); !s.ok()) {
    return s;
  }
  const ir::TensorType& x = ctx.type(0);
  ir::TensorType y{DType::kFloat32, std::nullopt};
  if (x.shape) {
    if (x.shape->size() != 1 && x.shape->size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 1-D [C] or 2-D [N, C], got shape ", ir::ShapeToString(*x.shape)));
    }
    y.shape = ir::Shape{ir::Dim(attrs->output_size)};
    if (x.shape->size() == 2) y.shape->insert(y.shape->begin(), (*x.shape)[0]);
  }
  return std::vector<ir::TensorType>{y};
}

}  // namespace

absl::StatusOr<TfIdfAttrs> ParseTfIdfAttrs(const ir::Node& node) {
  TfIdfAttrs attrs;
  if (absl::Status s = ParseLengths(node, attrs); !s.ok()) return s;
  absl::StatusOr<TfIdfMode> mode = ParseMode(node);
  if (!mode.ok()) return mode.status();
  attrs.mode = *mode;
  if (absl::Status s = ParsePool(node, attrs); !s.ok()) return s;
  return attrs;
}

std::vector<OpDef> TfIdfOpDefs() {
  return {{"TfIdfVectorizer", 1, 1, InferTfIdf, /*takes_non_tensors=*/false, /*takes_strings=*/true}};
}

}  // namespace ops
