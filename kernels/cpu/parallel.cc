// The CPU kernels' worker pool behind ParallelFor (see parallel.h).
#include "kernels/cpu/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace kernels::cpu {
namespace {

// One ParallelFor call: chunks are claimed through `next` by the caller and the workers that took
// an offer of the job; `taken` counts workers still inside it (changed under the pool's mutex).
struct Job {
  absl::FunctionRef<void(int64_t, int64_t)> fn;
  int64_t count = 0;
  int64_t chunk = 1;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int> taken{0};
  std::exception_ptr failure;  // the first exception a chunk threw (set under failure_mu)
  std::mutex failure_mu;
};

// True on pool workers, and on a caller while it runs chunks: ParallelFor runs inline there.
thread_local bool inside_parallel_for = false;

// Claims and runs chunks until none is left; an exception is kept for the caller to rethrow and
// stops further claims.
void RunChunks(Job& job) {
  for (int64_t i = job.next.fetch_add(1); i < job.chunks; i = job.next.fetch_add(1)) {
    const int64_t begin = i * job.chunk;
    try {
      job.fn(begin, std::min(job.count, begin + job.chunk));
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.failure_mu);
      if (!job.failure) job.failure = std::current_exception();
      job.next.store(job.chunks);
    }
  }
}

// Kernels' loops come in quick succession (one ParallelFor per op): a worker watches for the next
// offer, and a caller for its helpers to finish, for a while before blocking on a condition,
// which saves a futex wake-up per call.
template <typename Ready>
void SpinUntil(Ready ready) {
  constexpr auto kSpin = std::chrono::microseconds(200);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return;
#if defined(__x86_64__)
    for (int i = 0; i < 64; ++i) __builtin_ia32_pause();
#endif
  }
}

class Pool {
 public:
  explicit Pool(int workers) : workers_(workers) {
    for (int i = 0; i < workers; ++i) std::thread([this] { Work(); }).detach();
  }
  int workers() const { return workers_; }

  // Offers `job` to up to `helpers` workers, runs chunks on the caller, then withdraws the offers
  // nobody took and waits for the workers that did.
  void Run(Job& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int i = 0; i < helpers; ++i) offers_.push_back(&job);
      offered_.fetch_add(helpers, std::memory_order_release);
    }
    offer_posted_.notify_all();
    inside_parallel_for = true;
    RunChunks(job);
    inside_parallel_for = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto withdrawn = std::remove(offers_.begin(), offers_.end(), &job);
      offered_.fetch_sub(static_cast<int>(offers_.end() - withdrawn), std::memory_order_relaxed);
      offers_.erase(withdrawn, offers_.end());
    }
    SpinUntil([&job] { return job.taken.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mu_);
    job_left_.wait(lock, [&job] { return job.taken.load() == 0; });
    if (job.failure) std::rethrow_exception(job.failure);
  }

 private:
  void Work() {
    inside_parallel_for = true;
    for (;;) {
      SpinUntil([this] { return offered_.load(std::memory_order_acquire) > 0; });
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        offer_posted_.wait(lock, [this] { return !offers_.empty(); });
        job = offers_.front();
        offers_.pop_front();
        offered_.fetch_sub(1, std::memory_order_relaxed);
        job->taken.fetch_add(1);
      }
      RunChunks(*job);
      {
        std::lock_guard<std::mutex> lock(mu_);
        job->taken.fetch_sub(1);  // the job may be gone once this is seen as 0: not touched after
      }
      job_left_.notify_all();
    }
  }

  const int workers_;
  std::atomic<int> offered_{0};  // offers_.size(), readable without the mutex
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through pthreads, not through the
  // (uninstrumented) system Abseil.
  std::mutex mu_;
  std::condition_variable offer_posted_;  // offers_ became non-empty
  std::condition_variable job_left_;      // a worker left a job
  std::deque<Job*> offers_;
};

// Past 8 threads batch-1 inference got slower, not faster (resnet50 on a 16-core machine: 112 ms
// with 8, 150 with 16): the per-op splits get too small.
constexpr int kDefaultMaxThreads = 8;

int ThreadsFromEnvironment() {
  const char* text = std::getenv("ONNXRUN_CPU_THREADS");
  const int requested = text != nullptr ? std::atoi(text) : 0;
  if (requested > 0) return std::min(requested, 256);
  cpu_set_t allowed;
  const int usable = sched_getaffinity(0, sizeof(allowed), &allowed) == 0
                         ? CPU_COUNT(&allowed)
                         : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(usable, 1, kDefaultMaxThreads);
}

// Process-wide, never destroyed (workers outlive static destructors).
Pool& ThePool() {
  static Pool* pool = new Pool(ThreadsFromEnvironment() - 1);
  return *pool;
}

}  // namespace

int ParallelThreads() { return ThePool().workers() + 1; }

void ParallelFor(int64_t count, int64_t min_chunk, absl::FunctionRef<void(int64_t begin, int64_t end)> fn) {
  if (count <= 0) return;
  const int threads = inside_parallel_for ? 1 : ParallelThreads();
  const int64_t per_thread = (count + threads - 1) / threads;
  Job job{fn, count, std::max<int64_t>({1, min_chunk, per_thread})};
  job.chunks = (count + job.chunk - 1) / job.chunk;
  if (job.chunks == 1) {
    fn(0, count);
    return;
  }
  ThePool().Run(job, static_cast<int>(std::min<int64_t>(ThePool().workers(), job.chunks - 1)));
}

}  // namespace kernels::cpu
