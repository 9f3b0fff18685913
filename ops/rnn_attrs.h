// The attributes of the recurrent ops RNN, GRU and LSTM, parsed once and validated: direction,
// hidden_size, per-gate activation functions with their alpha/beta, clip, input_forget,
// linear_before_reset and layout. Used by their inference (ops/rnn.cc) and CPU kernels
// (kernels/cpu/rnn.cc).
#ifndef ONNXRUN_OPS_RNN_ATTRS_H_
#define ONNXRUN_OPS_RNN_ATTRS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace ops {

enum class RnnKind { kRnn, kGru, kLstm };

enum class RnnActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

// One activation function with its parameters (the defaults of the ONNX op of that name when
// activation_alpha / activation_beta give none).
struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0;
  float beta = 0;
};

// f(x) for one activation (T float or double).
template <typename T>
T ApplyRnnActivation(const RnnActivation& f, T x) {
  const T alpha = f.alpha, beta = f.beta;
  switch (f.kind) {
    case RnnActivationKind::kRelu: return std::max(x, T{0});
    case RnnActivationKind::kTanh: return std::tanh(x);
    case RnnActivationKind::kSigmoid: return T{1} / (T{1} + std::exp(-x));
    case RnnActivationKind::kAffine: return alpha * x + beta;
    case RnnActivationKind::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case RnnActivationKind::kThresholdedRelu: return x > alpha ? x : T{0};
    case RnnActivationKind::kScaledTanh: return alpha * std::tanh(beta * x);
    case RnnActivationKind::kHardSigmoid: return std::clamp(alpha * x + beta, T{0}, T{1});
    case RnnActivationKind::kElu: return x >= 0 ? x : alpha * (std::exp(x) - T{1});
    case RnnActivationKind::kSoftsign: return x / (T{1} + std::fabs(x));
    case RnnActivationKind::kSoftplus: return x > T{20} ? x : std::log1p(std::exp(x));
  }
  return x;
}

struct RnnAttrs {
  RnnKind kind = RnnKind::kRnn;
  int64_t num_gates = 1;               // rows of W per hidden unit: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c)
  int64_t num_directions = 1;          // 2 for bidirectional
  bool reverse = false;                // direction "reverse" (only meaningful when num_directions == 1)
  std::optional<int64_t> hidden_size;  // nullopt when the attribute is absent (then R's last dim)
  // num_directions x functions-per-direction (RNN 1: f; GRU 2: f, g; LSTM 3: f, g, h).
  std::vector<RnnActivation> activations;
  std::optional<float> clip;         // gate pre-activations are clipped to [-clip, clip]
  bool input_forget = false;         // LSTM: f = 1 - i
  bool linear_before_reset = false;  // GRU
  bool batch_major = false;          // layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden]

  int64_t functions_per_direction() const { return kind == RnnKind::kRnn ? 1 : kind == RnnKind::kGru ? 2 : 3; }
  const RnnActivation& activation(int64_t direction, int64_t i) const {
    return activations[direction * functions_per_direction() + i];
  }
};

// Parses the attributes of an RNN, GRU or LSTM node; an error for any other op type or an
// invalid attribute (unknown direction or activation, wrong number of activations, clip <= 0,
// hidden_size <= 0, layout not 0/1).
absl::StatusOr<RnnAttrs> ParseRnnAttrs(const ir::Node& node);

}  // namespace ops

#endif  // ONNXRUN_OPS_RNN_ATTRS_H_
