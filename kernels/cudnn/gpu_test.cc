// kernels/cudnn/gpu_test.cc: GPU tests — fused graphs (conv+bias+relu at fp16/fp32/tf32,
// conv+bias+residual+relu, conv+bias+ReLU6 as MAX/MIN, matmul+bias+GELU (erf and tanh, fp16 and bf16)), a
// runtime-compiled plan serialized and loaded back (FusedGraphPlan::FromSerialized), and the legacy calls
// (depthwise/grouped conv, BN inference, pooling, softmax), each compared on every element with a
// CPU reference. Every test skips when cudaGetDeviceCount fails or reports no device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "gtest/gtest.h"
#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/gpu_test_util.h"
#include "kernels/cudnn/legacy.h"

namespace cudnn::testing {
namespace {

enum class Precision { kFp16, kFp32, kTf32 };
double Rtol(Precision p) { return p == Precision::kFp16 ? kRtolFp16 : (p == Precision::kFp32 ? kRtolFp32 : kRtolTf32); }
IoType Io(Precision p) { return p == Precision::kFp16 ? IoType::kHalf : IoType::kFloat; }

// Shapes of the fused-conv tests: N=2, C=32 → K=64, 12x12, 3x3 pad 1, NHWC.
constexpr int64_t kN = 2, kC = 32, kK = 64, kH = 12, kW = 12;

TensorDesc Nhwc(int64_t uid, std::vector<int64_t> dims, IoType t, bool is_virtual = false) {
  TensorDesc d{uid, dims, ChannelsLastStrides(dims), t};
  d.is_virtual = is_virtual;
  return d;
}
TensorDesc Scalar(int64_t uid, int rank, double value) {
  TensorDesc d{uid, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1), IoType::kFloat};
  d.by_value = true;
  d.value = value;
  return d;
}

// conv → +bias(4) → [epilogue-specific tail], y virtual (3), the sum virtual (5).
FusedGraphSpec ConvBiasSpec(Precision p) {
  const IoType t = Io(p);
  FusedGraphSpec spec;
  spec.anchor = FusedGraphSpec::kConv;
  spec.x = Nhwc(1, {kN, kC, kH, kW}, t);
  spec.w = Nhwc(2, {kK, kC, 3, 3}, t);
  spec.y = Nhwc(3, {kN, kK, kH, kW}, IoType::kFloat, true);
  spec.conv = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
  spec.allow_tf32 = p == Precision::kTf32;
  spec.extra.push_back(Nhwc(4, {1, kK, 1, 1}, t));
  spec.extra.push_back(Nhwc(5, {kN, kK, kH, kW}, IoType::kFloat, true));
  spec.epilogue.push_back({"ADD", 3, 4, 5});
  return spec;
}

struct ConvData {
  std::vector<float> x, w, bias;
  std::vector<double> ref;  // conv + bias, NHWC
};

ConvData MakeConvData(IoType t) {
  ConvData d;
  const float scale = 1.0f / std::sqrt(float{kC * 9});
  d.x = Random(kN * kC * kH * kW, t, 1);
  d.w = Random(kK * kC * 9, t, 2, -scale, scale);
  d.bias = Random(kK, t, 3, -0.5f, 0.5f);
  const View4 xv{{kN, kC, kH, kW}, ChannelsLastStrides({kN, kC, kH, kW})};
  const View4 wv{{kK, kC, 3, 3}, ChannelsLastStrides({kK, kC, 3, 3})};
  const View4 yv{{kN, kK, kH, kW}, ChannelsLastStrides({kN, kK, kH, kW})};
  d.ref = ConvRef(d.x, xv, d.w, wv, yv, {1, 1, 1, 1, 1}, &d.bias);
  return d;
}

// Builds the plan, runs it with the given device pointers, returns the output (uid `out`).
std::vector<float> BuildAndRun(cudnnHandle_t handle, const FusedGraphSpec& spec, std::map<int64_t, void*> ptrs,
                               int64_t out, size_t out_count, IoType out_type) {
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(handle, spec, {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  std::cout << "  " << ::testing::UnitTest::GetInstance()->current_test_info()->name() << ": "
            << plan->engine_description() << ", workspace " << plan->workspace_bytes() << "\n";
  DeviceBuffer y(out_count * ElementBytes(out_type));
  DeviceBuffer ws(plan->workspace_bytes());
  ptrs[out] = y.get();
  absl::Status run = plan->Execute(handle, ptrs, ws.get());
  EXPECT_TRUE(run.ok()) << run;
  return Download(y, out_count, out_type);
}

class FusedConvTest : public GpuTest, public ::testing::WithParamInterface<Precision> {};

TEST_P(FusedConvTest, ConvBiasRelu) {
  const Precision p = GetParam();
  const IoType t = Io(p);
  FusedGraphSpec spec = ConvBiasSpec(p);
  spec.extra.push_back(Nhwc(7, {kN, kK, kH, kW}, t));
  spec.epilogue.push_back({"RELU_FWD", 5, -1, 7});
  ConvData d = MakeConvData(t);
  for (double& v : d.ref) v = std::max(v, 0.0);
  DeviceBuffer x = Upload(d.x, t), w = Upload(d.w, t), b = Upload(d.bias, t);
  std::vector<float> got = BuildAndRun(handle_, spec, {{1, x.get()}, {2, w.get()}, {4, b.get()}}, 7, d.ref.size(), t);
  EXPECT_TRUE(AllClose(got, d.ref, Rtol(p)));
}

INSTANTIATE_TEST_SUITE_P(Precisions, FusedConvTest,
                         ::testing::Values(Precision::kFp16, Precision::kFp32, Precision::kTf32), [](const auto& info) {
                           return std::string(info.param == Precision::kFp16   ? "fp16"
                                              : info.param == Precision::kFp32 ? "fp32"
                                                                               : "tf32");
                         });

using FusedGraphGpuTest = GpuTest;

TEST_F(FusedGraphGpuTest, ConvBiasResidualAddRelu) {
  const IoType t = IoType::kHalf;
  FusedGraphSpec spec = ConvBiasSpec(Precision::kFp16);
  spec.extra.push_back(Nhwc(8, {kN, kK, kH, kW}, t));                     // residual
  spec.extra.push_back(Nhwc(9, {kN, kK, kH, kW}, IoType::kFloat, true));  // conv+bias+residual
  spec.extra.push_back(Nhwc(7, {kN, kK, kH, kW}, t));
  spec.epilogue.push_back({"ADD", 5, 8, 9});
  spec.epilogue.push_back({"RELU_FWD", 9, -1, 7});
  ConvData d = MakeConvData(t);
  const std::vector<float> residual = Random(d.ref.size(), t, 4);
  for (size_t i = 0; i < d.ref.size(); ++i) d.ref[i] = std::max(d.ref[i] + residual[i], 0.0);
  DeviceBuffer x = Upload(d.x, t), w = Upload(d.w, t), b = Upload(d.bias, t), r = Upload(residual, t);
  std::vector<float> got =
      BuildAndRun(handle_, spec, {{1, x.get()}, {2, w.get()}, {4, b.get()}, {8, r.get()}}, 7, d.ref.size(), t);
  EXPECT_TRUE(AllClose(got, d.ref, kRtolFp16));
}

// conv → +bias → MAX(x,0) → MIN(x,6): served by runtime-compiled engines (CUDNN_FACTS lesson 1).
FusedGraphSpec ConvBiasRelu6Spec() {
  const IoType t = IoType::kHalf;
  FusedGraphSpec spec = ConvBiasSpec(Precision::kFp16);
  spec.extra.push_back(Scalar(10, 4, 0.0));
  spec.extra.push_back(Nhwc(11, {kN, kK, kH, kW}, IoType::kFloat, true));
  spec.extra.push_back(Scalar(12, 4, 6.0));
  spec.extra.push_back(Nhwc(7, {kN, kK, kH, kW}, t));
  spec.epilogue.push_back({"MAX", 5, 10, 11});
  spec.epilogue.push_back({"MIN", 11, 12, 7});
  return spec;
}

ConvData ConvBiasRelu6Data() {
  const IoType t = IoType::kHalf;
  ConvData d = MakeConvData(t);
  // Spread the pre-activation over [-8, 8] so both clips are exercised.
  for (float& b : d.bias) b = RoundTo(t, b * 16.0f);
  const View4 xv{{kN, kC, kH, kW}, ChannelsLastStrides({kN, kC, kH, kW})};
  const View4 wv{{kK, kC, 3, 3}, ChannelsLastStrides({kK, kC, 3, 3})};
  const View4 yv{{kN, kK, kH, kW}, ChannelsLastStrides({kN, kK, kH, kW})};
  d.ref = ConvRef(d.x, xv, d.w, wv, yv, {1, 1, 1, 1, 1}, &d.bias);
  for (double& v : d.ref) v = std::min(std::max(v, 0.0), 6.0);
  return d;
}

TEST_F(FusedGraphGpuTest, ConvBiasRelu6AsMaxMin) {
  const IoType t = IoType::kHalf;
  ConvData d = ConvBiasRelu6Data();
  DeviceBuffer x = Upload(d.x, t), w = Upload(d.w, t), b = Upload(d.bias, t);
  std::vector<float> got =
      BuildAndRun(handle_, ConvBiasRelu6Spec(), {{1, x.get()}, {2, w.get()}, {4, b.get()}}, 7, d.ref.size(), t);
  EXPECT_TRUE(AllClose(got, d.ref, kRtolFp16));
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The runtime-compiled ReLU6 plan, serialized and loaded back with the handle: the loaded plan
// runs the same engine and computes the right output. ONNXRUN_PLAN_BLOB=<file> splits this over
// two processes: when the file does not exist the test builds and writes the blob there; when it
// does, it only loads — the load time of a fresh process, i.e. whether loading compiles again.
// Autotuning's default: several configs finalize, but runtime-compiled ones only as the first
// (ReLU6 as MAX + MIN goes to runtime-compiled engines first, CUDNN_FACTS.md): each alternative is
// precompiled (the test prints whether runtime-compiled candidates were skipped).
TEST_F(FusedGraphGpuTest, PrecompiledAlternativesOnly) {
  BuildOptions options;
  options.max_plans = 4;
  options.precompiled_alternatives_only = true;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(handle_, ConvBiasRelu6Spec(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::cout << "  first: " << plan->engine_description() << ", " << plan->plan_count() << " plans\n";
  for (size_t i = 1; i < plan->plan_count(); ++i) {
    ASSERT_TRUE(plan->SelectPlan(i).ok());
    EXPECT_EQ(plan->engine_description().find("runtime-compiled"), std::string::npos) << plan->engine_description();
    ASSERT_TRUE(plan->SelectPlan(i).ok());
  }
  const std::string& log = plan->rejection_log();
  const size_t skipped = log.find("not timed (runtime-compiled alternative)");
  std::cout << "  " << (skipped == std::string::npos ? "no" : "some") << " runtime-compiled alternatives skipped\n";
}

TEST_F(FusedGraphGpuTest, RuntimeCompiledPlanLoadsFromSerialized) {
  const IoType t = IoType::kHalf;
  const FusedGraphSpec spec = ConvBiasRelu6Spec();
  const char* path = std::getenv("ONNXRUN_PLAN_BLOB");
  std::string blob;
  std::optional<EngineCandidate> built_config;
  if (std::ifstream in(path ? path : "", std::ios::binary); path != nullptr && in) {
    std::stringstream bytes;
    bytes << in.rdbuf();
    blob = bytes.str();
    std::cout << "  loading the blob of another process: " << path << "\n";
  } else {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<FusedGraphPlan> built = FusedGraphPlan::Build(handle_, spec, {});
    ASSERT_TRUE(built.ok()) << built.status();
    std::cout << "  build " << MsSince(start) << " ms: " << built->engine_description() << "\n";
    absl::StatusOr<std::string> serialized = built->SerializedPlan();
    ASSERT_TRUE(serialized.ok()) << serialized.status();
    blob = *serialized;
    for (const EngineCandidate& c : built->candidates()) {
      if (c.ToString() == built->engine_description()) built_config = c;
    }
    if (path != nullptr) std::ofstream(path, std::ios::binary) << blob;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<FusedGraphPlan> loaded = FusedGraphPlan::FromSerialized(handle_, spec, blob, {});
  const double load_ms = MsSince(start);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->candidates().size(), 1u);
  const EngineCandidate& got_config = loaded->candidates()[0];
  EXPECT_TRUE(got_config.runtime_compiled()) << loaded->engine_description();
  if (built_config.has_value()) {
    // Same engine and every knob heuristics chose; the loaded config may add knobs left unset.
    EXPECT_EQ(got_config.engine_id, built_config->engine_id);
    EXPECT_EQ(got_config.rung, built_config->rung);
    for (const auto& knob : built_config->knobs) {
      EXPECT_NE(std::find(got_config.knobs.begin(), got_config.knobs.end(), knob), got_config.knobs.end())
          << "knob " << knob.first << " of " << built_config->ToString();
    }
  }

  ConvData d = ConvBiasRelu6Data();
  DeviceBuffer x = Upload(d.x, t), w = Upload(d.w, t), b = Upload(d.bias, t);
  DeviceBuffer y(d.ref.size() * ElementBytes(t)), ws(loaded->workspace_bytes());
  const auto run_start = std::chrono::steady_clock::now();
  absl::Status run = loaded->Execute(handle_, {{1, x.get()}, {2, w.get()}, {4, b.get()}, {7, y.get()}}, ws.get());
  ASSERT_TRUE(run.ok()) << run;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double run_ms = MsSince(run_start);
  std::vector<float> got = Download(y, d.ref.size(), t);
  std::cout << "  load " << load_ms << " ms, first execute (synchronized) " << run_ms << " ms, blob " << blob.size()
            << " bytes: " << loaded->engine_description() << "\n";
  EXPECT_TRUE(AllClose(got, d.ref, kRtolFp16));
}

// matmul + bias + GELU (erf, or the tanh form) as one graph, against a double reference.
void RunMatMulBiasGelu(cudnnHandle_t handle, IoType t, bool tanh_form) {
  constexpr int64_t kB = 1, kM = 32, kKd = 256, kNd = 128;
  FusedGraphSpec spec;
  spec.anchor = FusedGraphSpec::kMatMul;
  spec.x = {1, {kB, kM, kKd}, RowMajorStrides({kB, kM, kKd}), t};
  spec.w = {2, {kB, kKd, kNd}, RowMajorStrides({kB, kKd, kNd}), t};
  spec.y = {3, {kB, kM, kNd}, RowMajorStrides({kB, kM, kNd}), IoType::kFloat, true};
  spec.extra.push_back({4, {1, 1, kNd}, RowMajorStrides({1, 1, kNd}), t});
  spec.extra.push_back({5, {kB, kM, kNd}, RowMajorStrides({kB, kM, kNd}), IoType::kFloat, true});
  spec.extra.push_back({7, {kB, kM, kNd}, RowMajorStrides({kB, kM, kNd}), t});
  spec.epilogue = {{"ADD", 3, 4, 5}, {tanh_form ? "GELU_APPROX_TANH_FWD" : "GELU_FWD", 5, -1, 7}};
  const float scale = 1.0f / std::sqrt(float{kKd});
  const std::vector<float> a = Random(kM * kKd, t, 5), bm = Random(kKd * kNd, t, 6, -scale, scale),
                           bias = Random(kNd, t, 7);
  std::vector<double> ref(kM * kNd);
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t n = 0; n < kNd; ++n) {
      double acc = bias[n];
      for (int64_t k = 0; k < kKd; ++k) acc += double{a[m * kKd + k]} * bm[k * kNd + n];
      const double inner = tanh_form ? std::tanh(std::sqrt(2 / M_PI) * (acc + 0.044715 * acc * acc * acc))
                                     : std::erf(acc / std::sqrt(2.0));
      ref[m * kNd + n] = 0.5 * acc * (1.0 + inner);
    }
  DeviceBuffer da = Upload(a, t), db = Upload(bm, t), dbias = Upload(bias, t);
  std::vector<float> got =
      BuildAndRun(handle, spec, {{1, da.get()}, {2, db.get()}, {4, dbias.get()}}, 7, ref.size(), t);
  EXPECT_TRUE(AllClose(got, ref, t == IoType::kBFloat16 ? kRtolBf16 : kRtolFp16));
}

TEST_F(FusedGraphGpuTest, MatMulBiasGelu) { RunMatMulBiasGelu(handle_, IoType::kHalf, false); }
TEST_F(FusedGraphGpuTest, MatMulBiasTanhGelu) { RunMatMulBiasGelu(handle_, IoType::kHalf, true); }
TEST_F(FusedGraphGpuTest, MatMulBiasGeluBf16) { RunMatMulBiasGelu(handle_, IoType::kBFloat16, false); }

// ---- legacy ----

struct LegacyConvCase {
  const char* name;
  int c, k, groups, stride;
  IoType type;
  Layout layout;
  LegacyActivation act;
  double rtol;
};

class LegacyConvTest : public GpuTest, public ::testing::WithParamInterface<LegacyConvCase> {};

TEST_P(LegacyConvTest, MatchesReference) {
  const LegacyConvCase& tc = GetParam();
  LegacyConvSpec spec;
  spec.x = {2, tc.c, 14, 14};
  spec.k = tc.k;
  spec.r = spec.s = 3;
  spec.groups = tc.groups;
  spec.pad_h = spec.pad_w = 1;
  spec.stride_h = spec.stride_w = tc.stride;
  spec.layout = tc.layout;
  spec.type = tc.type;
  spec.has_bias = true;
  spec.activation = tc.act;
  absl::StatusOr<LegacyConv> conv = LegacyConv::Create(handle_, spec);
  ASSERT_TRUE(conv.ok()) << conv.status();
  std::cout << "  " << tc.name << ": " << conv->description() << "\n";
  const Shape4 y = conv->output_shape();
  const int cg = tc.c / tc.groups;
  auto strides = [&](std::vector<int64_t> d) {
    return tc.layout == Layout::kNHWC ? ChannelsLastStrides(d) : RowMajorStrides(d);
  };
  const View4 xv{{2, tc.c, 14, 14}, strides({2, tc.c, 14, 14})};
  const View4 wv{{tc.k, cg, 3, 3}, strides({tc.k, cg, 3, 3})};
  const View4 yv{{y.n, y.c, y.h, y.w}, strides({y.n, y.c, y.h, y.w})};
  const float scale = 1.0f / std::sqrt(float(cg * 9));
  const std::vector<float> x = Random(xv.size(), tc.type, 11), w = Random(wv.size(), tc.type, 12, -scale, scale),
                           bias = Random(tc.k, tc.type, 13, -4, 4);  // reaches both ReLU6 clips
  std::vector<double> ref = ConvRef(x, xv, w, wv, yv, {tc.groups, 1, 1, tc.stride, tc.stride}, &bias);
  for (double& v : ref) {
    if (tc.act != LegacyActivation::kNone) v = std::max(v, 0.0);
    if (tc.act == LegacyActivation::kRelu6) v = std::min(v, 6.0);
  }
  DeviceBuffer dx = Upload(x, tc.type), dw = Upload(w, tc.type), db = Upload(bias, tc.type);
  DeviceBuffer dy(yv.size() * ElementBytes(tc.type)), ws(conv->workspace_bytes());
  absl::Status run = conv->Run(handle_, dx.get(), dw.get(), db.get(), dy.get(), ws.get());
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_TRUE(AllClose(Download(dy, yv.size(), tc.type), ref, tc.rtol));
}

INSTANTIATE_TEST_SUITE_P(Cases, LegacyConvTest,
                         ::testing::Values(LegacyConvCase{"depthwise_relu6_fp16_nhwc", 32, 32, 32, 1, IoType::kHalf,
                                                          Layout::kNHWC, LegacyActivation::kRelu6, kRtolFp16},
                                           LegacyConvCase{"depthwise_s2_relu6_fp16_nhwc", 32, 32, 32, 2, IoType::kHalf,
                                                          Layout::kNHWC, LegacyActivation::kRelu6, kRtolFp16},
                                           LegacyConvCase{"grouped4_relu_fp32_nchw", 16, 32, 4, 1, IoType::kFloat,
                                                          Layout::kNCHW, LegacyActivation::kRelu, kRtolFp32},
                                           LegacyConvCase{"depthwise_relu_fp32_nhwc", 16, 16, 16, 1, IoType::kFloat,
                                                          Layout::kNHWC, LegacyActivation::kRelu, kRtolFp32}),
                         [](const auto& info) { return std::string(info.param.name); });

using LegacyGpuTest = GpuTest;

void BatchNormCase(cudnnHandle_t handle, Layout layout, IoType t, double rtol) {
  const Shape4 s{2, 16, 7, 5};
  absl::StatusOr<BatchNormInference> bn = BatchNormInference::Create(s, layout, t, 1e-5);
  ASSERT_TRUE(bn.ok()) << bn.status();
  const std::vector<int64_t> dims = {s.n, s.c, s.h, s.w};
  const View4 v{dims, layout == Layout::kNHWC ? ChannelsLastStrides(dims) : RowMajorStrides(dims)};
  const std::vector<float> x = Random(v.size(), t, 21), scale = Random(s.c, IoType::kFloat, 22),
                           bias = Random(s.c, IoType::kFloat, 23), mean = Random(s.c, IoType::kFloat, 24),
                           var = Random(s.c, IoType::kFloat, 25, 0.25f, 2.0f);
  std::vector<double> ref(v.size());
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) {
          const int64_t i = v.at(n, c, h, w);
          ref[i] = scale[c] * (x[i] - double{mean[c]}) / std::sqrt(double{var[c]} + 1e-5) + bias[c];
        }
  DeviceBuffer dx = Upload(x, t), dy(v.size() * ElementBytes(t)), dscale = Upload(scale, IoType::kFloat),
               dbias = Upload(bias, IoType::kFloat), dmean = Upload(mean, IoType::kFloat),
               dvar = Upload(var, IoType::kFloat);
  absl::Status run = bn->Run(handle, dx.get(), dy.get(), dscale.get(), dbias.get(), dmean.get(), dvar.get());
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_TRUE(AllClose(Download(dy, v.size(), t), ref, rtol));
}

TEST_F(LegacyGpuTest, BatchNormInferenceNchwFp32) { BatchNormCase(handle_, Layout::kNCHW, IoType::kFloat, kRtolFp32); }
TEST_F(LegacyGpuTest, BatchNormInferenceNhwcFp16) { BatchNormCase(handle_, Layout::kNHWC, IoType::kHalf, kRtolFp16); }

void PoolCase(cudnnHandle_t handle, PoolMode mode, IoType t, double rtol) {
  PoolSpec spec{{2, 16, 9, 9}, Layout::kNHWC, t, mode, 3, 3, 1, 1, 2, 2};
  absl::StatusOr<Pooling> pool = Pooling::Create(spec);
  ASSERT_TRUE(pool.ok()) << pool.status();
  const Shape4 y = pool->output_shape();
  ASSERT_EQ(y, (Shape4{2, 16, 5, 5}));
  const View4 xv{{2, 16, 9, 9}, ChannelsLastStrides({2, 16, 9, 9})};
  const View4 yv{{2, 16, 5, 5}, ChannelsLastStrides({2, 16, 5, 5})};
  const std::vector<float> x = Random(xv.size(), t, 31);
  std::vector<double> ref(yv.size());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 16; ++c)
      for (int oh = 0; oh < 5; ++oh)
        for (int ow = 0; ow < 5; ++ow) {
          double best = -1e30, sum = 0;
          int count = 0;
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              const int ih = oh * 2 - 1 + r, iw = ow * 2 - 1 + s;
              if (ih < 0 || iw < 0 || ih >= 9 || iw >= 9) continue;
              const double v = x[xv.at(n, c, ih, iw)];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          double out = best;
          if (mode == PoolMode::kAverageIncludePad) out = sum / 9.0;
          if (mode == PoolMode::kAverageExcludePad) out = sum / count;
          ref[yv.at(n, c, oh, ow)] = out;
        }
  DeviceBuffer dx = Upload(x, t), dy(yv.size() * ElementBytes(t));
  absl::Status run = pool->Run(handle, dx.get(), dy.get());
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_TRUE(AllClose(Download(dy, yv.size(), t), ref, rtol));
}

TEST_F(LegacyGpuTest, MaxPoolNhwcFp16) { PoolCase(handle_, PoolMode::kMax, IoType::kHalf, kRtolFp16); }
TEST_F(LegacyGpuTest, AvgPoolIncludePadNhwcFp32) {
  PoolCase(handle_, PoolMode::kAverageIncludePad, IoType::kFloat, kRtolFp32);
}
TEST_F(LegacyGpuTest, AvgPoolExcludePadNhwcFp32) {
  PoolCase(handle_, PoolMode::kAverageExcludePad, IoType::kFloat, kRtolFp32);
}

TEST_F(LegacyGpuTest, SoftmaxFp32) {
  constexpr int kRows = 4, kCols = 1000;
  absl::StatusOr<Softmax> softmax = Softmax::Create(kRows, kCols, 1, IoType::kFloat, false);
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  const std::vector<float> x = Random(kRows * kCols, IoType::kFloat, 41, -8, 8);
  std::vector<double> ref(x.size());
  for (int r = 0; r < kRows; ++r) {
    double mx = -1e30, sum = 0;
    for (int c = 0; c < kCols; ++c) mx = std::max(mx, double{x[r * kCols + c]});
    for (int c = 0; c < kCols; ++c) sum += std::exp(x[r * kCols + c] - mx);
    for (int c = 0; c < kCols; ++c) ref[r * kCols + c] = std::exp(x[r * kCols + c] - mx) / sum;
  }
  DeviceBuffer dx = Upload(x, IoType::kFloat), dy(x.size() * 4);
  absl::Status run = softmax->Run(handle_, dx.get(), dy.get());
  ASSERT_TRUE(run.ok()) << run;
  // Probabilities are << 1: compare relative to each value, not to max(|v|, 1).
  const std::vector<float> got = Download(dy, x.size(), IoType::kFloat);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], ref[i], kRtolFp32 * ref[i] + 1e-9) << "element " << i;
  }
}

TEST_F(LegacyGpuTest, ActivationRelu6InPlaceFp16) {
  constexpr int64_t kCount = 4096;
  absl::StatusOr<Activation> act = Activation::Create(kCount, IoType::kHalf, LegacyActivation::kRelu6);
  ASSERT_TRUE(act.ok()) << act.status();
  const std::vector<float> x = Random(kCount, IoType::kHalf, 51, -10, 10);
  std::vector<double> ref(kCount);
  for (int64_t i = 0; i < kCount; ++i) ref[i] = std::min(std::max(double{x[i]}, 0.0), 6.0);
  DeviceBuffer d = Upload(x, IoType::kHalf);
  absl::Status run = act->Run(handle_, d.get(), d.get());
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_TRUE(AllClose(Download(d, kCount, IoType::kHalf), ref, kRtolFp16));
}

}  // namespace
}  // namespace cudnn::testing
