// The CPU kernel of com.microsoft.Tokenizer (ops/tokenizer.h has the rules): each string's tokens,
// the start and end marks, the padding; Y's last dim is the most tokens of any string, so Y is made
// here (checked against ir::kMaxTensorBytes before its strings are copied).
#include "ops/tokenizer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

absl::Status Tokenizer(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr || x->strings() == nullptr) return absl::InvalidArgumentError("Tokenizer: X must be strings");
  if (x->rank() != 1 && x->rank() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("Tokenizer: X must be [C] or [N, C], not ", x->Describe()));
  }
  absl::StatusOr<ops::TokenizerAttrs> attrs = ops::ParseTokenizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  std::vector<std::vector<std::string_view>> rows;
  rows.reserve(x->num_elements());
  int64_t most = 0, bytes = 0;
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    absl::StatusOr<std::vector<std::string_view>> tokens = ops::Tokenize(x->strings()[i], *attrs);
    if (!tokens.ok())
      return absl::Status(tokens.status().code(),
                          absl::StrCat("Tokenizer: element ", i, ": ", tokens.status().message()));
    most = std::max(most, static_cast<int64_t>(tokens->size()));
    bytes += static_cast<int64_t>(x->strings()[i].size());
    rows.push_back(*std::move(tokens));
  }
  const int64_t width = most == 0 ? 0 : most + (attrs->mark ? 2 : 0);
  const int64_t cells = x->num_elements() * width;
  if (cells * static_cast<int64_t>(ir::kStringElementBytes + attrs->pad_value.size()) + bytes > ir::kMaxTensorBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Tokenizer: the result would take more than the limit of ", ir::kMaxTensorBytes, " bytes"));
  }
  std::vector<int64_t> y_dims = x->shape();
  y_dims.push_back(width);
  absl::StatusOr<ir::Tensor> y = ir::Tensor::Create(ir::DType::kString, y_dims);
  if (!y.ok()) return y.status();
  std::string* out = y->mutable_strings();
  for (const std::vector<std::string_view>& row : rows) {
    if (width == 0) break;
    std::string* cell = out;
    if (attrs->mark) (cell++)->assign(1, '\x02');
    for (std::string_view token : row) (cell++)->assign(token);
    if (attrs->mark) (cell++)->assign(1, '\x03');
    for (std::string* end = out + width; cell < end; ++cell) *cell = attrs->pad_value;
    out += width;
  }
  ir::Tensor* y_out = ctx.output(0);
  if (y_out != nullptr) *y_out = *std::move(y);
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> TokenizerKernels() { return {{"com.microsoft.Tokenizer", Tokenizer}}; }

}  // namespace kernels::cpu
