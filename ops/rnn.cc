// The recurrent ops RNN, GRU and LSTM: their attribute parser (ops/rnn_attrs.h) and their type and
// shape inference (inputs X, W, R, B?, sequence_lens?, initial_h?, and for LSTM initial_c?, P?;
// outputs Y?, Y_h?, Y_c?; layout 0 or 1).
#include <cctype>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/rnn_attrs.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

constexpr int64_t kMaxHiddenSize = int64_t{1} << 24;

// Which of alpha and beta an activation takes, and their defaults.
struct ActivationSpec {
  RnnActivationKind kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;
};

absl::StatusOr<ActivationSpec> FindActivation(const std::string& name) {
  static const auto* specs = new std::map<std::string, ActivationSpec>{
      {"relu", {RnnActivationKind::kRelu, false, false, 0, 0}},
      {"tanh", {RnnActivationKind::kTanh, false, false, 0, 0}},
      {"sigmoid", {RnnActivationKind::kSigmoid, false, false, 0, 0}},
      {"affine", {RnnActivationKind::kAffine, true, true, 1.0f, 0.0f}},
      {"leakyrelu", {RnnActivationKind::kLeakyRelu, true, false, 0.01f, 0}},
      {"thresholdedrelu", {RnnActivationKind::kThresholdedRelu, true, false, 1.0f, 0}},
      {"scaledtanh", {RnnActivationKind::kScaledTanh, true, true, 1.0f, 1.0f}},
      {"hardsigmoid", {RnnActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f}},
      {"elu", {RnnActivationKind::kElu, true, false, 1.0f, 0}},
      {"softsign", {RnnActivationKind::kSoftsign, false, false, 0, 0}},
      {"softplus", {RnnActivationKind::kSoftplus, false, false, 0, 0}},
  };
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = specs->find(lower);
  if (it == specs->end()) return absl::InvalidArgumentError(absl::StrCat("unknown activation \"", name, "\""));
  return it->second;
}

std::vector<std::string> GetStrings(const ir::Attributes& attrs, const std::string& name) {
  auto it = attrs.all().find(name);
  if (it == attrs.all().end()) return {};
  if (const auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
  return {};
}

// The activations: given ones (alpha/beta consumed in order by the functions that take them),
// else the op's defaults; one list per direction.
absl::Status ParseActivations(const ir::Attributes& attrs, RnnAttrs& a) {
  const int64_t per_direction = a.functions_per_direction();
  const size_t needed = static_cast<size_t>(per_direction * a.num_directions);
  std::vector<std::string> names = GetStrings(attrs, "activations");
  if (names.empty()) {
    static const std::vector<std::string> kDefaults[] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    names = kDefaults[per_direction - 1];
  }
  const std::vector<float> alphas = attrs.GetFloats("activation_alpha");
  const std::vector<float> betas = attrs.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    absl::StatusOr<ActivationSpec> spec = FindActivation(name);
    if (!spec.ok()) return spec.status();
    RnnActivation f{spec->kind, spec->alpha, spec->beta};
    if (spec->takes_alpha && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (spec->takes_beta && next_beta < betas.size()) f.beta = betas[next_beta++];
    a.activations.push_back(f);
  }
  if (a.activations.size() == static_cast<size_t>(per_direction) && a.num_directions == 2) {
    a.activations.insert(a.activations.end(), a.activations.begin(), a.activations.end());
  }
  if (a.activations.size() < needed) {
    return absl::InvalidArgumentError(absl::StrCat("activations has ", names.size(), " entries, expected ", needed));
  }
  a.activations.resize(needed);
  return absl::OkStatus();
}

Dim DimOf(const TensorType& t, size_t i) { return t.shape && t.shape->size() > i ? (*t.shape)[i] : Dim(); }

absl::StatusOr<Types> InferRnn(const InferContext& ctx) {
  absl::StatusOr<RnnAttrs> attrs = ParseRnnAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const RnnAttrs& a = *attrs;
  const bool lstm = a.kind == RnnKind::kLstm;
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
      !s.ok())
    return s;
  const DType dtype = ctx.type(0).dtype;
  for (size_t i : {1, 2}) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat(i == 1 ? "W" : "R", " is missing"));
  }
  for (size_t i : {1, 2, 3, 5, 6, 7}) {
    if (ctx.has_input(i) && ctx.type(i).dtype != dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has dtype ", ir::DTypeName(ctx.type(i).dtype), ", X has ", ir::DTypeName(dtype)));
    }
  }
  if (ctx.has_input(4)) {
    if (absl::Status s = ExpectDType(ctx, 4, {DType::kInt32}); !s.ok()) return s;
  }
  const TensorType& x = ctx.type(0);
  if (x.shape && x.rank() != 3) return absl::InvalidArgumentError(absl::StrCat("X must be 3-D, got rank ", x.rank()));
  const Dim seq = DimOf(x, a.batch_major ? 1 : 0), batch = DimOf(x, a.batch_major ? 0 : 1), input = DimOf(x, 2);
  const Dim hidden = a.hidden_size ? Dim(*a.hidden_size) : DimOf(ctx.type(2), 2);
  const Dim dirs(a.num_directions);
  const Dim rows = hidden * Dim(a.num_gates);
  if (absl::Status s = ExpectDims(ctx.type(1), {dirs, rows, input}, "W"); !s.ok()) return s;
  if (absl::Status s = ExpectDims(ctx.type(2), {dirs, rows, hidden}, "R"); !s.ok()) return s;
  if (ctx.has_input(3)) {
    if (absl::Status s = ExpectDims(ctx.type(3), {dirs, rows * Dim(2)}, "B"); !s.ok()) return s;
  }
  if (ctx.has_input(4)) {
    if (absl::Status s = ExpectDims(ctx.type(4), {batch}, "sequence_lens"); !s.ok()) return s;
  }
  const Shape state = a.batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  for (size_t i : {5, 6}) {
    if (!ctx.has_input(i) || (i == 6 && !lstm)) continue;
    if (absl::Status s = ExpectDims(ctx.type(i), state, i == 5 ? "initial_h" : "initial_c"); !s.ok()) return s;
  }
  if (lstm && ctx.has_input(7)) {
    if (absl::Status s = ExpectDims(ctx.type(7), {dirs, hidden * Dim(3)}, "P"); !s.ok()) return s;
  }
  const Shape y = a.batch_major ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Types out = {TensorType{dtype, y}};
  for (size_t o = 1; o < ctx.num_outputs() && o < (lstm ? 3u : 2u); ++o) out.push_back(TensorType{dtype, state});
  if (ctx.num_outputs() > (lstm ? 3u : 2u)) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.num_outputs(), " outputs, at most ", lstm ? 3 : 2));
  }
  return out;
}

}  // namespace

