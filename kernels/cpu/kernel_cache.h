// State the CPU kernels keep between runs of one plan: weights repacked once for a faster kernel
// (oneDNN's blocked layouts, onednn_conv.h), keyed by the node and the shapes it ran on. Owned by
// whoever runs a plan many times (exec::CpuExecutor, one per Session); a kernel given none redoes
// the work every run. Thread-safe: one plan may run from several threads at once.
#ifndef ONNXRUN_KERNELS_CPU_KERNEL_CACHE_H_
#define ONNXRUN_KERNELS_CPU_KERNEL_CACHE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace kernels::cpu {

class KernelCache {
 public:
  // What a kernel keeps; each kernel casts it back to its own type.
  using Entry = std::shared_ptr<const void>;

  // The entry kept for (node, dims), or make()'s, kept for the next call. make() runs without the
  // lock held (two threads may both make one the first time; the first kept wins).
  absl::StatusOr<Entry> GetOrMake(const ir::Node& node, const std::vector<int64_t>& dims,
                                  absl::FunctionRef<absl::StatusOr<Entry>()> make);

  size_t size() const;

  // Entries kept per node: a model run on ever new input shapes (detectors on varying image sizes)
  // would otherwise keep a copy of every weight per shape; the oldest of a node's goes first.
  static constexpr size_t kMaxShapesPerNode = 4;

 private:
  using Key = std::pair<const ir::Node*, std::vector<int64_t>>;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;
  std::map<const ir::Node*, std::deque<std::vector<int64_t>>> shapes_;  // per node, oldest first
};

// What make() gives for `node` (its attributes parsed into a model, say), made once and kept in
// `cache` under no dims when there is a cache, made on every call when there is none.
template <typename T>
absl::StatusOr<std::shared_ptr<const T>> CachedForNode(KernelCache* cache, const ir::Node& node,
                                                       absl::FunctionRef<absl::StatusOr<T>()> make) {
  auto make_entry = [&]() -> absl::StatusOr<KernelCache::Entry> {
    absl::StatusOr<T> made = make();
    if (!made.ok()) return made.status();
    return std::make_shared<const T>(*std::move(made));
  };
  absl::StatusOr<KernelCache::Entry> entry = cache != nullptr ? cache->GetOrMake(node, {}, make_entry) : make_entry();
  if (!entry.ok()) return entry.status();
  return std::static_pointer_cast<const T>(*std::move(entry));
}

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_KERNEL_CACHE_H_
