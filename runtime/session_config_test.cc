// Session settings by name: each key sets its SessionOptions field; unknown keys and bad values are
// InvalidArgument naming what is wrong.
#include "runtime/session_config.h"

#include "gtest/gtest.h"

namespace runtime {
namespace {

TEST(SessionConfigTest, KeysSetTheirFields) {
  SessionOptions o;
  ASSERT_TRUE(ApplySessionConfig("tune_for_streams", "2", o).ok());
  ASSERT_TRUE(ApplySessionConfig("cuda_graph", "0", o).ok());
  ASSERT_TRUE(ApplySessionConfig("fast_gelu", "false", o).ok());
  ASSERT_TRUE(ApplySessionConfig("plan_cache_dir", "/tmp/plans", o).ok());
  ASSERT_TRUE(ApplySessionConfig("autotune_plans", "12", o).ok());
  ASSERT_TRUE(ApplySessionConfig("max_contexts", "4", o).ok());
  ASSERT_TRUE(ApplySessionConfig("half_inputs", "true", o).ok());
  EXPECT_TRUE(o.half_inputs);
  EXPECT_EQ(o.gpu.autotune_streams, 2);
  EXPECT_FALSE(o.gpu.cuda_graph);
  EXPECT_FALSE(o.gpu.fast_gelu);
  EXPECT_EQ(o.gpu.plan_cache_dir, "/tmp/plans");
  EXPECT_EQ(o.gpu.autotune_plans, 12);
  EXPECT_EQ(o.gpu.max_contexts, 4);
  EXPECT_TRUE(o.gpu.plan_cache);  // untouched keys keep their defaults
}

TEST(SessionConfigTest, UnknownKeysAndBadValuesSayWhy) {
  SessionOptions o;
  absl::Status unknown = ApplySessionConfig("tune_for_stream", "2", o);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown session config key 'tune_for_stream'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find("tune_for_streams"), std::string::npos) << unknown;  // the known keys
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"tune_for_streams", "0"}, {"tune_for_streams", "17"}, {"autotune_plans", "4x"}, {"cuda_graph", "yes"}}) {
    absl::Status bad = ApplySessionConfig(key, value, o);
    EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_NE(bad.message().find(key), std::string::npos) << bad;
  }
  EXPECT_EQ(o.gpu.autotune_streams, 1);
  EXPECT_TRUE(o.gpu.cuda_graph);
}

}  // namespace
}  // namespace runtime
