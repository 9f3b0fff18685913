// ParallelFor on OpenMP (see parallel.h): the same threads as oneDNN's convolutions
// (onednn_conv.h), so the two never compete for the cores. A second pool of our own, spinning
// between calls, made resnet50's convolutions 40% and mobilenet_v2 80% slower on 2 cores.
#include "kernels/cpu/parallel.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace kernels::cpu {
namespace {

// Batch-1 inference on a 16-core host (resnet50, ONNXRUN_CPU_THREADS): 18.8 ms with 8 threads, 12.3
// with 16; more than 16 is not measured, so not the default.
constexpr int kDefaultMaxThreads = 16;

int ThreadsFromEnvironment() {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer does not see libgomp's (uninstrumented) barriers: it would report every chunk.
  return 1;
#endif
  const char* text = std::getenv("ONNXRUN_CPU_THREADS");
  const int requested = text != nullptr ? std::atoi(text) : 0;
  if (requested > 0) return std::min(requested, 256);
  cpu_set_t allowed;
  const int usable = sched_getaffinity(0, sizeof(allowed), &allowed) == 0
                         ? CPU_COUNT(&allowed)
                         : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(usable, 1, kDefaultMaxThreads);
}

}  // namespace

int ParallelThreads() {
  static const int threads = ThreadsFromEnvironment();
  return threads;
}

void ParallelFor(int64_t count, int64_t min_chunk, absl::FunctionRef<void(int64_t begin, int64_t end)> fn) {
  if (count <= 0) return;
  const int threads = omp_in_parallel() ? 1 : ParallelThreads();
  const int64_t chunk = std::max<int64_t>({1, min_chunk, (count + threads - 1) / threads});
  const int64_t chunks = (count + chunk - 1) / chunk;
  if (chunks == 1) {
    fn(0, count);
    return;
  }
#if defined(_OPENMP)
  std::exception_ptr failure;  // the first exception a chunk threw, rethrown here
  std::mutex failure_mu;
  // Always the full team (threads without a chunk skip it): libgomp reuses a team of the same size
  // as the last region's (oneDNN's too) instead of re-forming one.
#pragma omp parallel num_threads(threads)
  {
    const int64_t begin = omp_get_thread_num() * chunk;
    try {
      if (begin < count) fn(begin, std::min(count, begin + chunk));
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
#else
  fn(0, count);  // built without OpenMP (the clang fuzzer build): all on the caller
#endif
}

}  // namespace kernels::cpu
