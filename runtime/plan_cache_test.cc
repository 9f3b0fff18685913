// runtime/plan_cache_test.cc: PlanCache — round trips, every truncation and every flipped byte of
// an entry, an entry of another key ("another GPU") or format version, garbage files, writers in
// several threads and processes, and folders that are missing, unset or cannot be created.
#include "runtime/plan_cache.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace exec {
namespace {

namespace fs = std::filesystem;

// A fresh folder under TEST_TMPDIR for each test.
std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(tmp ? tmp : "/tmp") / "plan_cache_test" / name;
  fs::remove_all(dir);
  return dir.string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

const std::string kKey = "conv3x3 64->64 fp16 NHWC | NVIDIA H100 80GB HBM3 sm90 132 | cudnn 91900";
const std::string kBlob = std::string("plan\0bytes\n\xff", 12);

TEST(PlanCacheTest, RoundTripsAndOverwrites) {
  PlanCache cache = PlanCache::Open(TestDir("round_trip") + "/a/b");  // parents created
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  EXPECT_TRUE(cache.open_warning().empty());
  std::string warning;
  EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);  // a plain miss is silent
  EXPECT_TRUE(warning.empty());

  ASSERT_TRUE(cache.Put(kKey, kBlob).ok());
  EXPECT_EQ(cache.Get(kKey, &warning), kBlob);
  EXPECT_TRUE(warning.empty()) << warning;
  ASSERT_TRUE(cache.Put(kKey, "second").ok());
  EXPECT_EQ(cache.Get(kKey, nullptr), "second");
  ASSERT_TRUE(cache.Put("empty", "").ok());
  EXPECT_EQ(cache.Get("empty", nullptr), "");

  // The file name is the key's fixed hash; nothing else is left in the folder.
  EXPECT_EQ(fs::path(cache.PathFor(kKey)).filename().string().size(), 16u + 5u);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(cache.dir())) {
    files.insert(entry.path().string());
  }
  EXPECT_EQ(files, (std::set<std::string>{cache.PathFor(kKey), cache.PathFor("empty")}));
}

TEST(PlanCacheTest, HashAndEncodingAreFixed) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);  // the FNV-1a 64 offset basis
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  const std::string entry = EncodePlanCacheEntry("k", "v");
  EXPECT_EQ(entry.substr(0, 11), "ONNXRUNPLAN");
  EXPECT_EQ(entry.size(), 11u + 4 + 8 + 1 + 8 + 1 + 8);
  absl::StatusOr<std::string> blob = DecodePlanCacheEntry(entry, "k");
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(*blob, "v");
}

TEST(PlanCacheTest, EveryTruncationIsRejectedAndRemoved) {
  PlanCache cache = PlanCache::Open(TestDir("truncated"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  ASSERT_TRUE(cache.Put(kKey, kBlob).ok());
  const std::string path = cache.PathFor(kKey);
  const std::string whole = ReadAll(path);
  for (size_t len = 0; len < whole.size(); ++len) {
    WriteAll(path, whole.substr(0, len));
    std::string warning;
    EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt) << "cut at " << len;
    EXPECT_NE(warning.find(path), std::string::npos) << "cut at " << len << ": " << warning;
    EXPECT_FALSE(fs::exists(path)) << "cut at " << len;
  }
  WriteAll(path, whole + "x");  // one byte too many
  std::string warning;
  EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);
  EXPECT_NE(warning.find("trailing"), std::string::npos) << warning;
}

