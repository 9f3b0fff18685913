// Generated model inputs: deterministic random data for an input the user did not give (onnxrun run,
// and onnxrun test on a model with no stored data).
#ifndef ONNXRUN_CLI_INPUTS_H_
#define ONNXRUN_CLI_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "runtime/session.h"

namespace cli {

// Floats uniform in [-1, 1), integers in [0, 4), bools, strings holding such floats as text. Symbolic
// dims: a named one listed in `named_dims` takes that size; otherwise the first is `batch`, others 1.
// InvalidArgument when the input's rank is unknown.
absl::StatusOr<ir::Tensor> GenerateInput(const runtime::TensorInfo& info, int64_t batch, uint64_t seed,
                                         const std::map<std::string, int64_t>& named_dims = {});

}  // namespace cli

#endif  // ONNXRUN_CLI_INPUTS_H_
