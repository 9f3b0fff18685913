// kernels/cudnn/cpu_test.cc: what needs no GPU — status conversion, backend descriptors, spec
// validation, the operation graph of conv3x3 64→64 NHWC fp16 + bias + MAX(x,0), heuristics and a
// precompiled plan built from the H100 device-properties JSON (cuDNN >= 9.8), that plan serialized
// and loaded back, and the plan-blob envelope on garbage. Where this machine's
// cuDNN refuses a step for lack of a device, the test skips with cuDNN's reason.
#include <cudnn.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "kernels/cudnn/descriptor.h"
#include "kernels/cudnn/engine.h"
#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/legacy.h"
#include "kernels/cudnn/plan_serialization.h"
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

constexpr char kDeviceProps[] = "kernels/cudnn/testdata/h100_device_properties.json";

// conv3x3 64→64 on 56x56, N=1, NHWC fp16, + bias [1,K,1,1] + MAX(x, 0) with a by-value zero.
FusedGraphSpec ConvBiasReluSpec() {
  FusedGraphSpec spec;
  spec.anchor = FusedGraphSpec::kConv;
  const std::vector<int64_t> xd = {1, 64, 56, 56}, wd = {64, 64, 3, 3}, bd = {1, 64, 1, 1};
  spec.x = {1, xd, ChannelsLastStrides(xd), IoType::kHalf};
  spec.w = {2, wd, ChannelsLastStrides(wd), IoType::kHalf};
  spec.y = {3, xd, ChannelsLastStrides(xd), IoType::kFloat, /*is_virtual=*/true};
  spec.conv = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
  spec.extra.push_back({4, bd, ChannelsLastStrides(bd), IoType::kHalf});
  spec.extra.push_back({5, xd, ChannelsLastStrides(xd), IoType::kFloat, /*is_virtual=*/true});
  TensorDesc zero{6, {1, 1, 1, 1}, {1, 1, 1, 1}, IoType::kFloat};
  zero.by_value = true;
  spec.extra.push_back(zero);
  spec.extra.push_back({7, xd, ChannelsLastStrides(xd), IoType::kHalf});
  spec.epilogue = {{"ADD", 3, 4, 5}, {"MAX", 5, 6, 7}};
  return spec;
}

bool NeedsDevice(const absl::Status& s) {
  return s.code() == absl::StatusCode::kFailedPrecondition ||
         s.message().find("NOT_INITIALIZED") != std::string::npos ||
         s.message().find("ARCH_MISMATCH") != std::string::npos;
}

TEST(StatusTest, CudnnErrorNamesCallAndLocation) {
  absl::Status s = ToStatus(CUDNN_STATUS_BAD_PARAM, "cudnnFoo(x)", "file.cc", 42);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cudnnFoo(x)"), std::string::npos);
  EXPECT_NE(s.message().find("file.cc:42"), std::string::npos);
  EXPECT_TRUE(ToStatus(CUDNN_STATUS_SUCCESS, "x", "f", 1).ok());
  EXPECT_EQ(CodeOf(CUDNN_STATUS_NOT_SUPPORTED_SHAPE), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CodeOf(CUDNN_STATUS_NOT_INITIALIZED), absl::StatusCode::kFailedPrecondition);
}

TEST(StatusTest, CudaErrorNamesCall) {
  absl::Status s = ToStatus(cudaErrorNoDevice, "cudaMalloc(&p, 4)", "f.cc", 7);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cudaMalloc(&p, 4)"), std::string::npos);
  EXPECT_NE(s.message().find("cudaErrorNoDevice"), std::string::npos);
}

