// Planned activation memory for a captured run (see device_arena.h).
#include "runtime/device_arena.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exec {
namespace {

size_t RoundUp(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

int64_t End(const ArenaBlock& b) { return b.died < 0 ? std::numeric_limits<int64_t>::max() : b.died; }

bool LiveTogether(const ArenaBlock& a, const ArenaBlock& b) { return a.born < End(b) && b.born < End(a); }

}  // namespace

ArenaLayout PackBlocks(const std::vector<ArenaBlock>& blocks, size_t alignment) {
  ArenaLayout layout;
  layout.offsets.assign(blocks.size(), 0);
  layout.blocks = blocks;
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const size_t size = RoundUp(std::max<size_t>(blocks[i].bytes, 1), alignment);
    // The placed blocks alive with this one, by offset: take the first gap that fits.
    std::vector<std::pair<size_t, size_t>> taken;  // [begin, end)
    for (size_t j : placed) {
      if (LiveTogether(blocks[i], blocks[j])) {
        taken.emplace_back(layout.offsets[j],
                           layout.offsets[j] + RoundUp(std::max<size_t>(blocks[j].bytes, 1), alignment));
      }
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + size);
    placed.push_back(i);
  }
  return layout;
}

struct AllocationRecorder::State {
  std::vector<ArenaBlock> blocks;
  int64_t clock = 0;
};

AllocationRecorder::AllocationRecorder() : state_(std::make_shared<State>()) {}

absl::StatusOr<std::shared_ptr<void>> AllocationRecorder::Allocate(size_t bytes, cudaStream_t stream) {
  void* ptr = nullptr;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&ptr, bytes, stream));
  const size_t index = state_->blocks.size();
  state_->blocks.push_back({bytes, state_->clock++, -1});
  std::shared_ptr<State> state = state_;
  return std::shared_ptr<void>(ptr, [state, index, stream](void* p) {
    state->blocks[index].died = state->clock++;
    cudaFreeAsync(p, stream);
  });
}

std::vector<ArenaBlock> AllocationRecorder::blocks() const { return state_->blocks; }

struct ArenaAllocator::State {
  ArenaLayout layout;
  std::vector<ArenaBlock> replayed;  // the replay's lifetimes, clocked as the recorder does
  int64_t clock = 0;
  std::function<void(cudaStream_t)> listener;
};

ArenaAllocator::ArenaAllocator(std::shared_ptr<void> arena, ArenaLayout layout)
    : arena_(std::move(arena)), state_(std::make_shared<State>()) {
  state_->layout = std::move(layout);
}

bool ArenaAllocator::complete() const { return state_->replayed.size() == state_->layout.offsets.size(); }

void ArenaAllocator::set_listener(std::function<void(cudaStream_t)> listener) {
  state_->listener = std::move(listener);
}

absl::StatusOr<std::shared_ptr<void>> ArenaAllocator::Allocate(size_t bytes, cudaStream_t stream) {
  const size_t index = state_->replayed.size();
  const ArenaLayout& layout = state_->layout;
  if (index >= layout.offsets.size() || layout.blocks[index].bytes != bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("allocation ", index, " of ", bytes, " bytes differs from the recorded run's"));
  }
  if (state_->listener) state_->listener(stream);
  state_->replayed.push_back({bytes, state_->clock++, -1});
  void* ptr = static_cast<char*>(arena_.get()) + layout.offsets[index];
  // Keeps the arena alive and clocks the death; frees nothing itself.
  return std::shared_ptr<void>(ptr, [arena = arena_, state = state_, index, stream](void*) {
    state->replayed[index].died = state->clock++;
    if (state->listener) state->listener(stream);
  });
}

std::string ArenaAllocator::LifetimeMismatch() const {
  const std::vector<ArenaBlock>& recorded = state_->layout.blocks;
  for (size_t i = 0; i < state_->replayed.size() && i < recorded.size(); ++i) {
    const ArenaBlock& r = state_->replayed[i];
    if (r.born != recorded[i].born || r.died != recorded[i].died) {
      return absl::StrCat("buffer ", i, " (", r.bytes, " bytes) lived from event ", r.born, " to ", r.died,
                          ", the recorded run's from ", recorded[i].born, " to ", recorded[i].died);
    }
  }
  return "";
}

}  // namespace exec
