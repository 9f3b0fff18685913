// runtime/plan_cache.h: PlanCache, a folder of opaque blobs (serialized cuDNN plans) keyed by
// strings, which threads and processes may share. It knows nothing of cuDNN: the caller builds the
// key (op-graph signature, GPU name / compute capability / SM count, cuDNN and driver versions) and
// the blob.
//
// One file per key: <dir>/<16 hex digits of Fnv1a64(key)>.plan, holding (integers little-endian)
//   "ONNXRUNPLAN" | u32 format version | u64 key length | key | u64 blob length | blob |
//   u64 Fnv1a64 of everything before it.
// The full key is stored, so a hash collision or a foreign entry is told apart from a hit.
//
// Writes go to a temp file in the same folder (".tmp-<pid>-<thread>-<counter>") that rename()
// then moves over the entry: a reader sees the old entry, the new one or none, never half of one;
// when several writers race on one key, the last rename wins and every entry stays whole. No
// fsync: an entry cut short by a power loss fails its checksum and is rebuilt.
//
// Example:
//   PlanCache cache = PlanCache::Open();  // $XDG_CACHE_HOME/onnxrun or ~/.cache/onnxrun
//   if (!cache.open_warning().empty()) std::cerr << cache.open_warning() << "\n";
//   std::string warning;
//   std::optional<std::string> blob = cache.Get(key, &warning);
//   if (!warning.empty()) std::cerr << warning << "\n";  // a bad entry: rebuild
//   if (!blob) { ...build...; if (absl::Status s = cache.Put(key, built); !s.ok()) ...warn... }
#ifndef ONNXRUN_RUNTIME_PLAN_CACHE_H_
#define ONNXRUN_RUNTIME_PLAN_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace exec {

inline constexpr uint32_t kPlanCacheFormatVersion = 1;

// 64-bit FNV-1a: a fixed algorithm, so file names and checksums agree across builds and machines.
uint64_t Fnv1a64(std::string_view bytes);

// The entry file's bytes for `key` and `blob`, written with format `version`.
std::string EncodePlanCacheEntry(std::string_view key, std::string_view blob,
                                 uint32_t version = kPlanCacheFormatVersion);
// The blob of an entry, checked against `key`. DataLoss for a truncated or corrupt entry;
// FailedPrecondition for another format version or another key. Never reads out of bounds.
absl::StatusOr<std::string> DecodePlanCacheEntry(std::string_view bytes, std::string_view key);

class PlanCache {
 public:
  // The folder: `dir`, or DefaultDir() when `dir` is empty; created (with parents) if missing.
  // Never fails: when there is no folder, it cannot be created or is not writable, the cache is
  // disabled and open_warning() says why.
  static PlanCache Open(const std::string& dir = "");
  // $XDG_CACHE_HOME/onnxrun, else $HOME/.cache/onnxrun; "" when neither variable is set.
  static std::string DefaultDir();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }  // "" when disabled
  const std::string& open_warning() const { return open_warning_; }

  // The blob stored under `key`, or nullopt. A plain miss (no file) leaves `warning` untouched;
  // an entry that cannot be trusted — truncated, corrupt, another format version, another key,
  // unreadable — gives nullopt and a one-line `warning` naming the file, and a corrupt or
  // truncated file is removed. `warning` may be null. Disabled: always nullopt.
  std::optional<std::string> Get(const std::string& key, std::string* warning) const;

  // Stores `blob` under `key` atomically (temp file + rename). Errors name the file and errno's
  // text (e.g. a full disk). Disabled: does nothing and returns OK (Open already warned).
  absl::Status Put(const std::string& key, std::string_view blob) const;

  // The entry file of `key` (whether or not it exists); "" when disabled.
  std::string PathFor(const std::string& key) const;

 private:
  PlanCache(std::string dir, std::string open_warning) : dir_(std::move(dir)), open_warning_(std::move(open_warning)) {}

  std::string dir_;
  std::string open_warning_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_PLAN_CACHE_H_
