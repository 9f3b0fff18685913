// Session settings by name: "key" = "value" strings that set SessionOptions fields, for callers that
// cannot build a runtime::SessionOptions (the C API's onnxrun_session_create_with_config and the
// Python package's Session(..., config={...})). The keys are the CLI's flags without their dashes.
#ifndef ONNXRUN_RUNTIME_SESSION_CONFIG_H_
#define ONNXRUN_RUNTIME_SESSION_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "runtime/session.h"

namespace runtime {

// Sets the option `key` names from `value`: InvalidArgument for an unknown key (naming the known
// ones) or a value out of its range.
//   cuda_graph, plan_cache, activation_arena, measure_choices, fast_gelu, autotune_large_convs,
//   autotune_matmuls, autotune_runtime_compiled, half_inputs (SessionOptions::half_inputs): "1" / "0"
//   (also "true" / "false")
//   autotune_plans 1-64, tune_for_streams 1-16, max_contexts 1-64, build_threads 1-256: an integer
//   plan_cache_dir: a folder
absl::Status ApplySessionConfig(const std::string& key, const std::string& value, SessionOptions& options);

// The known keys, comma-separated (for messages and help texts).
std::string SessionConfigKeys();

}  // namespace runtime

#endif  // ONNXRUN_RUNTIME_SESSION_CONFIG_H_
