// stem_bench: times the ways cuDNN can run resnet50's fp16 stem (7x7/2 conv, 64 filters, + bias +
// ReLU, NHWC, input channels padded to 4 or 8) on the GPU: the legacy API (heuristic and
// exhaustive algorithm choice) and fused operation graphs with the ReLU as MAX(x, 0) or RELU_FWD,
// every engine config heuristics offer that finalizes. Prints one table row per way (CUDA-event
// median of 20 runs). Usage: stem_bench [BATCH...] (default 32 256). Exits 0 without a GPU.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/legacy.h"

namespace {

constexpr int kK = 64, kH = 224, kR = 7, kP = 112;

struct Buffers {
  void *x = nullptr, *w = nullptr, *b = nullptr, *y = nullptr, *ws = nullptr;
  size_t ws_bytes = size_t{512} << 20;
};

// Median GPU milliseconds of run() over 20 calls after 3 warm-up calls; -1 when a call fails.
double TimeMs(const std::function<bool()>& run) {
  for (int i = 0; i < 3; ++i) {
    if (!run()) return -1;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(start);
    if (!run()) return -1;
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

cudnn::TensorDesc Nhwc(int64_t uid, std::vector<int64_t> dims, cudnn::IoType t, bool is_virtual = false) {
  return {uid, dims, cudnn::ChannelsLastStrides(dims), t, is_virtual};
}

// conv (x 1, w 2) -> 3 (virtual) + bias 4 -> 5 (virtual) -> relu -> y 7.
cudnn::FusedGraphSpec StemSpec(int n, int c, const std::string& relu) {
  using cudnn::IoType;
  cudnn::FusedGraphSpec spec;
  spec.x = Nhwc(1, {n, c, kH, kH}, IoType::kHalf);
  spec.w = Nhwc(2, {kK, c, kR, kR}, IoType::kHalf);
  spec.y = Nhwc(3, {n, kK, kP, kP}, IoType::kFloat, true);
  spec.conv = {{3, 3}, {3, 3}, {2, 2}, {1, 1}};
  spec.extra.push_back(Nhwc(4, {1, kK, 1, 1}, IoType::kHalf));
  spec.extra.push_back(Nhwc(5, {n, kK, kP, kP}, IoType::kFloat, true));
  spec.extra.push_back(Nhwc(7, {n, kK, kP, kP}, IoType::kHalf));
  spec.epilogue.push_back({"ADD", 3, 4, 5});
  if (relu == "MAX") {
    spec.extra.push_back({6, {1, 1, 1, 1}, {1, 1, 1, 1}, IoType::kFloat, false, true, 0.0});
    spec.epilogue.push_back({"MAX", 5, 6, 7});
  } else {
    spec.epilogue.push_back({"RELU_FWD", 5, -1, 7});
  }
  return spec;
}

void FusedRows(cudnnHandle_t handle, const Buffers& buf, int n, int c, const std::string& relu) {
  cudnn::BuildOptions options;
  options.max_plans = 24;
  absl::StatusOr<cudnn::FusedGraphPlan> plan = cudnn::FusedGraphPlan::Build(handle, StemSpec(n, c, relu), options);
  if (!plan.ok()) {
    std::printf("| %d | %d | graph %s | no plan: %s | - |\n", n, c, relu.c_str(),
                std::string(plan.status().message()).substr(0, 80).c_str());
    return;
  }
  const std::map<int64_t, void*> ptrs = {{1, buf.x}, {2, buf.w}, {4, buf.b}, {7, buf.y}};
  const size_t count = plan->plan_count();
  for (size_t i = 0; i < count; ++i) {
    if (i > 0 && !plan->SelectPlan(i).ok()) continue;
    const bool fits = plan->workspace_bytes() <= buf.ws_bytes;
    const double ms = fits ? TimeMs([&] { return plan->Execute(handle, ptrs, buf.ws).ok(); }) : -1;
    std::printf("| %d | %d | graph %s #%zu | %s | %.3f |\n", n, c, relu.c_str(), i, plan->engine_description().c_str(),
                ms);
    if (i > 0) plan->SelectPlan(i).IgnoreError();  // restore the order
  }
}

void LegacyRows(cudnnHandle_t handle, const Buffers& buf, int n, int c) {
  for (bool exhaustive : {false, true}) {
    cudnn::LegacyConvSpec spec;
    spec.x = {n, c, kH, kH};
    spec.k = kK, spec.r = kR, spec.s = kR, spec.pad_h = spec.pad_w = 3, spec.stride_h = spec.stride_w = 2;
    spec.has_bias = true, spec.activation = cudnn::LegacyActivation::kRelu, spec.exhaustive_search = exhaustive;
    absl::StatusOr<cudnn::LegacyConv> conv = cudnn::LegacyConv::Create(handle, spec);
    if (!conv.ok()) {
      std::printf("| %d | %d | legacy | %s | - |\n", n, c, std::string(conv.status().message()).c_str());
      continue;
    }
    const double ms = TimeMs([&] { return conv->Run(handle, buf.x, buf.w, buf.b, buf.y, buf.ws).ok(); });
    std::printf("| %d | %d | legacy %s | %s | %.3f |\n", n, c, exhaustive ? "exhaustive" : "heuristic",
                conv->description().c_str(), ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("stem_bench: no GPU\n");
    return 0;
  }
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {32, 256};
  cudnnHandle_t handle;
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) return 1;
  std::printf("| batch | C | way | engine | ms |\n|---|---|---|---|---|\n");
  for (int n : batches) {
    Buffers buf;
    const size_t x_bytes = size_t{2} * n * 8 * kH * kH, y_bytes = size_t{2} * n * kK * kP * kP;
    cudaMalloc(&buf.x, x_bytes);
    cudaMalloc(&buf.w, 2 * kK * 8 * kR * kR);
    cudaMalloc(&buf.b, 2 * kK);
    cudaMalloc(&buf.y, y_bytes);
    cudaMalloc(&buf.ws, buf.ws_bytes);
    cudaMemset(buf.x, 0, x_bytes);
    cudaMemset(buf.w, 0, 2 * kK * 8 * kR * kR);
    cudaMemset(buf.b, 0, 2 * kK);
    for (int c : {4, 8}) {
      LegacyRows(handle, buf, n, c);
      FusedRows(handle, buf, n, c, "MAX");
      FusedRows(handle, buf, n, c, "RELU_FWD");
    }
    for (void* p : {buf.x, buf.w, buf.b, buf.y, buf.ws}) cudaFree(p);
  }
  cudnnDestroy(handle);
  return 0;
}
