// KernelCache: a map under a mutex.
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
  if (entries_.size() >= kMaxEntries) entries_.clear();
  return entries_.emplace(std::move(key), *std::move(made)).first->second;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace kernels::cpu
