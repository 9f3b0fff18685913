// Generated model inputs (see inputs.h).
#include "cli/inputs.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/half.h"

namespace cli {

absl::StatusOr<ir::Tensor> GenerateInput(const runtime::TensorInfo& info, int64_t batch, uint64_t seed,
                                         const std::map<std::string, int64_t>& named_dims) {
  if (!info.type.is_tensor()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' is ", info.type.ToString(),
                                                   ": give it with --input-dir (a SequenceProto or OptionalProto)"));
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

}  // namespace cli
