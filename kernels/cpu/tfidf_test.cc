// TfIdfVectorizer's corners the conformance cases (all TF, identity ngram_indexes) leave out: IDF
// and TFIDF weights, a permuted ngram_indexes, 1-grams counted once over skip distances, a skip
// count far beyond the row, a pool of strings, and bad attributes.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::I32;
using test_tensors::I64;
using test_tensors::MakeNode;
using test_tensors::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The spec's example pool: 2-grams [94, 17] and [17, 36] at output coordinates 1 and 0.
ir::Node SpecExample(const std::string& mode, std::vector<float> weights = {}) {
  ir::Attributes attrs = Attrs({{"mode", mode},
                                {"min_gram_length", int64_t{2}},
                                {"max_gram_length", int64_t{2}},
                                {"max_skip_count", int64_t{0}},
                                {"ngram_counts", std::vector<int64_t>{0, 0}},
                                {"ngram_indexes", std::vector<int64_t>{1, 0}},
                                {"pool_int64s", std::vector<int64_t>{94, 17, 17, 36}}});
  if (!weights.empty()) attrs.Set("weights", weights);
  return MakeNode("TfIdfVectorizer", 1, attrs, 9);
}

TEST(TfIdfTest, NgramIndexesPlaceCountsAndWeightsFollowThePool) {
  ir::Tensor x = I64({5}, {94, 17, 94, 17, 36});  // [94, 17] twice, [17, 36] once
  auto tf = RunNode(SpecExample("TF"), {&x});
  ASSERT_TRUE(tf.ok()) << tf.status();
  EXPECT_THAT(Values<float>((*tf)[0]), ElementsAre(1, 2));
  auto idf = RunNode(SpecExample("IDF", {0.5f, 3.0f}), {&x});
  ASSERT_TRUE(idf.ok()) << idf.status();
  EXPECT_THAT(Values<float>((*idf)[0]), ElementsAre(3, 0.5));
  auto tfidf = RunNode(SpecExample("TFIDF", {0.5f, 3.0f}), {&x});
  ASSERT_TRUE(tfidf.ok()) << tfidf.status();
  EXPECT_THAT(Values<float>((*tfidf)[0]), ElementsAre(3, 1));
  auto idf_unweighted = RunNode(SpecExample("IDF"), {&x});
  ASSERT_TRUE(idf_unweighted.ok()) << idf_unweighted.status();
  EXPECT_THAT(Values<float>((*idf_unweighted)[0]), ElementsAre(1, 1));
}

// 1-grams [1], [2] and the 2-gram [1, 1]; min 1, max 2.
ir::Node Skipping(int64_t max_skip_count) {
  return MakeNode("TfIdfVectorizer", 1,
                  Attrs({{"mode", std::string("TF")},
                         {"min_gram_length", int64_t{1}},
                         {"max_gram_length", int64_t{2}},
                         {"max_skip_count", max_skip_count},
                         {"ngram_counts", std::vector<int64_t>{0, 2}},
                         {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                         {"pool_int64s", std::vector<int64_t>{1, 2, 1, 1}}}),
                  9);
}

TEST(TfIdfTest, UnigramsCountOnceOverSkipDistances) {
  ir::Tensor x = I64({4}, {1, 2, 1, 2});
  auto none = RunNode(Skipping(0), {&x});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Values<float>((*none)[0]), ElementsAre(2, 2, 0));
  auto one = RunNode(Skipping(1), {&x});  // [1, 1] at distance 2
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_THAT(Values<float>((*one)[0]), ElementsAre(2, 2, 1));
  auto huge = RunNode(Skipping(int64_t{1} << 60), {&x});  // distances past the row find nothing
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_THAT(Values<float>((*huge)[0]), ElementsAre(2, 2, 1));
}

TEST(TfIdfTest, BatchRowsAreCountedApart) {
  ir::Tensor x = I32({2, 3}, {1, 1, 2, 2, 2, 1});
  auto out = RunNode(Skipping(0), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 1, 1, 2, 0));
}

// pool_strings: the spec's example pool as words; a word outside the pool breaks an n-gram.
TEST(TfIdfTest, StringPoolCountsWordNgrams) {
  ir::Attributes attrs = Attrs({{"mode", std::string("TF")},
                                {"min_gram_length", int64_t{1}},
                                {"max_gram_length", int64_t{2}},
                                {"max_skip_count", int64_t{0}},
                                {"ngram_counts", std::vector<int64_t>{0, 2}},
                                {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                                {"pool_strings", std::vector<std::string>{"cat", "dog", "cat", "dog"}}});
  ir::Tensor x = ir::Tensor::FromStrings({"cat", "dog", "bird", "dog", "cat", "dog"});
  auto tf = RunNode(MakeNode("TfIdfVectorizer", 1, attrs, 9), {&x});
  ASSERT_TRUE(tf.ok()) << tf.status();
  EXPECT_THAT(Values<float>((*tf)[0]), ElementsAre(2, 3, 2));  // cat, dog, then "cat dog"
  ir::Tensor ints = I64({2}, {0, 1});
  EXPECT_THAT(Error(RunNode(MakeNode("TfIdfVectorizer", 1, attrs, 9), {&ints})), HasSubstr("dtype int64"));
}

TEST(TfIdfTest, BadAttributesAndInputsAreErrors) {
  ir::Tensor x = I64({4}, {1, 2, 1, 2});
  ir::Node strings = Skipping(0);
  strings.attrs.Set("pool_strings", std::vector<std::string>{"a"});
  EXPECT_THAT(Error(RunNode(strings, {&x})), HasSubstr("pool_strings"));
  ir::Node ragged = Skipping(0);
  ragged.attrs.Set("ngram_counts", std::vector<int64_t>{0, 1});  // three items cannot be 2-grams
  EXPECT_THAT(Error(RunNode(ragged, {&x})), HasSubstr("not a multiple of 2"));
  ir::Node short_indexes = Skipping(0);
  short_indexes.attrs.Set("ngram_indexes", std::vector<int64_t>{0, 1});
  EXPECT_THAT(Error(RunNode(short_indexes, {&x})), HasSubstr("ngram_indexes has 2 entries"));
  ir::Node bad_mode = Skipping(0);
  bad_mode.attrs.Set("mode", std::string("BM25"));
  EXPECT_THAT(Error(RunNode(bad_mode, {&x})), HasSubstr("TF, IDF or TFIDF"));
  ir::Tensor cube = I64({1, 2, 2}, {1, 2, 1, 2});
  EXPECT_THAT(Error(RunNode(Skipping(0), {&cube})), HasSubstr("1-D [C] or 2-D [N, C]"));
}

}  // namespace
}  // namespace kernels::cpu
