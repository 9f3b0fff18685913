// Model inputs: read from files (.npy, TensorProto .pb, ONNX's test layout) and deterministic random
// data for an input the user did not give (onnxrun run, and onnxrun test on a model with no stored
// data).
#ifndef ONNXRUN_CLI_INPUTS_H_
#define ONNXRUN_CLI_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "runtime/session.h"

namespace cli {

// Floats uniform in [-1, 1), integers in [0, 4), bools, strings holding such floats as text. Symbolic
// dims: a named one listed in `named_dims` takes that size; otherwise the first is `batch`, others 1.
// InvalidArgument when the input's rank is unknown.
absl::StatusOr<ir::Tensor> GenerateInput(const runtime::TensorInfo& info, int64_t batch, uint64_t seed,
                                         const std::map<std::string, int64_t>& named_dims = {});

// Where onnxrun run's inputs come from: `files` (NAME, path of a .npy or TensorProto .pb), then
// `dir`/input_<i>.pb in graph-input order (ONNX's test layout) for inputs not given, then generated
// ones (GenerateInput with `batch`, `seed` + i, `named_dims`).
struct InputSources {
  std::vector<std::pair<std::string, std::string>> files;
  std::string dir;
  int64_t batch = 1;
  uint64_t seed = 0;
  std::map<std::string, int64_t> named_dims;
};

// --half-inputs: each float32 tensor of `inputs` whose model input the session takes as float16 /
// bfloat16 (`infos`) converted to it (round to nearest even, as the device's Cast would), with a
// line in `notes` (optional).
void NarrowToSessionInputs(std::vector<runtime::NamedTensor>& inputs, const std::vector<runtime::TensorInfo>& infos,
                           std::vector<std::string>* notes);

// The inputs in that order; `generated` (optional) gets a line per generated input. NotFound when
// `dir` is not a folder; a file's read error as is.
absl::StatusOr<std::vector<runtime::NamedTensor>> CollectInputs(const InputSources& sources,
                                                                const std::vector<runtime::TensorInfo>& infos,
                                                                std::vector<std::string>* generated = nullptr);

}  // namespace cli

#endif  // ONNXRUN_CLI_INPUTS_H_
