// The persistent plan cache end to end, on the GPU (skipped without one): models/tiny_cnn in fp16
// through Sessions sharing a cache folder. A cold Session builds and stores every cuDNN plan; a warm
// one loads them all; entries that are corrupt (a flipped byte), truncated, or made for another GPU
// (cuDNN's plan text with another SM count, stored under our key with a valid checksum) are each
// detected, warned about and rebuilt. Every Session's output is compared with ONNX Runtime's stored
// output; plans built on 1 and on 4 threads choose the same engines.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/plan_cache.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

namespace fs = std::filesystem;

constexpr char kModel[] = "models/tiny_cnn/model.onnx";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<fs::path> Entries(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".plan") files.push_back(e.path());
  }
  return files;
}

// The key stored in an entry (format of runtime/plan_cache.h: magic, u32 version, u64 key length).
std::string StoredKey(const std::string& bytes) {
  const size_t magic = std::strlen("ONNXRUNPLAN");
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + magic + 4, 8);
  return bytes.substr(magic + 12, length);
}

// Per step, "engine <id> (runtime-compiled)" of a cuDNN step, else the whole note. (A loaded plan
// may list a knob heuristics left unset, so knobs are not compared.)
std::vector<std::string> Engines(const std::vector<std::string>& notes) {
  std::vector<std::string> engines;
  for (std::string note : notes) {
    note = note.substr(0, note.find(" (plan from the cache)"));
    engines.push_back(note.substr(0, note.find(" knobs")));
  }
  return engines;
}

class PlanCacheGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = (fs::path(tmp ? tmp : "/tmp") / "plan_cache_gpu_test").string();
    fs::remove_all(dir_);
    input_ = *importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/input_0.pb");
    expected_ = *importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/output_0.pb");
  }

  // A Session on the cache folder; checks its output against ONNX Runtime's (fp16 tolerance).
  std::unique_ptr<runtime::Session> RunSession(int threads = 0) {
    runtime::SessionOptions options;
    options.device = runtime::Device::kCuda;
    options.precision = "fp16";
    options.gpu.plan_cache_dir = dir_;
    options.gpu.measure_choices = false;  // engine notes only: no timings in them
    options.gpu.build_threads = threads;
    auto session = runtime::Session::Create(kModel, options);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return nullptr;
    auto out = (*session)->Run({{(*session)->inputs()[0].name, input_}});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) {
      EXPECT_EQ(testing_util::CompareTensors(out->at(0).tensor, expected_, {.rtol = 1e-2, .atol = 1e-3}), "");
    }
    return *std::move(session);
  }

  std::string dir_;
  ir::Tensor input_, expected_;
};

TEST_F(PlanCacheGpuTest, ColdBuildsWarmLoadsAndBadEntriesAreRebuilt) {
  if (!exec::CudaUnavailableReason().empty()) GTEST_SKIP() << exec::CudaUnavailableReason();
  auto cold = RunSession();
  ASSERT_NE(cold, nullptr);
  const exec::PlanBuildSummary built = cold->gpu()->last_build();  // tiny_cnn's batch is symbolic: built at Run
  ASSERT_GT(built.steps, 0);
  EXPECT_EQ(built.from_cache, 0);
  EXPECT_EQ(built.built + built.shared, built.steps);
  EXPECT_EQ(built.failed, 0);
  const std::vector<fs::path> entries = Entries(dir_);
  ASSERT_EQ(static_cast<int>(entries.size()), built.built) << "every built plan is stored";

  auto warm = RunSession();
  ASSERT_NE(warm, nullptr);
  EXPECT_EQ(warm->gpu()->last_build().from_cache, built.built);  // one per distinct spec
  EXPECT_TRUE(warm->gpu()->cache_warnings().empty());
  EXPECT_EQ(Engines(warm->gpu_step_notes()), Engines(cold->gpu_step_notes()))
      << "the cache gives back the engines that were built";

  // Each kind of bad entry, applied to every entry: all detected and rebuilt, outputs still right.
  const std::vector<std::pair<std::string, std::function<std::string(const std::string&)>>> damages = {
      {"flipped byte",
       [](std::string b) {
         b[b.size() / 2] ^= 0x5a;
         return b;
       }},
      {"truncated", [](const std::string& b) { return b.substr(0, b.size() / 2); }},
      {"another GPU",
       [](const std::string& b) {
         std::string blob = *exec::DecodePlanCacheEntry(b, StoredKey(b));
         const size_t at = blob.find("\"multiProcessorCount\"");
         EXPECT_NE(at, std::string::npos) << "cuDNN's plan text names the SM count: "
                                          << blob.substr(std::min(blob.size(), blob.find("GPUProfile")), 400);
         if (at != std::string::npos) blob.insert(blob.find(':', at) + 1, "1");  // 132 -> 1132 SMs
         return exec::EncodePlanCacheEntry(StoredKey(b), blob);
       }},
  };
  for (const auto& [name, damage] : damages) {
    SCOPED_TRACE(name);
    for (const fs::path& entry : entries) WriteAll(entry, damage(ReadAll(entry)));
    auto session = RunSession();
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->gpu()->last_build().from_cache, 0);
    EXPECT_EQ(session->gpu()->last_build().built, built.built);
    EXPECT_EQ(static_cast<int>(session->gpu()->cache_warnings().size()), built.built);
    auto rewarmed = RunSession();  // the rebuilt entries were stored again
    ASSERT_NE(rewarmed, nullptr);
    EXPECT_EQ(rewarmed->gpu()->last_build().from_cache, built.built);
  }
}

TEST_F(PlanCacheGpuTest, ThreadCountDoesNotChangeTheEngines) {
  if (!exec::CudaUnavailableReason().empty()) GTEST_SKIP() << exec::CudaUnavailableReason();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = "fp16";
  options.gpu.plan_cache = false;
  std::vector<std::vector<std::string>> notes;
  for (int threads : {1, 4}) {
    options.gpu.build_threads = threads;
    auto session = runtime::Session::Create(kModel, options);
    ASSERT_TRUE(session.ok()) << session.status();
    notes.push_back((*session)->gpu_step_notes());
  }
  EXPECT_EQ(Engines(notes[0]), Engines(notes[1]));
}

}  // namespace
