// Autotuning a cuDNN plan's engine configs on zero-filled buffers: latency (one execution at a
// time) or throughput (K at once on K streams); see plan_autotune.h.
#include "runtime/plan_autotune.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

// Bytes a tensor of the spec spans (dims and strides in elements).
size_t SpanBytes(const cudnn::TensorDesc& t) {
  int64_t last = 0;
  for (size_t d = 0; d < t.dims.size(); ++d) last += (t.dims[d] - 1) * t.strides[d];
  return static_cast<size_t>(last + 1) * cudnn::ElementBytes(t.type);
}

// The largest workspace any finalized config of `plan` asks for.
size_t LargestWorkspace(cudnn::FusedGraphPlan& plan) {
  size_t bytes = 0;
  for (size_t i = 0; i < plan.plan_count(); ++i) {  // SelectPlan(i) twice: there and back
    plan.SelectPlan(i).IgnoreError();
    bytes = std::max(bytes, plan.workspace_bytes());
    plan.SelectPlan(i).IgnoreError();
  }
  return bytes;
}

// Zero-filled device buffers for `copies` independent executions of one spec: every tensor the
// plan reads or writes, and a workspace, per copy. ok() is false when one could not be allocated.
class TuningBuffers {
 public:
  TuningBuffers(const cudnn::FusedGraphSpec& spec, size_t workspace_bytes, int copies, cudaStream_t stream) {
    std::vector<const cudnn::TensorDesc*> tensors = {&spec.x, &spec.w, &spec.y};
    for (const cudnn::TensorDesc& t : spec.extra) tensors.push_back(&t);
    for (int c = 0; c < copies && ok_; ++c) {
      std::map<int64_t, void*>& ptrs = ptrs_.emplace_back();
      for (const cudnn::TensorDesc* t : tensors) {
        if (!t->is_virtual && !t->by_value) ptrs[t->uid] = Allocate(SpanBytes(*t), stream);
      }
      workspaces_.push_back(workspace_bytes > 0 ? Allocate(workspace_bytes, stream) : nullptr);
    }
  }
  ~TuningBuffers() {
    for (void* p : owned_) cudaFree(p);
  }
  TuningBuffers(const TuningBuffers&) = delete;
  TuningBuffers& operator=(const TuningBuffers&) = delete;

  bool ok() const { return ok_; }
  int copies() const { return static_cast<int>(ptrs_.size()); }
  const std::map<int64_t, void*>& ptrs(int copy) const { return ptrs_[copy]; }
  void* workspace(int copy) const { return workspaces_[copy]; }

 private:
  void* Allocate(size_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<size_t>(bytes, 16)) != cudaSuccess) {
      cudaGetLastError();  // an out-of-memory here is an answer, not a sticky error
      ok_ = false;
      return nullptr;
    }
    owned_.push_back(p);
    if (cudaMemsetAsync(p, 0, bytes, stream) != cudaSuccess) ok_ = false;
    return p;
  }

  std::vector<void*> owned_;
  std::vector<std::map<int64_t, void*>> ptrs_;
  std::vector<void*> workspaces_;
  bool ok_ = true;
};

