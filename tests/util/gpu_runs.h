// tests/util/gpu_runs.h: the GPU-against-CPU check the GPU op tests share: a session's three GPU
// runs (step by step, captured into a CUDA graph, replayed) against the CPU run of the same plan,
// every element of every output; and the check that the op ran on the device and was replayed.
#ifndef ONNXRUN_TESTS_UTIL_GPU_RUNS_H_
#define ONNXRUN_TESTS_UTIL_GPU_RUNS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tests/util/compare.h"

namespace testing_util {

// A GPU session of `model` in `precision` (no plan cache), whose three runs were checked against
// the CPU run of its plan within `tol` (default rtol / atol: 1e-2 / 1e-3 in fp16, 1e-3 / 1e-4 in
// tf32, else 1e-5 / 1e-6); null when no GPU is usable (the caller skips) or the session failed (a
// test failure then). `gpu` adjusts the GPU options (plan cache off already) when given.
std::unique_ptr<runtime::Session> ExpectGpuRunsMatchCpu(
    const std::string& model, const std::string& precision, const std::vector<runtime::NamedTensor>& inputs,
    const std::string& context, std::optional<Tolerance> tol = std::nullopt,
    const std::function<void(exec::CudaExecutorOptions&)>& gpu = nullptr);

// Expects no step of `session` on the host reference kernels, at least one on an own CUDA kernel,
// and its runs replayed from a CUDA graph (a run-time fallback to the host leaves none captured).
void ExpectOwnKernelsReplayed(const runtime::Session& session, const std::string& context);

}  // namespace testing_util

#endif  // ONNXRUN_TESTS_UTIL_GPU_RUNS_H_