absl::StatusOr<RnnAttrs> ParseRnnAttrs(const ir::Node& node) {
  RnnAttrs a;
  if (node.op_type == "RNN") {
    a.kind = RnnKind::kRnn;
  } else if (node.op_type == "GRU") {
    a.kind = RnnKind::kGru;
  } else if (node.op_type == "LSTM") {
    a.kind = RnnKind::kLstm;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("not a recurrent op: ", node.op_type));
  }
  a.num_gates = a.kind == RnnKind::kRnn ? 1 : a.kind == RnnKind::kGru ? 3 : 4;
  const ir::Attributes& attrs = node.attrs;
  const std::string direction = attrs.GetString("direction", "forward");
  if (direction == "bidirectional") {
    a.num_directions = 2;
  } else if (direction == "reverse") {
    a.reverse = true;
  } else if (direction != "forward") {
    return absl::InvalidArgumentError(absl::StrCat("unknown direction \"", direction, "\""));
  }
  if (attrs.Has("hidden_size")) {
    const int64_t h = attrs.GetInt("hidden_size", 0);
    if (h <= 0 || h > kMaxHiddenSize)
      return absl::InvalidArgumentError(absl::StrCat("hidden_size ", h, " out of range"));
    a.hidden_size = h;
  }
  if (absl::Status s = ParseActivations(attrs, a); !s.ok()) return s;
  if (attrs.Has("clip")) {
    const float clip = attrs.GetFloat("clip", 0);
    if (!(clip > 0)) return absl::InvalidArgumentError(absl::StrCat("clip ", clip, " must be > 0"));
    a.clip = clip;
  }
  a.input_forget = attrs.GetInt("input_forget", 0) != 0;
  a.linear_before_reset = attrs.GetInt("linear_before_reset", 0) != 0;
  const int64_t layout = attrs.GetInt("layout", 0);
  if (layout != 0 && layout != 1) return absl::InvalidArgumentError(absl::StrCat("layout ", layout, " is not 0 or 1"));
  a.batch_major = layout == 1;
  return a;
}

std::vector<OpDef> RnnOpDefs() {
  return {
      {"RNN", 3, 6, InferRnn},
      {"GRU", 3, 6, InferRnn},
      {"LSTM", 3, 8, InferRnn},
  };
}

}  // namespace ops
