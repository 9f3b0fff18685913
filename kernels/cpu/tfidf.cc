// The CPU reference kernel of TfIdfVectorizer (semantics in ops/tfidf.h): the pool's n-grams in a
// trie, each row walked once per skip distance and start position, counts per pool n-gram, then
// weighted into the row of Y.
#include "ops/tfidf.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

// The pool's n-grams as a trie: node 0 is the root (the empty prefix); a node's `ngrams` are the
// pool n-grams that end there (their ordinals i).
class NgramTrie {
 public:
  explicit NgramTrie(const ops::TfIdfAttrs& attrs) : nodes_(1) {
    for (size_t i = 0; i < attrs.ngrams.size(); ++i) {
      int32_t at = 0;
      for (int64_t k = 0; k < attrs.ngrams[i].length; ++k) at = Insert(at, attrs.pool[attrs.ngrams[i].start + k]);
      nodes_[at].ngrams.push_back(static_cast<int64_t>(i));
    }
  }
  // The child of `node` by `item`; -1 when there is none.
  int32_t Find(int32_t node, int64_t item) const {
    auto it = nodes_[node].children.find(item);
    return it == nodes_[node].children.end() ? -1 : it->second;
  }
  const std::vector<int64_t>& NgramsAt(int32_t node) const { return nodes_[node].ngrams; }

 private:
  struct Node {
    std::map<int64_t, int32_t> children;
    std::vector<int64_t> ngrams;
  };
  // The child of `node` by `item`, added when missing.
  int32_t Insert(int32_t node, int64_t item) {
    const int32_t found = Find(node, item);
    if (found >= 0) return found;
    const int32_t child = static_cast<int32_t>(nodes_.size());
    nodes_[node].children[item] = child;
    nodes_.emplace_back();
    return child;
  }
  std::vector<Node> nodes_;
};

// Adds to counts[i] the occurrences of pool n-gram i in `row` (the scan of ops/tfidf.h).
void CountRow(const std::vector<int64_t>& row, const ops::TfIdfAttrs& attrs, const NgramTrie& trie,
              std::vector<int64_t>& counts) {
  const int64_t size = static_cast<int64_t>(row.size());
  // Distances past size - 1 reach no second item; distance 1 is scanned even for a 1-item row.
  const int64_t max_distance = std::min(attrs.max_skip_count + 1, std::max<int64_t>(1, size - 1));
  int64_t min_length = attrs.min_gram_length;
  for (int64_t distance = 1; distance <= max_distance; ++distance) {
    for (int64_t start = 0; start < size; ++start) {
      int32_t node = 0;
      for (int64_t length = 1; length <= attrs.max_gram_length; ++length) {
        const int64_t at = start + (length - 1) * distance;
        if (at >= size || (node = trie.Find(node, row[at])) < 0) break;
        if (length < min_length) continue;
        for (int64_t i : trie.NgramsAt(node)) ++counts[i];
      }
    }
    if (min_length == 1) min_length = 2;  // 1-grams are the same at every distance: counted once
    if (min_length > attrs.max_gram_length) break;
  }
}

// Y's row from the counts: per pool n-gram i, its count (TF), its weight if found (IDF) or both
// multiplied (TFIDF), added at ngram_indexes[i].
void WriteRow(const std::vector<int64_t>& counts, const ops::TfIdfAttrs& attrs, float* y) {
  for (size_t i = 0; i < counts.size(); ++i) {
    const float weight = attrs.weights.empty() ? 1.0f : attrs.weights[i];
    const float count = static_cast<float>(counts[i]);
    float value = count;
    if (attrs.mode == ops::TfIdfMode::kIdf) value = counts[i] > 0 ? weight : 0.0f;
    if (attrs.mode == ops::TfIdfMode::kTfIdf) value = count * weight;
    y[attrs.ngram_indexes[i]] += value;
  }
}

// A string's id in pool_strings, -1 (matching nothing) for one outside the pool.
int64_t StringId(const ops::TfIdfAttrs& attrs, const std::string& item) {
  const auto it = attrs.string_ids.find(item);
  return it == attrs.string_ids.end() ? -1 : it->second;
}

absl::Status TfIdfVectorizer(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || y == nullptr) return absl::InvalidArgumentError("TfIdfVectorizer: missing operand");
  absl::StatusOr<ops::TfIdfAttrs> attrs = ops::ParseTfIdfAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const bool strings = x->dtype() == ir::DType::kString;
  if (strings != attrs->strings || (!strings && x->dtype() != ir::DType::kInt32 && x->dtype() != ir::DType::kInt64)) {
    return absl::InvalidArgumentError(
        absl::StrCat("TfIdfVectorizer: input dtype ", ir::DTypeName(x->dtype()),
                     attrs->strings ? " (pool_strings needs strings)" : " (pool_int64s needs int32 or int64)"));
  }
  if (x->rank() != 1 && x->rank() != 2) return absl::InvalidArgumentError("TfIdfVectorizer: input must be 1-D or 2-D");
  const int64_t rows = x->rank() == 2 ? x->shape()[0] : 1;
  const int64_t columns = x->shape().back();
  if (y->dtype() != ir::DType::kFloat32 || y->num_elements() != rows * attrs->output_size) {
    return absl::InvalidArgumentError("TfIdfVectorizer: output does not match the input rows and ngram_indexes");
  }
  NgramTrie trie(*attrs);
  std::vector<int64_t> row(static_cast<size_t>(columns));
  std::vector<int64_t> counts(attrs->ngrams.size());
  float* out = y->data<float>();
  std::fill(out, out + y->num_elements(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c)
      row[c] = strings ? StringId(*attrs, x->strings()[r * columns + c]) : x->GetAsInt64(r * columns + c);
    std::fill(counts.begin(), counts.end(), 0);
    CountRow(row, *attrs, trie, counts);
    WriteRow(counts, *attrs, out + r * attrs->output_size);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> TfIdfKernels() { return {{"TfIdfVectorizer", TfIdfVectorizer}}; }

}  // namespace kernels::cpu
