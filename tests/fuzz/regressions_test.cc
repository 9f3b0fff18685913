// Replays every input under tests/fuzz/regressions/ (each one crashed, hung or leaked once, see
// its README line) through the fuzz harness: each must now end in a Status, under any config.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_session.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> RegressionInputs() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator("tests/fuzz/regressions")) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(FuzzRegressionTest, EveryInputEndsInAStatus) {
  const std::vector<fs::path> paths = RegressionInputs();
  ASSERT_FALSE(paths.empty());
  for (const fs::path& path : paths) {
    std::ifstream file(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const absl::Status status = fuzz::CreateAndRun(bytes);
    std::printf("%s: %s\n", path.filename().c_str(), status.ToString().c_str());
  }
}

}  // namespace