// Streams forked from a timing stream and joined back into it, so that one timed call runs one
// execution on each at once.
class ForkedStreams {
 public:
  explicit ForkedStreams(int count) {
    if (cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming) != cudaSuccess) ok_ = false;
    for (int i = 0; i < count && ok_; ++i) {
      cudaStream_t s = nullptr;
      cudaEvent_t e = nullptr;
      ok_ = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
            cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess;
      if (s != nullptr) streams_.push_back(s);
      if (e != nullptr) joins_.push_back(e);
    }
  }
  ~ForkedStreams() {
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
    for (cudaEvent_t e : joins_) cudaEventDestroy(e);
    if (fork_ != nullptr) cudaEventDestroy(fork_);
  }
  ForkedStreams(const ForkedStreams&) = delete;
  ForkedStreams& operator=(const ForkedStreams&) = delete;

  bool ok() const { return ok_; }

  // Runs execute(i, stream i) for every forked stream, all after `main`'s work so far; `main`'s
  // later work waits for all of them.
  absl::Status Run(cudaStream_t main, const std::function<absl::Status(int, cudaStream_t)>& execute) {
    absl::Status status = CudaOk(cudaEventRecord(fork_, main), "cudaEventRecord");
    for (size_t i = 0; i < streams_.size() && status.ok(); ++i) {
      status = CudaOk(cudaStreamWaitEvent(streams_[i], fork_, 0), "cudaStreamWaitEvent");
      if (status.ok()) status = execute(static_cast<int>(i), streams_[i]);
      if (status.ok()) status = CudaOk(cudaEventRecord(joins_[i], streams_[i]), "cudaEventRecord");
      if (status.ok()) status = CudaOk(cudaStreamWaitEvent(main, joins_[i], 0), "cudaStreamWaitEvent");
    }
    return status;
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> joins_;
  cudaEvent_t fork_ = nullptr;
  bool ok_ = true;
};

// GPU time in ms of one round (one execution per copy of `buffers`, at once when there are several)
// of the plan's current config; -1 when an execution fails.
double TimeRound(cudnnHandle_t handle, cudaStream_t stream, const cudnn::FusedGraphPlan& plan,
                 const TuningBuffers& buffers, ForkedStreams& forked) {
  auto round = [&]() -> absl::Status {
    if (buffers.copies() == 1) return plan.Execute(handle, buffers.ptrs(0), buffers.workspace(0));
    absl::Status status = forked.Run(stream, [&](int copy, cudaStream_t side) -> absl::Status {
      if (cudnnSetStream(handle, side) != CUDNN_STATUS_SUCCESS) return absl::InternalError("cudnnSetStream failed");
      return plan.Execute(handle, buffers.ptrs(copy), buffers.workspace(copy));
    });
    cudnnSetStream(handle, stream);
    return status;
  };
  absl::StatusOr<double> ms = TimeGpuMs(round, stream, 5);
  return ms.ok() ? *ms : -1;
}

}  // namespace

bool AutotunePlan(cudnnHandle_t handle, cudaStream_t stream, const cudnn::FusedGraphSpec& spec, int streams,
                  cudnn::FusedGraphPlan& plan, std::string* note) {
  const size_t count = plan.plan_count();
  const size_t workspace_bytes = LargestWorkspace(plan);
  auto buffers = std::make_unique<TuningBuffers>(spec, workspace_bytes, std::max(1, streams), stream);
  if (!buffers->ok() && streams > 1) buffers = std::make_unique<TuningBuffers>(spec, workspace_bytes, 1, stream);
  ForkedStreams forked(buffers->copies() > 1 ? buffers->copies() : 0);
  const bool ok = buffers->ok() && forked.ok();
  std::vector<double> ms(count, -1);
  for (size_t i = 0; ok && i < count; ++i) {
    plan.SelectPlan(i).IgnoreError();
    ms[i] = TimeRound(handle, stream, plan, *buffers, forked);
    plan.SelectPlan(i).IgnoreError();
  }
  cudaStreamSynchronize(stream);
  const int copies = buffers->copies();
  buffers.reset();
  size_t best = 0;
  for (size_t i = 1; i < count; ++i) {
    if (ms[i] >= 0 && (ms[best] < 0 || ms[i] < ms[best])) best = i;
  }
  plan.SelectPlan(best).IgnoreError();
  plan.DropAlternatives();
  const bool tuned = ok && ms[best] >= 0;
  const std::string how = copies > 1 ? absl::StrFormat(" (%d executions at once on %d streams)", copies, copies)
                          : streams > 1
                              ? absl::StrFormat(" (one at a time: %d copies of the buffers did not fit)", streams)
                              : "";
  *note = tuned ? absl::StrFormat("autotuned over %zu plans%s: %.3f ms, heuristics' first %.3f ms", count, how,
                                  ms[best], ms[0])
                : "not autotuned (buffers could not be allocated or the plans did not run)";
  return tuned;
}

}  // namespace exec
