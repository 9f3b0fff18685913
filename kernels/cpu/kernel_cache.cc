// KernelCache: a map under a mutex, with each node's shapes in the order they came.
#include "kernels/cpu/kernel_cache.h"

namespace kernels::cpu {

absl::StatusOr<KernelCache::Entry> KernelCache::GetOrMake(const ir::Node& node, const std::vector<int64_t>& dims,
                                                          absl::FunctionRef<absl::StatusOr<Entry>()> make) {
  Key key(&node, dims);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
  }
  absl::StatusOr<Entry> made = make();
  if (!made.ok()) return made.status();
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = entries_.emplace(key, *std::move(made));
  if (!added) return it->second;  // another thread made it first
  std::deque<std::vector<int64_t>>& shapes = shapes_[&node];
  shapes.push_back(dims);
  if (shapes.size() > kMaxShapesPerNode) {
    entries_.erase(Key(&node, shapes.front()));
    shapes.pop_front();
  }
  return it->second;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace kernels::cpu
