// runtime/plan_cache.cc: PlanCache — the entry format (encode, bounds-checked decode), atomic
// writes (temp file + rename) and the cache folder's discovery and creation.
#include "runtime/plan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace exec {
namespace {

constexpr char kMagic[] = "ONNXRUNPLAN";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;
constexpr size_t kVersionAt = kMagicSize, kKeyLengthAt = kVersionAt + 4;
// An entry larger than this is not one of ours: refuse to read it.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;
// Temp files of writers that died: removed by Open once this old.
constexpr auto kStaleTempAge = std::chrono::hours(1);

void AppendLittleEndian(uint64_t value, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t ReadLittleEndian(std::string_view bytes, size_t at, int count) {
  uint64_t value = 0;
  for (int i = 0; i < count; ++i) {
    value |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  }
  return value;
}

// Writes all of `bytes` to a new file `path` (which must not exist).
absl::Status WriteNewFile(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("plan cache: create ", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat("plan cache: write ", path));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("plan cache: close ", path));
  return absl::OkStatus();
}

// The whole file; NotFound when it does not exist.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return absl::NotFoundError(path);
    return absl::ErrnoToStatus(error, "cannot open");
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::DataLossError("not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    close(fd);
    return absl::DataLossError(absl::StrCat("implausibly large (", st.st_size, " bytes)"));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::ErrnoToStatus(error, "cannot read");
    }
    if (n == 0) break;  // shrank while reading: decode reports it
    done += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(done);
  return bytes;
}

// Removes ".tmp-*" files older than kStaleTempAge (left by writers that died mid-write).
void RemoveStaleTempFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind(".tmp-", 0) != 0) continue;
    std::error_code time_ec, remove_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > kStaleTempAge) fs::remove(it->path(), remove_ec);
  }
}

}  // namespace

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string EncodePlanCacheEntry(std::string_view key, std::string_view blob, uint32_t version) {
  std::string out(kMagic, kMagicSize);
  out.reserve(kMagicSize + 4 + 8 + key.size() + 8 + blob.size() + 8);
  AppendLittleEndian(version, 4, out);
  AppendLittleEndian(key.size(), 8, out);
  out.append(key);
  AppendLittleEndian(blob.size(), 8, out);
  out.append(blob);
  AppendLittleEndian(Fnv1a64(out), 8, out);
  return out;
}

absl::StatusOr<std::string> DecodePlanCacheEntry(std::string_view bytes, std::string_view key) {
  if (bytes.size() < kMagicSize || bytes.substr(0, kMagicSize) != kMagic) {
    return absl::DataLossError(bytes.size() < kMagicSize ? "truncated" : "not a plan cache entry");
  }
  if (bytes.size() < kKeyLengthAt) return absl::DataLossError("truncated");
  const uint64_t version = ReadLittleEndian(bytes, kVersionAt, 4);
  if (version != kPlanCacheFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("format version ", version, ", expected ", kPlanCacheFormatVersion));
  }
  // Each length is checked against what is left before it is used.
  size_t at = kKeyLengthAt;
  auto take_length = [&](uint64_t* length) {
    if (bytes.size() - at < 8) return false;
    *length = ReadLittleEndian(bytes, at, 8);
    at += 8;
    return *length <= bytes.size() - at;
  };
  uint64_t key_length = 0, blob_length = 0;
  if (!take_length(&key_length)) return absl::DataLossError("truncated (key)");
  const std::string_view stored_key = bytes.substr(at, key_length);
  at += key_length;
  if (!take_length(&blob_length)) return absl::DataLossError("truncated (blob)");
  const std::string_view blob = bytes.substr(at, blob_length);
  at += blob_length;
  if (bytes.size() - at != 8) {
    return absl::DataLossError(bytes.size() - at < 8 ? "truncated (checksum)" : "trailing bytes after the checksum");
  }
  if (ReadLittleEndian(bytes, at, 8) != Fnv1a64(bytes.substr(0, at))) {
    return absl::DataLossError("checksum mismatch");
  }
  if (stored_key != key) {
    return absl::FailedPreconditionError("written for another key (another GPU, driver or cuDNN, or a hash collision)");
  }
  return std::string(blob);
}

std::string PlanCache::DefaultDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return absl::StrCat(xdg, "/onnxrun");
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return absl::StrCat(home, "/.cache/onnxrun");
  return "";
}

PlanCache PlanCache::Open(const std::string& dir) {
  const std::string path = dir.empty() ? DefaultDir() : dir;
  if (path.empty()) {
    return PlanCache("", "plan cache disabled: neither XDG_CACHE_HOME nor HOME is set");
  }
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path, ec)) {
    return PlanCache(
        "", absl::StrCat("plan cache disabled: cannot create ", path, ": ", ec ? ec.message() : "not a directory"));
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return PlanCache("", absl::StrCat("plan cache disabled: ", path, " is not writable: ", std::strerror(errno)));
  }
  RemoveStaleTempFiles(path);
  return PlanCache(path, "");
}

std::string PlanCache::PathFor(const std::string& key) const {
  if (!enabled()) return "";
  return absl::StrFormat("%s/%016x.plan", dir_, Fnv1a64(key));
}

std::optional<std::string> PlanCache::Get(const std::string& key, std::string* warning) const {
  if (!enabled()) return std::nullopt;
  const std::string path = PathFor(key);
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (absl::IsNotFound(bytes.status())) return std::nullopt;
  absl::StatusOr<std::string> blob = bytes.ok() ? DecodePlanCacheEntry(*bytes, key) : bytes.status();
  if (blob.ok()) return *std::move(blob);
  // A corrupt file would fail every time: remove it. Another version's or key's entry is whole;
  // leave it (Put replaces it).
  const bool remove = absl::IsDataLoss(blob.status()) && unlink(path.c_str()) == 0;
  if (warning != nullptr) {
    *warning =
        absl::StrCat("plan cache: ", path, ": ", blob.status().message(), "; ignored", remove ? " and removed" : "");
  }
  return std::nullopt;
}

absl::Status PlanCache::Put(const std::string& key, std::string_view blob) const {
  if (!enabled()) return absl::OkStatus();
  static std::atomic<uint64_t> counter{0};
  const std::string temp = absl::StrFormat("%s/.tmp-%d-%x-%d", dir_, static_cast<int>(getpid()),
                                           std::hash<std::thread::id>{}(std::this_thread::get_id()), counter++);
  if (absl::Status written = WriteNewFile(temp, EncodePlanCacheEntry(key, blob)); !written.ok()) {
    unlink(temp.c_str());
    return written;
  }
  const std::string path = PathFor(key);
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return absl::ErrnoToStatus(error, absl::StrCat("plan cache: rename ", temp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace exec
