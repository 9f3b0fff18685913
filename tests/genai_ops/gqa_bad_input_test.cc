// GroupQueryAttention on inputs that do not fit its KV cache: each Run gives a Status naming the
// problem, never a crash or an allocation sized by a wrong scalar (the ASan stage runs this too).
// The model and good inputs are the gqa_decode case of tests/genai_ops/cases (ORT-made).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/session.h"

namespace {

using ::testing::HasSubstr;

constexpr char kCase[] = "tests/genai_ops/cases/gqa_decode";

class GqaBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto session = runtime::Session::Create(std::string(kCase) + "/model.onnx", {});
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
    for (size_t i = 0; i < session_->inputs().size(); ++i) {
      auto tensor =
          importer::ReadTensorProtoFile(std::string(kCase) + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
      ASSERT_TRUE(tensor.ok()) << tensor.status();
      feeds_.push_back({session_->inputs()[i].name, *std::move(tensor)});
    }
  }
  // Runs with input `name` set to int32 `values` (of its shape).
  absl::Status RunWith(const std::string& name, const std::vector<int32_t>& values) {
    std::vector<runtime::NamedTensor> feeds = feeds_;
    for (runtime::NamedTensor& feed : feeds) {
      if (feed.name != name) continue;
      for (size_t i = 0; i < values.size(); ++i) feed.tensor.data<int32_t>()[i] = values[i];
    }
    auto out = session_->Run(feeds);
    return out.ok() ? absl::OkStatus() : out.status();
  }
  std::unique_ptr<runtime::Session> session_;
  std::vector<runtime::NamedTensor> feeds_;
};

TEST_F(GqaBadInputTest, TheCaseRuns) { EXPECT_TRUE(RunWith("seqlens_k", {6, 6}).ok()); }

TEST_F(GqaBadInputTest, TotalSequenceLengthPastTheCacheIsRefused) {
  EXPECT_THAT(RunWith("total_sequence_length", {2147483647}).message(),
              HasSubstr("total_sequence_length 2147483647 is not in 1..7"));
  EXPECT_THAT(RunWith("total_sequence_length", {0}).message(), HasSubstr("is not in 1..7"));
}

TEST_F(GqaBadInputTest, SeqlensThatDoNotFitAreRefused) {
  EXPECT_THAT(RunWith("seqlens_k", {6, 40}).message(), HasSubstr("seqlens_k[1] = 40 does not fit"));
  EXPECT_THAT(RunWith("seqlens_k", {-5, 6}).message(), HasSubstr("seqlens_k[0] = -5 does not fit"));
}

}  // namespace
