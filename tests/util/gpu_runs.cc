// ExpectGpuRunsMatchCpu (gpu_runs.h).
#include "tests/util/gpu_runs.h"

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

}  // namespace testing_util