TEST(DescriptorTest, TensorCreatesFinalizesAndMoves) {
  absl::StatusOr<BackendDescriptor> t = BackendDescriptor::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  ASSERT_TRUE(t.ok()) << t.status();
  const std::vector<int64_t> dims = {1, 3, 8, 8}, strides = ChannelsLastStrides(dims);
  EXPECT_EQ(strides, (std::vector<int64_t>{192, 1, 24, 3}));
  ASSERT_TRUE(t->Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_DATA_FLOAT).ok());
  ASSERT_TRUE(t->Set(CUDNN_ATTR_TENSOR_DIMENSIONS, dims).ok());
  ASSERT_TRUE(t->Set(CUDNN_ATTR_TENSOR_STRIDES, strides).ok());
  ASSERT_TRUE(t->Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, int64_t{1}).ok());
  ASSERT_TRUE(t->Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, int64_t{16}).ok());
  absl::Status fin = t->Finalize();
  ASSERT_TRUE(fin.ok()) << fin;
  EXPECT_TRUE(t->finalized());
  absl::StatusOr<int64_t> uid = t->Get<int64_t>(CUDNN_ATTR_TENSOR_UNIQUE_ID);
  ASSERT_TRUE(uid.ok()) << uid.status();
  EXPECT_EQ(*uid, 1);
  BackendDescriptor moved = std::move(*t);
  EXPECT_EQ(t->get(), nullptr);
  EXPECT_NE(moved.get(), nullptr);
  EXPECT_FALSE(t->Finalize().ok());  // empty after the move
}

TEST(DescriptorTest, FinalizeWithoutRequiredAttributesFailsWithText) {
  absl::StatusOr<BackendDescriptor> t = BackendDescriptor::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  ASSERT_TRUE(t.ok());
  absl::Status s = t->Finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudnnBackendFinalize"), std::string::npos) << s;
}

TEST(SpecTest, RejectsMalformedSpecs) {
  FusedGraphSpec dup = ConvBiasReluSpec();
  dup.extra[0].uid = 1;
  EXPECT_EQ(FusedGraphPlan::Build(nullptr, dup, {}).status().code(), absl::StatusCode::kInvalidArgument);
  FusedGraphSpec mode = ConvBiasReluSpec();
  mode.epilogue[1].mode = "RELU6";
  EXPECT_EQ(FusedGraphPlan::Build(nullptr, mode, {}).status().code(), absl::StatusCode::kInvalidArgument);
  FusedGraphSpec order = ConvBiasReluSpec();
  std::swap(order.epilogue[0], order.epilogue[1]);  // MAX reads uid 5 before ADD defines it
  EXPECT_EQ(FusedGraphPlan::Build(nullptr, order, {}).status().code(), absl::StatusCode::kInvalidArgument);
  FusedGraphSpec pads = ConvBiasReluSpec();
  pads.conv.pads_end = {1};
  EXPECT_EQ(FusedGraphPlan::Build(nullptr, pads, {}).status().code(), absl::StatusCode::kInvalidArgument);
  FusedGraphSpec unary = ConvBiasReluSpec();
  unary.epilogue[1] = {"RELU_FWD", 5, 6, 7};  // a unary mode with a second input
  EXPECT_EQ(FusedGraphPlan::Build(nullptr, unary, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DevicePropsTest, LoadsJson) {
  absl::StatusOr<BackendDescriptor> props = LoadDeviceProperties(kDeviceProps);
  if (!props.ok() && NeedsDevice(props.status())) GTEST_SKIP() << props.status();
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_TRUE(props->finalized());
  EXPECT_EQ(LoadDeviceProperties("no/such/file.json").status().code(), absl::StatusCode::kNotFound);
}

// conv + bias + RELU_FWD: the same graph with the precompiled conv+bias+activation epilogue.
FusedGraphSpec ConvBiasReluFwdSpec() {
  FusedGraphSpec spec = ConvBiasReluSpec();
  spec.extra.erase(spec.extra.begin() + 2);  // no by-value zero
  spec.epilogue[1] = {"RELU_FWD", 5, -1, 7};
  return spec;
}

void PrintCandidates(const FusedGraphPlan& plan) {
  std::cout << "candidates:\n";
  for (const EngineCandidate& c : plan.candidates()) std::cout << "  " << c.ToString() << "\n";
  std::cout << "log:\n" << plan.rejection_log();
}

TEST(FusedGraphCpuTest, MaxEpilogueGraphFinalizesAndHeuristicsRun) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  options.build_plan = false;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(nullptr, ConvBiasReluSpec(), options);
  if (!plan.ok() && NeedsDevice(plan.status())) GTEST_SKIP() << plan.status();
  ASSERT_TRUE(plan.ok()) << plan.status();  // the operation graph finalized; heuristics ran
  EXPECT_FALSE(plan->has_plan());
  EXPECT_EQ(plan->rung(), -1);
  EXPECT_EQ(plan->io_uids(), (std::vector<int64_t>{1, 2, 4, 7}));  // by-value 6 is held inside
  PrintCandidates(*plan);
  if (plan->candidates().empty()) {
    // MAX(x,0) is served by runtime-compiled engines only (CUDNN_FACTS lesson 1); without libcuda
    // cuDNN offers none, and the log must say why.
    EXPECT_NE(plan->rejection_log().find("libcuda"), std::string::npos) << plan->rejection_log();
    GTEST_SKIP() << "no runtime-compiled engines on this machine: " << plan->rejection_log();
  }
  for (const EngineCandidate& c : plan->candidates()) EXPECT_GE(c.engine_id, 0);
}

TEST(FusedGraphCpuTest, ReluFwdHeuristicsReturnConfigs) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  options.build_plan = false;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(nullptr, ConvBiasReluFwdSpec(), options);
  if (!plan.ok() && NeedsDevice(plan.status())) GTEST_SKIP() << plan.status();
  ASSERT_TRUE(plan.ok()) << plan.status();
  PrintCandidates(*plan);
  ASSERT_FALSE(plan->candidates().empty()) << plan->rejection_log();
  EXPECT_EQ(plan->candidates()[0].rung, 0);
  for (const EngineCandidate& c : plan->candidates()) {
    EXPECT_GE(c.engine_id, 0);
    EXPECT_NE(c.ToString().find("engine "), std::string::npos);
  }
}

