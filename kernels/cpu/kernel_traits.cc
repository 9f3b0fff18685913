// The op lists behind kernel_traits.h; each entry is a kernel whose loops were read for the property.
#include "kernels/cpu/kernel_traits.h"

#include "absl/container/flat_hash_set.h"

namespace kernels::cpu {
namespace {

// Unary elementwise kernels (elementwise_unary.cc's UnaryFloat / UnaryNumeric, Clip) and the
// same-dtype binary ones (SameTypeBinary): out[i] from in[i] alone, every i written.
const absl::flat_hash_set<std::string_view>& ElementwiseOps() {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      "Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "HardSigmoid", "HardSwish", "Neg",
      "Abs",  "Exp",  "Sqrt",    "Erf",  "Gelu",      "Add", "Sub",         "Mul",       "Div"};
  return *ops;
}

}  // namespace

bool WritesEveryOutputElement(std::string_view op_type) {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      "Conv", "MatMul", "Gemm", "MaxPool", "GlobalAveragePool", "GlobalMaxPool", "Pad"};
  return ops->contains(op_type) || ElementwiseOps().contains(op_type);
}

bool MayWriteOverInput(std::string_view op_type) { return ElementwiseOps().contains(op_type); }

bool IsElementwise(std::string_view op_type) { return ElementwiseOps().contains(op_type); }

}  // namespace kernels::cpu
