// The CPU kernels' threads: ParallelFor splits an index range into chunks that an OpenMP team (the
// calling thread and ParallelThreads() - 1 more, the same threads oneDNN uses) runs together. Any
// thread may call it, also several at once (each gets its own team); a call made from inside a
// chunk runs inline. Under ThreadSanitizer everything runs on the caller.
#ifndef ONNXRUN_KERNELS_CPU_PARALLEL_H_
#define ONNXRUN_KERNELS_CPU_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace kernels::cpu {

// Threads a ParallelFor may use: the workers plus the caller. By default the CPUs this process may
// run on, at most 16; `ONNXRUN_CPU_THREADS` (read once, at the first call) sets it, 1 runs
// everything on the caller.
int ParallelThreads();

// ParallelFor's min_chunk for items of `work_per_item` units each (taps, elements, bytes): enough
// items that a chunk holds more than `min_work` units, so small loops stay on the caller.
inline int64_t ItemsForWork(int64_t work_per_item, int64_t min_work) {
  return min_work / (work_per_item > 0 ? work_per_item : 1) + 1;
}

// Calls fn(begin, end) over [0, count) in chunks of at least `min_chunk` indices, at most one chunk
// per thread (the split is the same on every call with the same arguments). Returns when all ran;
// an exception thrown by a chunk is rethrown here once every chunk has finished.
void ParallelFor(int64_t count, int64_t min_chunk, absl::FunctionRef<void(int64_t begin, int64_t end)> fn);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_PARALLEL_H_