TEST(FusedGraphCpuTest, PrecompiledPlanFinalizesWithoutGpu) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(nullptr, ConvBiasReluFwdSpec(), options);
  if (!plan.ok() && NeedsDevice(plan.status())) GTEST_SKIP() << plan.status();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->has_plan());
  EXPECT_GE(plan->rung(), 0);
  EXPECT_FALSE(plan->engine_description().empty());
  EXPECT_EQ(plan->engine_description().find("runtime-compiled"), std::string::npos);
  // Executing needs a GPU: without a handle it must fail cleanly, not crash.
  EXPECT_FALSE(plan->Execute(nullptr, {}, nullptr).ok());
  std::cout << "chosen: " << plan->engine_description() << ", workspace " << plan->workspace_bytes() << "\nlog:\n"
            << plan->rejection_log();
}

// max_plans: several configs finalize (precompiled ones do without a GPU); SelectPlan switches the
// one Execute would run and switches back; DropAlternatives keeps only the selected plan.
TEST(FusedGraphCpuTest, SeveralPlansFinalizeForAutotuning) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  options.max_plans = 3;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(nullptr, ConvBiasReluFwdSpec(), options);
  if (!plan.ok() && NeedsDevice(plan.status())) GTEST_SKIP() << plan.status();
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GE(plan->plan_count(), 2u) << plan->rejection_log();
  EXPECT_LE(plan->plan_count(), 3u);
  const std::string first = plan->engine_description();
  ASSERT_TRUE(plan->SelectPlan(1).ok());
  const std::string second = plan->engine_description();
  EXPECT_NE(first, second);
  ASSERT_TRUE(plan->SelectPlan(1).ok());
  EXPECT_EQ(plan->engine_description(), first);
  EXPECT_FALSE(plan->SelectPlan(plan->plan_count()).ok());
  ASSERT_TRUE(plan->SelectPlan(1).ok());
  plan->DropAlternatives();
  EXPECT_EQ(plan->plan_count(), 1u);
  EXPECT_EQ(plan->engine_description(), second);
}

// Autotuning's alternatives may not compute less exactly or less reproducibly than the first config:
// a note the first lacks is named; the same notes, or fewer, pass.
TEST(EngineCandidateTest, AlternativeWithWorseNumericsIsNamed) {
  EngineCandidate first, alternative;
  first.numerical_notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
  alternative.numerical_notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION};
  EXPECT_NE(NumericsWorseThan(alternative, first).find("reduced_precision_reduction"), std::string::npos);
  EXPECT_EQ(NumericsWorseThan(first, alternative), "");
  EXPECT_EQ(NumericsWorseThan(first, first), "");
  alternative.numerical_notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC};
  EXPECT_NE(NumericsWorseThan(alternative, first).find("nondeterministic"), std::string::npos);
  alternative.numerical_notes = {CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4};
  EXPECT_NE(NumericsWorseThan(alternative, first).find("winograd_4x4"), std::string::npos);
}

