// libFuzzer entry point: every input is a candidate ModelProto (tools/fuzz.sh builds and runs it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::CreateAndRun(std::string_view(reinterpret_cast<const char*>(data), size)).IgnoreError();
  return 0;
}
