// One fuzz iteration over the public API: ModelProto bytes -> runtime::Session::CreateFromBytes on
// the CPU and, when that succeeds, one Run with generated inputs of the declared shapes (unknown
// and symbolic dims 1). Shared by the libFuzzer target and the regression replay test.
#ifndef ONNXRUN_TESTS_FUZZ_FUZZ_SESSION_H_
#define ONNXRUN_TESTS_FUZZ_FUZZ_SESSION_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/session.h"

namespace fuzz {

// The limits fuzzing runs under: small enough that no input can make one iteration allocate more
// than a few hundred MiB or run for more than a fraction of a second.
runtime::SessionOptions FuzzSessionOptions();

// Creates a session from `bytes` and, when that succeeds, runs it once. Returns the first error
// (bad models are expected: the status is the result, not a failure of the harness).
absl::Status CreateAndRun(std::string_view bytes);

}  // namespace fuzz

#endif  // ONNXRUN_TESTS_FUZZ_FUZZ_SESSION_H_