TEST(PlanCacheTest, EveryFlippedByteIsRejected) {
  PlanCache cache = PlanCache::Open(TestDir("flipped"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  ASSERT_TRUE(cache.Put(kKey, kBlob).ok());
  const std::string path = cache.PathFor(kKey);
  const std::string whole = ReadAll(path);
  for (size_t i = 0; i < whole.size(); ++i) {
    std::string bad = whole;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    WriteAll(path, bad);
    std::string warning;
    EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt) << "byte " << i;
    EXPECT_FALSE(warning.empty()) << "byte " << i;
  }
  ASSERT_TRUE(cache.Put(kKey, kBlob).ok());  // rebuilt after the damage
  EXPECT_EQ(cache.Get(kKey, nullptr), kBlob);
}

// The entry file of one key holding another key's entry: what a colliding hash, or a folder shared
// with another GPU whose entry landed under this name, looks like.
TEST(PlanCacheTest, EntryOfAnotherKeyIsNotAHit) {
  PlanCache cache = PlanCache::Open(TestDir("foreign"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  const std::string other_gpu = "conv3x3 64->64 fp16 NHWC | NVIDIA A100 sm80 108 | cudnn 91900";
  ASSERT_TRUE(cache.Put(other_gpu, "a100 plan").ok());
  fs::copy_file(cache.PathFor(other_gpu), cache.PathFor(kKey));
  std::string warning;
  EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);
  EXPECT_NE(warning.find("another key"), std::string::npos) << warning;
  EXPECT_EQ(cache.Get(other_gpu, nullptr), "a100 plan");  // the real owner still hits
  ASSERT_TRUE(cache.Put(kKey, kBlob).ok());
  EXPECT_EQ(cache.Get(kKey, nullptr), kBlob);
}

TEST(PlanCacheTest, OtherFormatVersionIsNotAHit) {
  PlanCache cache = PlanCache::Open(TestDir("version"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  WriteAll(cache.PathFor(kKey), EncodePlanCacheEntry(kKey, kBlob, kPlanCacheFormatVersion + 1));  // a valid checksum
  std::string warning;
  EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);
  EXPECT_NE(warning.find("format version 2"), std::string::npos) << warning;
  EXPECT_EQ(DecodePlanCacheEntry(EncodePlanCacheEntry(kKey, kBlob, 0), kKey).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PlanCacheTest, GarbageNeverCrashes) {
  PlanCache cache = PlanCache::Open(TestDir("garbage"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  const std::string path = cache.PathFor(kKey);
  std::string huge_lengths = EncodePlanCacheEntry(kKey, kBlob);
  for (size_t i = 15; i < 23; ++i) huge_lengths[i] = '\xff';  // key length 2^64 - 1
  for (const std::string& bytes :
       {std::string("hello"), std::string(1000, '\0'), std::string("ONNXRUNPLAN"), huge_lengths}) {
    WriteAll(path, bytes);
    std::string warning;
    EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);
    EXPECT_FALSE(warning.empty());
  }
  fs::create_directory(path);  // a folder where the entry should be
  std::string warning;
  EXPECT_EQ(cache.Get(kKey, &warning), std::nullopt);
  EXPECT_FALSE(warning.empty());
  EXPECT_FALSE(cache.Put(kKey, kBlob).ok());  // rename onto a folder fails cleanly
}

std::string BlobOf(int writer, int round) {
  return std::string(1000 + writer * 37 + round, static_cast<char>('a' + writer)) + "#" + std::to_string(round);
}

// Writers in several threads, on one shared key and on keys of their own, with readers alongside:
// a reader sees nothing or a whole blob, and every key ends with a valid entry.
TEST(PlanCacheTest, ConcurrentWritersLeaveValidEntries) {
  PlanCache cache = PlanCache::Open(TestDir("threads"));
  ASSERT_TRUE(cache.enabled()) << cache.open_warning();
  constexpr int kWriters = 8, kRounds = 50;
  std::set<std::string> valid;
  for (int w = 0; w < kWriters; ++w) {
    for (int r = 0; r < kRounds; ++r) valid.insert(BlobOf(w, r));
  }
  std::vector<std::string> errors(kWriters + 1);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        absl::Status shared = cache.Put("shared", BlobOf(w, r));
        absl::Status own = cache.Put("own " + std::to_string(w), BlobOf(w, r));
        if (!shared.ok() || !own.ok()) errors[w] = shared.ok() ? own.ToString() : shared.ToString();
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < kWriters * kRounds; ++i) {
      std::string warning;
      std::optional<std::string> got = cache.Get("shared", &warning);
      if (!warning.empty() || (got.has_value() && valid.count(*got) == 0)) {
        errors[kWriters] = warning.empty() ? "a blob no writer wrote" : warning;
      }
    }
  });
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_TRUE(e.empty()) << e;
  std::optional<std::string> shared = cache.Get("shared", nullptr);
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(valid.count(*shared), 1u);
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(cache.Get("own " + std::to_string(w), nullptr), BlobOf(w, kRounds - 1));
  }
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(cache.dir())) {
    EXPECT_EQ(entry.path().extension(), ".plan") << entry.path();  // no temp file left
    ++files;
  }
  EXPECT_EQ(files, kWriters + 1u);
}

