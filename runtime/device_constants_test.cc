// DeviceConstants on the GPU: a weight only cuDNN graphs read is held channels-last only (its logical
// copy made on first need from the device copy, dropped again unless a capture read it), a 1x1
// conv's weight serves both layouts from one buffer, and every copy holds the host's values.
#include "runtime/device_constants.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace exec {
namespace {

bool HasGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

ir::Tensor Ramp(std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = 0.5f * static_cast<float>(i) - 3.0f;
  return ir::Tensor::FromFloats(values, dims);
}

// The device copy, downloaded in logical order, equals the host constant element for element.
void ExpectHolds(const DeviceTensor& device, const ir::Tensor& host) {
  absl::StatusOr<ir::Tensor> back = Download(device, nullptr);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->shape(), host.shape());
  for (int64_t i = 0; i < host.num_elements(); ++i) {
    ASSERT_EQ(back->data<float>()[i], host.data<float>()[i]) << "element " << i;
  }
}

struct Weights {
  ir::Graph graph;
  ir::ValueId spatial, pointwise, bias;
  Weights() {
    spatial = graph.AddConstant("w3x3", Ramp({4, 3, 3, 3}));
    pointwise = graph.AddConstant("w1x1", Ramp({8, 4, 1, 1}));
    bias = graph.AddConstant("bias", Ramp({8}));
  }
};

TEST(DeviceConstantsTest, GraphOnlyWeightIsHeldChannelsLastOnce) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  Weights w;
  DeviceConstants constants;
  const size_t n = w.graph.values().size();
  std::vector<bool> graph_only(n, false);
  graph_only[w.spatial] = true;
  ASSERT_TRUE(constants.Init(w.graph, std::vector<bool>(n, true), graph_only, nullptr).ok());
  const int64_t bias_bytes = 8 * 4, pointwise_bytes = 32 * 4, spatial_bytes = 108 * 4;
  EXPECT_EQ(constants.logical_bytes(), bias_bytes + pointwise_bytes);  // the graph-only weight waits

  absl::StatusOr<DeviceTensor> cl = constants.ChannelsLast(w.spatial, false, nullptr);
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_TRUE(cl->nhwc);
  ExpectHolds(*cl, *w.graph.value(w.spatial).constant);
  EXPECT_FALSE(constants.Logical(w.spatial, /*capturing=*/true, nullptr).ok());  // no copy inside a capture

  absl::StatusOr<DeviceTensor> logical = constants.Logical(w.spatial, false, nullptr);
  ASSERT_TRUE(logical.ok()) << logical.status();
  EXPECT_FALSE(logical->nhwc);
  ExpectHolds(*logical, *w.graph.value(w.spatial).constant);
  EXPECT_EQ(constants.logical_bytes(), bias_bytes + pointwise_bytes + spatial_bytes);

  constants.DropLogical(w.spatial);
  EXPECT_EQ(constants.logical_bytes(), bias_bytes + pointwise_bytes);
  constants.DropLogical(w.bias);  // read by other steps too: stays
  EXPECT_EQ(constants.logical_bytes(), bias_bytes + pointwise_bytes);
  ASSERT_TRUE(constants.Logical(w.spatial, false, nullptr).ok());  // made again on need
  ExpectHolds(*constants.Logical(w.spatial, false, nullptr), *w.graph.value(w.spatial).constant);
}

TEST(DeviceConstantsTest, CapturedLogicalCopyIsNeverDropped) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  Weights w;
  DeviceConstants constants;
  const size_t n = w.graph.values().size();
  ASSERT_TRUE(constants.Init(w.graph, std::vector<bool>(n, true), std::vector<bool>(n, true), nullptr).ok());
  ASSERT_TRUE(constants.ChannelsLast(w.spatial, false, nullptr).ok());
  ASSERT_TRUE(constants.Logical(w.spatial, false, nullptr).ok());
  const void* captured = constants.Logical(w.spatial, /*capturing=*/true, nullptr)->data();  // pins it
  constants.DropLogical(w.spatial);
  EXPECT_EQ(constants.Logical(w.spatial, true, nullptr)->data(), captured);
}

TEST(DeviceConstantsTest, PointwiseWeightServesBothLayoutsFromOneBuffer) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  Weights w;
  DeviceConstants constants;
  const size_t n = w.graph.values().size();
  ASSERT_TRUE(constants.Init(w.graph, std::vector<bool>(n, true), std::vector<bool>(n, false), nullptr).ok());
  absl::StatusOr<DeviceTensor> logical = constants.Logical(w.pointwise, false, nullptr);
  absl::StatusOr<DeviceTensor> cl = constants.ChannelsLast(w.pointwise, false, nullptr);
  ASSERT_TRUE(logical.ok() && cl.ok());
  EXPECT_EQ(logical->data(), cl->data());
  EXPECT_TRUE(cl->nhwc);
  ExpectHolds(*cl, *w.graph.value(w.pointwise).constant);
  EXPECT_FALSE(constants.Serves(n));  // not a value of the graph
}

TEST(DeviceConstantsTest, LayoutsShareBytesOnlyWhereEveryStrideAgrees) {
  DeviceTensor t;
  t.dtype = ir::DType::kFloat32;
  for (auto [dims, shared] : std::vector<std::pair<std::vector<int64_t>, bool>>{
           {{8, 4, 1, 1}, true}, {{8, 1, 3, 3}, true}, {{8, 4, 3, 3}, false}, {{8, 4}, false}}) {
    t.dims = dims;
    EXPECT_EQ(LayoutsShareBytes(t), shared) << dims[0] << "x" << dims[1];
  }
}

}  // namespace
}  // namespace exec
