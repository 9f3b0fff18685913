// TfIdfVectorizer (opset 9): its attributes, read and checked once into the pool's n-grams, and
// its type/shape inference. Integer input (int32/int64) with pool_int64s, or string input with
// pool_strings (each distinct pool string is an id, a string outside the pool matches nothing).
//
// Each row of X ([C], or each of the N rows of [N, C]) is scanned for the pool's n-grams: for
// every skip distance d in 1..max_skip_count+1 and start position p, the items at p, p+d, p+2d, ...
// form n-grams of every length in [min_gram_length, max_gram_length]; a 1-gram does not depend on
// d and is counted once. Pool n-gram i found k times in a row adds to Y[row, ngram_indexes[i]]:
// k (TF), weights[i] when k > 0 (IDF), k * weights[i] (TFIDF); weights default to 1. The work is
// bounded by the input: distances beyond the row length find nothing and are not scanned.
#ifndef ONNXRUN_OPS_TFIDF_H_
#define ONNXRUN_OPS_TFIDF_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// Pool n-gram i: pool_int64s[start, start + length).
struct PoolNgram {
  int64_t start = 0;
  int64_t length = 0;
};

struct TfIdfAttrs {
  int64_t min_gram_length = 1;
  int64_t max_gram_length = 1;
  int64_t max_skip_count = 0;
  TfIdfMode mode = TfIdfMode::kTf;
  std::vector<int64_t> pool;                  // pool_int64s, or the ids of pool_strings' strings
  bool strings = false;                       // the pool is pool_strings: X is strings
  std::map<std::string, int64_t> string_ids;  // pool_strings: each distinct string's id
  std::vector<PoolNgram> ngrams;              // the pool's n-grams in order (from ngram_counts)
  std::vector<int64_t> ngram_indexes;         // output coordinate of pool n-gram i
  std::vector<float> weights;                 // weight of pool n-gram i; empty: all 1
  int64_t output_size = 0;                    // max(ngram_indexes) + 1
};

// The attributes, checked: 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0, mode
// TF/IDF/TFIDF, ngram_counts non-decreasing start offsets into the pool whose segments k hold
// whole (k+1)-grams, one ngram_index (>= 0) per pool n-gram and weights empty or one per n-gram.
// Exactly one of pool_int64s and pool_strings.
absl::StatusOr<TfIdfAttrs> ParseTfIdfAttrs(const ir::Node& node);

std::vector<OpDef> TfIdfOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_TFIDF_H_
