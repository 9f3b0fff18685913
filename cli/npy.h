// Reads NumPy .npy files (format 1.0-3.0, C order, little-endian numeric and bool dtypes).
#ifndef ONNXRUN_CLI_NPY_H_
#define ONNXRUN_CLI_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/tensor.h"

namespace cli {

absl::StatusOr<ir::Tensor> ReadNpy(const std::string& path);

}  // namespace cli

#endif  // ONNXRUN_CLI_NPY_H_
