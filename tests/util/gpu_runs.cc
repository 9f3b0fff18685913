// ExpectGpuRunsMatchCpu and ExpectOwnKernelsReplayed (gpu_runs.h).
#include "tests/util/gpu_runs.h"

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace testing_util {

std::unique_ptr<runtime::Session> ExpectGpuRunsMatchCpu(const std::string& model, const std::string& precision,
                                                        const std::vector<runtime::NamedTensor>& inputs,
                                                        const std::string& context, std::optional<Tolerance> tol,
                                                        const std::function<void(exec::CudaExecutorOptions&)>& gpu) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = precision;
  options.gpu.plan_cache = false;
  if (gpu) gpu(options.gpu);
  auto session = runtime::Session::CreateFromBytes(model, options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) return nullptr;
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return nullptr;
  auto cpu = (*session)->RunOn(runtime::Device::kCpu, inputs, nullptr);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!tol && precision == "fp16") tol = Tolerance{1e-2, 1e-3};
  if (!tol && precision == "tf32") tol = Tolerance{1e-3, 1e-4};
  if (!tol) tol = Tolerance{1e-5, 1e-6};
  for (int run = 0; run < 3 && cpu.ok(); ++run) {
    auto gpu = (*session)->Run(inputs);
    EXPECT_TRUE(gpu.ok()) << gpu.status();
    if (!gpu.ok()) break;
    for (size_t o = 0; o < gpu->size(); ++o) {
      EXPECT_EQ(CompareTensors((*gpu)[o].tensor, (*cpu)[o].tensor, *tol), "")
          << (*gpu)[o].name << " run " << run << " " << context;
    }
  }
  return *std::move(session);
}

void ExpectOwnKernelsReplayed(const runtime::Session& session, const std::string& context) {
  const std::vector<std::string> notes = session.gpu_step_notes();
  ASSERT_FALSE(notes.empty()) << context;
  for (const std::string& note : notes)
    EXPECT_FALSE(absl::StrContains(note, "host reference")) << context << ": " << note;
  bool own_kernel = false;  // in fp16 a Cast back to float32 may follow the op's step
  for (const std::string& note : notes) own_kernel = own_kernel || absl::StrContains(note, "own CUDA kernel");
  EXPECT_TRUE(own_kernel) << context << ": " << absl::StrJoin(notes, " | ");
  // A run-time fallback to the host would leave the graph uncaptured.
  EXPECT_TRUE(absl::StrContains(session.gpu()->graph_status(), "CUDA graph replay"))
      << context << ": " << session.gpu()->graph_status();
}

}  // namespace testing_util
