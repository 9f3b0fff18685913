// Builds the generated inputs and drives Create + Run for one fuzz input.
#include "tests/fuzz/fuzz_session.h"

#include <string>
#include <utility>
#include <vector>

#include "ir/half.h"

namespace fuzz {
namespace {

// Deterministic data: floats in [-1, 1), integers in [0, 4), strings holding such integers.
void Fill(ir::Tensor& t) {
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int v = static_cast<int>((i * 7 + 3) % 4);
    const float f = static_cast<float>((i * 37) % 200) / 100.0f - 1.0f;
    switch (t.dtype()) {
      case ir::DType::kFloat32: t.data<float>()[i] = f; break;
      case ir::DType::kFloat64: t.data<double>()[i] = f; break;
      case ir::DType::kFloat16: t.data<ir::Half>()[i] = ir::Half(f); break;
      case ir::DType::kInt64: t.data<int64_t>()[i] = v; break;
      case ir::DType::kInt32: t.data<int32_t>()[i] = v; break;
      case ir::DType::kBool: t.data<uint8_t>()[i] = v & 1; break;
      case ir::DType::kString: t.mutable_strings()[i] = std::to_string(v); break;
      default: static_cast<uint8_t*>(t.raw_data())[i * ir::DTypeSize(t.dtype())] = v; break;
    }
  }
}

}  // namespace

runtime::SessionOptions FuzzSessionOptions() {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.limits.max_model_bytes = 8 << 20;
  options.limits.max_nodes = 2000;
  options.limits.max_tensor_bytes = 4 << 20;
  options.limits.max_total_initializer_bytes = 64 << 20;
  return options;
}

absl::Status CreateAndRun(std::string_view bytes) {
  const runtime::SessionOptions options = FuzzSessionOptions();
  absl::StatusOr<std::unique_ptr<runtime::Session>> session = runtime::Session::CreateFromBytes(bytes, options);
  if (!session.ok()) return session.status();
  std::vector<runtime::NamedTensor> inputs;
  for (const runtime::TensorInfo& info : (*session)->inputs()) {
    if (!info.type.shape) return absl::InvalidArgumentError("input of unknown rank");
    std::vector<int64_t> dims;
    int64_t bytes_needed = static_cast<int64_t>(ir::DTypeLimitSize(info.type.dtype));
    for (const ir::Dim& d : *info.type.shape) {
      dims.push_back(d.known() ? d.value : 1);
      bytes_needed *= dims.back();  // each input passed the importer's tensor limit
    }
    if (bytes_needed > options.limits.max_tensor_bytes) {
      return absl::ResourceExhaustedError("input too large to generate");
    }
    absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(info.type.dtype, std::move(dims));
    if (!t.ok()) return t.status();
    Fill(*t);
    inputs.push_back({info.name, *std::move(t)});
  }
  absl::StatusOr<std::vector<runtime::NamedTensor>> outputs = (*session)->Run(inputs);
  return outputs.ok() ? absl::OkStatus() : outputs.status();
}

}  // namespace fuzz