// The same, with processes (what two onnxrun runs sharing ~/.cache/onnxrun do).
TEST(PlanCacheTest, ConcurrentProcessesLeaveValidEntries) {
  const std::string dir = TestDir("processes");
  ASSERT_TRUE(PlanCache::Open(dir).enabled());
  constexpr int kProcesses = 4, kRounds = 100;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      PlanCache cache = PlanCache::Open(dir);
      bool ok = true;
      for (int r = 0; r < kRounds; ++r) {
        ok = ok && cache.Put("shared", BlobOf(p, r)).ok();
        std::string warning;
        cache.Get("shared", &warning);
        ok = ok && warning.empty();
      }
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid;
  }
  std::optional<std::string> shared = PlanCache::Open(dir).Get("shared", nullptr);
  ASSERT_TRUE(shared.has_value());
  bool from_a_writer = false;
  for (int p = 0; p < kProcesses; ++p) from_a_writer |= *shared == BlobOf(p, kRounds - 1);
  EXPECT_TRUE(from_a_writer);
}

TEST(PlanCacheTest, FolderThatCannotBeCreatedDisablesTheCache) {
  const std::string dir = TestDir("blocked");
  fs::create_directories(dir);
  WriteAll(dir + "/file", "a file, not a folder");
  PlanCache cache = PlanCache::Open(dir + "/file/onnxrun");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.open_warning().find("plan cache disabled"), std::string::npos);
  EXPECT_EQ(cache.Get(kKey, nullptr), std::nullopt);
  EXPECT_TRUE(cache.Put(kKey, kBlob).ok());  // a no-op
  EXPECT_EQ(cache.PathFor(kKey), "");
}

TEST(PlanCacheTest, ReadOnlyFolderDisablesTheCache) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes to read-only folders";
  const std::string dir = TestDir("read_only");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  PlanCache cache = PlanCache::Open(dir);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.open_warning().find("not writable"), std::string::npos) << cache.open_warning();
  fs::permissions(dir, fs::perms::owner_all);
}

// Restores one environment variable when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(PlanCacheTest, DefaultFolderFollowsXdgThenHome) {
  const std::string base = TestDir("default");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", base.c_str());
    EXPECT_EQ(PlanCache::DefaultDir(), base + "/onnxrun");
    PlanCache cache = PlanCache::Open();
    ASSERT_TRUE(cache.enabled()) << cache.open_warning();
    EXPECT_TRUE(fs::is_directory(base + "/onnxrun"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");
    ScopedEnv home("HOME", base.c_str());
    EXPECT_EQ(PlanCache::DefaultDir(), base + "/.cache/onnxrun");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(PlanCache::DefaultDir(), "");
    PlanCache cache = PlanCache::Open();
    EXPECT_FALSE(cache.enabled());
    EXPECT_NE(cache.open_warning().find("HOME"), std::string::npos) << cache.open_warning();
  }
}

}  // namespace
}  // namespace exec
