// Model inputs from files and generated ones (see inputs.h).
#include "cli/inputs.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/npy.h"
#include "importer/tensor_proto.h"
#include "importer/value_proto.h"
#include "ir/half.h"

namespace cli {
namespace {

absl::StatusOr<ir::Tensor> ReadTensorFile(const std::string& path) {
  if (absl::EndsWith(path, ".npy")) return ReadNpy(path);
  return importer::ReadTensorProtoFile(path);
}

}  // namespace

void NarrowToSessionInputs(std::vector<runtime::NamedTensor>& inputs, const std::vector<runtime::TensorInfo>& infos,
                           std::vector<std::string>* notes) {
  for (runtime::NamedTensor& in : inputs) {
    const auto info = std::find_if(infos.begin(), infos.end(), [&](const auto& i) { return i.name == in.name; });
    if (info == infos.end() || !in.tensor.is_dense() || in.tensor.dtype() != ir::DType::kFloat32) continue;
    const ir::DType half = info->type.dtype;
    if (half != ir::DType::kFloat16 && half != ir::DType::kBFloat16) continue;
    absl::StatusOr<ir::Tensor> narrow = ir::Tensor::Create(half, in.tensor.shape());
    if (!narrow.ok()) continue;  // Run says what does not fit
    const float* from = in.tensor.data<float>();
    for (int64_t i = 0; i < narrow->num_elements(); ++i) {
      if (half == ir::DType::kFloat16) narrow->data<ir::Half>()[i] = ir::Half(from[i]);
      if (half == ir::DType::kBFloat16) narrow->data<ir::BFloat16>()[i] = ir::BFloat16(from[i]);
    }
    in.tensor = *std::move(narrow);
    if (notes != nullptr) {
      notes->push_back(absl::StrCat("input  '", in.name, "': float32 -> ", ir::DTypeName(half), " (--half-inputs)"));
    }
  }
}

absl::StatusOr<ir::Tensor> GenerateInput(const runtime::TensorInfo& info, int64_t batch, uint64_t seed,
                                         const std::map<std::string, int64_t>& named_dims) {
  if (!info.type.is_tensor()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", info.name, "' is ", info.type.ToString(),
                     ": give it with --input or --input-dir (a SequenceProto, MapProto or OptionalProto)"));
  }
  if (!info.type.shape) {
    return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has unknown rank: give it with --input"));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < info.type.shape->size(); ++i) {
    const ir::Dim& d = (*info.type.shape)[i];
    auto named = named_dims.find(d.symbol);
    if (!d.known() && !d.symbol.empty() && named != named_dims.end()) {
      dims.push_back(named->second);
    } else {
      dims.push_back(d.known() ? d.value : (i == 0 ? batch : 1));
    }
  }
  absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(info.type.dtype, dims);
  if (!t.ok()) return t.status();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    switch (t->dtype()) {
      case ir::DType::kString: t->mutable_strings()[i] = absl::StrCat(real(rng)); break;  // numbers as text
      case ir::DType::kFloat32: t->data<float>()[i] = static_cast<float>(real(rng)); break;
      case ir::DType::kFloat64: t->data<double>()[i] = real(rng); break;
      case ir::DType::kFloat16: t->data<ir::Half>()[i] = ir::Half(static_cast<float>(real(rng))); break;
      case ir::DType::kBFloat16: t->data<ir::BFloat16>()[i] = ir::BFloat16(static_cast<float>(real(rng))); break;
      case ir::DType::kInt64: t->data<int64_t>()[i] = small(rng); break;
      case ir::DType::kInt32: t->data<int32_t>()[i] = small(rng); break;
      case ir::DType::kBool: t->data<uint8_t>()[i] = small(rng) & 1; break;
      default: static_cast<uint8_t*>(t->raw_data())[i * ir::DTypeSize(t->dtype())] = small(rng); break;
    }
  }
  return t;
}

absl::StatusOr<std::vector<runtime::NamedTensor>> CollectInputs(const InputSources& sources,
                                                                const std::vector<runtime::TensorInfo>& infos,
                                                                std::vector<std::string>* generated) {
  std::vector<runtime::NamedTensor> inputs;
  auto given = [&](const std::string& name) {
    for (const auto& in : inputs)
      if (in.name == name) return true;
    return false;
  };
  for (const auto& [name, path] : sources.files) {
    // A sequence, map or optional input reads the proto its declared type names.
    const runtime::TensorInfo* info = nullptr;
    for (const auto& i : infos)
      if (i.name == name) info = &i;
    absl::StatusOr<ir::Tensor> t = info != nullptr && !info->type.is_tensor() && !absl::EndsWith(path, ".npy")
                                       ? importer::ReadValueFile(path, info->type)
                                       : ReadTensorFile(path);
    if (!t.ok()) return t.status();
    inputs.push_back({name, *std::move(t)});
  }
  if (!sources.dir.empty()) {
    if (!std::filesystem::is_directory(sources.dir)) {
      return absl::NotFoundError(absl::StrCat("--input-dir '", sources.dir, "' is not a folder"));
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      std::string path = absl::StrCat(sources.dir, "/input_", i, ".pb");
      if (!std::filesystem::exists(path) || given(infos[i].name)) continue;
      absl::StatusOr<ir::Tensor> t = importer::ReadValueFile(path, infos[i].type);
      if (!t.ok()) return t.status();
      inputs.push_back({infos[i].name, *std::move(t)});
    }
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (given(infos[i].name)) continue;
    absl::StatusOr<ir::Tensor> t = GenerateInput(infos[i], sources.batch, sources.seed + i, sources.named_dims);
    if (!t.ok()) return t.status();
    if (generated != nullptr) {
      generated->push_back(absl::StrFormat("input  '%s': generated %s%s", infos[i].name, ir::DTypeName(t->dtype()),
                                           ir::ShapeToString(t->shape())));
    }
    inputs.push_back({infos[i].name, *std::move(t)});
  }
  return inputs;
}

}  // namespace cli
