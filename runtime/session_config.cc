// Session settings by name (see session_config.h).
#include "runtime/session_config.h"

#include <functional>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace runtime {
namespace {

using Setter = std::function<absl::Status(const std::string&, SessionOptions&)>;

absl::Status SetBool(const std::string& value, bool& target) {
  if (value == "1" || value == "true") return (target = true, absl::OkStatus());
  if (value == "0" || value == "false") return (target = false, absl::OkStatus());
  return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not 1, 0, true or false"));
}

Setter Flag(bool exec::CudaExecutorOptions::*field) {
  return [field](const std::string& value, SessionOptions& o) { return SetBool(value, o.gpu.*field); };
}

Setter Count(int exec::CudaExecutorOptions::*field, int lowest, int highest) {
  return [=](const std::string& value, SessionOptions& o) {
    int n = 0;
    if (!absl::SimpleAtoi(value, &n) || n < lowest || n > highest) {
      return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not an integer from ", lowest, " to ", highest));
    }
    return (o.gpu.*field = n, absl::OkStatus());
  };
}

const std::map<std::string, Setter>& Setters() {
  using Options = exec::CudaExecutorOptions;
  static const auto* setters = new std::map<std::string, Setter>{
      {"cuda_graph", Flag(&Options::cuda_graph)},
      {"plan_cache", Flag(&Options::plan_cache)},
      {"activation_arena", Flag(&Options::activation_arena)},
      {"overlap_steps", Flag(&Options::overlap_steps)},
      {"measure_choices", Flag(&Options::measure_choices)},
      {"fast_gelu", Flag(&Options::fast_gelu)},
      {"autotune_large_convs", Flag(&Options::autotune_large_convs)},
      {"autotune_matmuls", Flag(&Options::autotune_matmuls)},
      {"autotune_runtime_compiled", Flag(&Options::autotune_runtime_compiled)},
      {"autotune_plans", Count(&Options::autotune_plans, 1, 64)},
      {"tune_for_streams", Count(&Options::autotune_streams, 1, 16)},
      {"max_contexts", Count(&Options::max_contexts, 1, 64)},
      {"build_threads", Count(&Options::build_threads, 1, 256)},
      {"half_inputs", [](const std::string& value, SessionOptions& o) { return SetBool(value, o.half_inputs); }},
      {"plan_cache_dir",
       [](const std::string& value, SessionOptions& o) { return (o.gpu.plan_cache_dir = value, absl::OkStatus()); }},
  };
  return *setters;
}

}  // namespace

std::string SessionConfigKeys() {
  std::string keys;
  for (const auto& [key, setter] : Setters()) absl::StrAppend(&keys, keys.empty() ? "" : ", ", key);
  return keys;
}

absl::Status ApplySessionConfig(const std::string& key, const std::string& value, SessionOptions& options) {
  const auto it = Setters().find(key);
  if (it == Setters().end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown session config key '", key, "' (known: ", SessionConfigKeys(), ")"));
  }
  absl::Status status = it->second(value, options);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat("session config ", key, ": ", status.message()));
  return absl::OkStatus();
}

}  // namespace runtime