TEST(FusedGraphCpuTest, StrictFp32SkipsTensorCoreEngines) {
  FusedGraphSpec spec = ConvBiasReluFwdSpec();
  spec.x.type = spec.w.type = IoType::kFloat;
  spec.extra[0].type = spec.extra[2].type = IoType::kFloat;
  spec.allow_tf32 = false;
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(nullptr, spec, options);
  if (!plan.ok() && NeedsDevice(plan.status())) GTEST_SKIP() << plan.status();
  if (!plan.ok()) {
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound) << plan.status();
    EXPECT_NE(plan.status().message().find("strict fp32"), std::string::npos);
    return;
  }
  EXPECT_EQ(plan->engine_description().find("tensor_core"), std::string::npos) << plan->engine_description();
  std::cout << "strict fp32: " << plan->engine_description() << "\n";
}

PlanBlob SampleBlob() { return {static_cast<int64_t>(cudnnGetVersion()), 1, 41, "{\"engine\": 41}"}; }

TEST(PlanBlobTest, RoundTrips) {
  const std::string bytes = EncodePlanBlob(SampleBlob());
  absl::StatusOr<PlanBlob> back = DecodePlanBlob(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->cudnn_version, SampleBlob().cudnn_version);
  EXPECT_EQ(back->rung, 1);
  EXPECT_EQ(back->engine_id, 41);
  EXPECT_EQ(back->cudnn_text, SampleBlob().cudnn_text);
  EXPECT_TRUE(CheckPlanBlobVersion(*back).ok());
}

