// Planned activation memory for a captured run. One step-by-step pass records every
// DeviceTensor allocation of the run (its size, and from when to when it is alive); PackBlocks
// gives each an offset in one arena so that two alive at once never overlap; the capture then
// takes its buffers from that arena, in the same order, instead of CUDA graph memory nodes (whose
// reuse the driver decides, and which held a quarter more memory than the run needs).
#ifndef ONNXRUN_RUNTIME_DEVICE_ARENA_H_
#define ONNXRUN_RUNTIME_DEVICE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device_tensor.h"

namespace exec {

// One allocation of a recorded run: `bytes`, alive from event `born` to event `died` (exclusive;
// -1: still alive when the run ended). Events are allocations and frees, counted in order.
struct ArenaBlock {
  size_t bytes = 0;
  int64_t born = 0;
  int64_t died = -1;
};

struct ArenaLayout {
  size_t bytes = 0;                // the arena's size
  std::vector<size_t> offsets;     // per block, in allocation order
  std::vector<ArenaBlock> blocks;  // the recorded run's: the sizes and lifetimes a replay must match
};

// Offsets (multiples of `alignment`) for `blocks` such that blocks alive at the same time do not
// overlap: the largest first, each at the lowest offset free for its whole lifetime.
ArenaLayout PackBlocks(const std::vector<ArenaBlock>& blocks, size_t alignment = 256);

// Records the allocations made while it is installed; they come from cudaMallocAsync as usual.
class AllocationRecorder : public AllocationHook {
 public:
  AllocationRecorder();
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes, cudaStream_t stream) override;
  // The blocks so far (call once the recorded buffers are gone, or treat live ones as alive).
  std::vector<ArenaBlock> blocks() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the buffers' deleters
};

// Serves the allocations of a replayed run from `arena` in the recorded order: the i-th request
// gets layout.offsets[i]; a request beyond the recorded ones or of another size is an error (the
// run took another path: the caller falls back to graph memory nodes). Buffers are not freed
// one by one: the arena is, when its last user goes. It also clocks when each buffer dies: a
// buffer kept longer than in the recorded run may share bytes with a later one, which
// LifetimeMismatch() reports (the caller then falls back too).
class ArenaAllocator : public AllocationHook {
 public:
  ArenaAllocator(std::shared_ptr<void> arena, ArenaLayout layout);
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes, cudaStream_t stream) override;
  // Whether every recorded allocation was asked for.
  bool complete() const;
  // "" when every buffer so far was born and died at the recorded events (call once the replay's
  // buffers are gone); else which buffer lived otherwise.
  std::string LifetimeMismatch() const;
  // While set: called with the allocation's stream before each allocation is served and when each
  // buffer dies (the capture cuts its segments there, capture_order.h). Clear it before whatever
  // it refers to goes: buffers may die later.
  void set_listener(std::function<void(cudaStream_t)> listener);

 private:
  struct State;
  std::shared_ptr<void> arena_;
  std::shared_ptr<State> state_;  // shared with the buffers' deleters
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_DEVICE_ARENA_H_