TEST(PlanBlobTest, RejectsGarbageAndOtherVersions) {
  const std::string good = EncodePlanBlob(SampleBlob());
  for (size_t len = 0; len <= good.find('\n') + 1; ++len) {  // every cut up to the text
    EXPECT_EQ(DecodePlanBlob(good.substr(0, len)).status().code(), absl::StatusCode::kInvalidArgument) << len;
  }
  for (const char* bad :
       {"", "\n", "garbage\n{}", "onnxrun-cudnn-plan 2 cudnn=1 rung=0 engine=1\n{}",
        "onnxrun-cudnn-plan 1 cudnn=x rung=0 engine=1\n{}", "onnxrun-cudnn-plan 1 cudnn=1 rung=7 engine=1\n{}",
        "onnxrun-cudnn-plan 1 cudnn=1 engine=1 rung=0\n{}"}) {
    EXPECT_FALSE(DecodePlanBlob(bad).ok()) << bad;
  }
  PlanBlob old = SampleBlob();
  old.cudnn_version -= 100;
  absl::StatusOr<PlanBlob> decoded = DecodePlanBlob(EncodePlanBlob(old));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(CheckPlanBlobVersion(*decoded).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FusedGraphPlan::FromSerialized(nullptr, ConvBiasReluFwdSpec(), EncodePlanBlob(old), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PlanSerializationCpuTest, EmptyOrUnfinalizedDescriptorsFailCleanly) {
  EXPECT_EQ(SerializeExecutionPlan(BackendDescriptor()).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DeserializeExecutionPlan("", BackendDescriptor()).status().code(), absl::StatusCode::kInvalidArgument);
}

// The precompiled conv+bias+RELU_FWD plan, serialized and loaded back for the same device.
TEST(PlanSerializationCpuTest, PrecompiledPlanRoundTripsWithoutGpu) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  const FusedGraphSpec spec = ConvBiasReluFwdSpec();
  absl::StatusOr<FusedGraphPlan> built = FusedGraphPlan::Build(nullptr, spec, options);
  if (!built.ok() && NeedsDevice(built.status())) GTEST_SKIP() << built.status();
  ASSERT_TRUE(built.ok()) << built.status();
  absl::StatusOr<std::string> blob = built->SerializedPlan();
  ASSERT_TRUE(blob.ok()) << blob.status();
  std::cout << "plan blob: " << blob->size() << " bytes, header " << blob->substr(0, blob->find('\n')) << "\n";

  absl::StatusOr<FusedGraphPlan> loaded = FusedGraphPlan::FromSerialized(nullptr, spec, *blob, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->has_plan());
  EXPECT_EQ(loaded->engine_description(), built->engine_description());
  EXPECT_EQ(loaded->rung(), built->rung());
  EXPECT_EQ(loaded->workspace_bytes(), built->workspace_bytes());
  EXPECT_EQ(loaded->io_uids(), built->io_uids());
  ASSERT_EQ(loaded->candidates().size(), 1u);
  // The loaded plan serializes to the same bytes: nothing was lost on the way.
  absl::StatusOr<std::string> again = loaded->SerializedPlan();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *blob);
  EXPECT_FALSE(loaded->Execute(nullptr, {}, nullptr).ok());  // no GPU: fails, does not crash

  // A blob whose header names another engine, and a blob whose cuDNN text is damaged.
  absl::StatusOr<PlanBlob> decoded = DecodePlanBlob(*blob);
  ASSERT_TRUE(decoded.ok());
  PlanBlob wrong_engine = *decoded;
  wrong_engine.engine_id += 1;
  EXPECT_EQ(FusedGraphPlan::FromSerialized(nullptr, spec, EncodePlanBlob(wrong_engine), options).status().code(),
            absl::StatusCode::kDataLoss);
  for (size_t cut : {size_t{1}, decoded->cudnn_text.size() / 2, decoded->cudnn_text.size() - 1}) {
    PlanBlob truncated = *decoded;
    truncated.cudnn_text.resize(cut);
    EXPECT_FALSE(FusedGraphPlan::FromSerialized(nullptr, spec, EncodePlanBlob(truncated), options).ok())
        << "cut at " << cut;
  }
  // No device to load for: refused up front (cuDNN 9.19 would crash in finalize).
  EXPECT_EQ(FusedGraphPlan::FromSerialized(nullptr, spec, *blob, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  PlanBlob garbage = *decoded;
  garbage.cudnn_text = "not json at all";
  EXPECT_FALSE(FusedGraphPlan::FromSerialized(nullptr, spec, EncodePlanBlob(garbage), options).ok());
}

// A plan made for the H100 does not load for a device whose properties differ (one SM fewer
// here): cuDNN compares the plan's GPUProfile with the target device.
TEST(PlanSerializationCpuTest, PlanForAnotherDeviceIsRefused) {
  BuildOptions options;
  options.device_properties_json_path = kDeviceProps;
  absl::StatusOr<FusedGraphPlan> built = FusedGraphPlan::Build(nullptr, ConvBiasReluFwdSpec(), options);
  if (!built.ok() && NeedsDevice(built.status())) GTEST_SKIP() << built.status();
  ASSERT_TRUE(built.ok()) << built.status();
  absl::StatusOr<std::string> blob = built->SerializedPlan();
  ASSERT_TRUE(blob.ok()) << blob.status();

  std::ifstream in(kDeviceProps, std::ios::binary);
  std::stringstream json;
  json << in.rdbuf();
  std::string other = json.str();
  const std::string sm_count = "\"multiProcessorCount\":132";
  const size_t at = other.find(sm_count);
  ASSERT_NE(at, std::string::npos) << "device properties JSON without the H100's SM count";
  other.replace(at, sm_count.size(), "\"multiProcessorCount\":131");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/other_device_properties.json";
  std::ofstream(path, std::ios::binary) << other;
  BuildOptions other_device;
  other_device.device_properties_json_path = path;
  absl::StatusOr<FusedGraphPlan> loaded =
      FusedGraphPlan::FromSerialized(nullptr, ConvBiasReluFwdSpec(), *blob, other_device);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("ARCH_MISMATCH"), std::string::npos) << loaded.status();
}

TEST(LegacyCpuTest, DescriptorsWithoutGpu) {
  absl::StatusOr<Pooling> pool =
      Pooling::Create(PoolSpec{{1, 8, 7, 7}, Layout::kNHWC, IoType::kHalf, PoolMode::kMax, 3, 3, 1, 1, 2, 2});
  if (!pool.ok() && NeedsDevice(pool.status())) GTEST_SKIP() << pool.status();
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(pool->output_shape(), (Shape4{1, 8, 4, 4}));
  EXPECT_TRUE(Softmax::Create(2, 10, 1, IoType::kFloat, false).ok());
  EXPECT_TRUE(Activation::Create(100, IoType::kHalf, LegacyActivation::kRelu6).ok());
  EXPECT_FALSE(Activation::Create(0, IoType::kHalf, LegacyActivation::kRelu).ok());
  EXPECT_TRUE(BatchNormInference::Create({2, 4, 3, 3}, Layout::kNCHW, IoType::kFloat, 1e-5).ok());
}

}  // namespace
}  // namespace cudnn
