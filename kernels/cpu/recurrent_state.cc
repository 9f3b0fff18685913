// The CPU reference kernels of CausalConvWithState and LinearAttention (opset 27; inference in
// ops/recurrent_state.cc), computed in double: the causal depthwise convolution over past_state
// followed by the input, and the linear-attention recurrences token by token as the spec writes
// them (decay, delta correction, write, read with grouped-query heads).
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

absl::Status CausalConvWithState(KernelContext& ctx) {
  const ir::Tensor &x = *ctx.input(0), &w = *ctx.input(1);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], length = x.shape()[2], k = w.shape()[2];
  if (w.shape()[0] != channels || w.shape()[1] != 1 || k < 1) {
    return absl::InvalidArgumentError(absl::StrCat("weight must be [", channels, ", 1, k]"));
  }
  const ir::Tensor* bias = ctx.input(2);
  const ir::Tensor* past = ctx.input(3);
  if (bias != nullptr && bias->num_elements() != channels) return absl::InvalidArgumentError("bias must be [channels]");
  if (past != nullptr && past->shape() != std::vector<int64_t>{batch, channels, k - 1}) {
    return absl::InvalidArgumentError(absl::StrCat("past_state must be [", batch, ", ", channels, ", ", k - 1, "]"));
  }
  absl::StatusOr<std::vector<double>> in = ReadDoubles(x), weight = ReadDoubles(w);
  if (!in.ok()) return in.status();
  if (!weight.ok()) return weight.status();
  std::vector<double> carried(static_cast<size_t>(batch * channels * (k - 1)), 0.0), b(channels, 0.0);
  if (past != nullptr) {
    absl::StatusOr<std::vector<double>> p = ReadDoubles(*past);
    if (!p.ok()) return p.status();
    carried = *std::move(p);
  }
  if (bias != nullptr) {
    absl::StatusOr<std::vector<double>> values = ReadDoubles(*bias);
    if (!values.ok()) return values.status();
    b = *std::move(values);
  }
  const std::string activation = ctx.attrs().GetString("activation", "none");
  const bool silu = activation == "silu" || activation == "swish";
  std::vector<double> y(in->size()), present(carried.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      // The padded sequence: the k - 1 carried values, then the input.
      std::vector<double> seq(carried.begin() + (n * channels + c) * (k - 1),
                              carried.begin() + (n * channels + c + 1) * (k - 1));
      seq.insert(seq.end(), in->begin() + (n * channels + c) * length, in->begin() + (n * channels + c + 1) * length);
      for (int64_t t = 0; t < length; ++t) {
        double sum = b[c];
        for (int64_t j = 0; j < k; ++j) sum += (*weight)[c * k + j] * seq[t + j];
        y[(n * channels + c) * length + t] = silu ? sum / (1 + std::exp(-sum)) : sum;
      }
      std::copy(seq.end() - (k - 1), seq.end(), present.begin() + (n * channels + c) * (k - 1));
    }
  }
  if (absl::Status s = WriteDoubles(y, *ctx.output(0)); !s.ok()) return s;
  return ctx.output(1) == nullptr ? absl::OkStatus() : WriteDoubles(present, *ctx.output(1));
}

// LinearAttention's operands as doubles with their head layout.
struct LinearAttentionShapes {
  int64_t batch, steps, q_heads, kv_heads, d_k, d_v, decay_width, beta_width;
};

absl::StatusOr<std::vector<double>> OptionalDoubles(const ir::Tensor* t) {
  if (t == nullptr) return std::vector<double>{};
  return ReadDoubles(*t);
}

absl::Status LinearAttention(KernelContext& ctx) {
  const ir::Tensor &q = *ctx.input(0), &k = *ctx.input(1), &v = *ctx.input(2);
  LinearAttentionShapes s{q.shape()[0],
                          q.shape()[1],
                          ctx.attrs().GetInt("q_num_heads", 1),
                          ctx.attrs().GetInt("kv_num_heads", 1),
                          0,
                          0,
                          0,
                          0};
  if (s.q_heads <= 0 || s.kv_heads <= 0 || s.q_heads % s.kv_heads != 0) {
    return absl::InvalidArgumentError("q_num_heads must be a positive multiple of kv_num_heads");
  }
  s.d_k = q.shape()[2] / s.q_heads, s.d_v = v.shape()[2] / s.kv_heads;
  if (k.shape() != std::vector<int64_t>{s.batch, s.steps, s.kv_heads * s.d_k} ||
      v.shape() != std::vector<int64_t>{s.batch, s.steps, s.kv_heads * s.d_v} || q.shape()[2] != s.q_heads * s.d_k) {
    return absl::InvalidArgumentError("query, key and value do not match the head counts");
  }
  const ir::Tensor *past = ctx.input(3), *decay = ctx.input(4), *beta = ctx.input(5);
  s.decay_width = decay == nullptr ? 0 : decay->shape().back();
  s.beta_width = beta == nullptr ? 0 : beta->shape().back();
  if (decay != nullptr && s.decay_width != s.kv_heads && s.decay_width != s.kv_heads * s.d_k) {
    return absl::InvalidArgumentError("decay's last axis must be kv_num_heads or kv_num_heads * d_k");
  }
  if (beta != nullptr && s.beta_width != s.kv_heads && s.beta_width != 1) {
    return absl::InvalidArgumentError("beta's last axis must be kv_num_heads or 1");
  }
  // One row of decay / beta per batch and step (the fuzzer found a shorter decay read past its end).
  for (const ir::Tensor* per_step : {decay, beta}) {
    if (per_step != nullptr && per_step->num_elements() != s.batch * s.steps * per_step->shape().back()) {
      return absl::InvalidArgumentError("decay and beta must be [batch, steps, width]");
    }
  }
  if (past != nullptr && past->shape() != std::vector<int64_t>{s.batch, s.kv_heads, s.d_k, s.d_v}) {
    return absl::InvalidArgumentError("past_state must be [B, kv_num_heads, d_k, d_v]");
  }
  absl::StatusOr<std::vector<double>> qs = ReadDoubles(q), ks = ReadDoubles(k), vs = ReadDoubles(v);
  absl::StatusOr<std::vector<double>> state = OptionalDoubles(past), gs = OptionalDoubles(decay),
                                      bs = OptionalDoubles(beta);
  for (const auto* r : {&qs, &ks, &vs, &state, &gs, &bs}) {
    if (!r->ok()) return r->status();
  }
  if (past == nullptr) state->assign(static_cast<size_t>(s.batch * s.kv_heads * s.d_k * s.d_v), 0.0);
  const double given = ctx.attrs().GetFloat("scale", 0.0f);
  const double scale = given == 0 ? 1.0 / std::sqrt(static_cast<double>(s.d_k)) : given;
  std::vector<double> out(static_cast<size_t>(s.batch * s.steps * s.q_heads * s.d_v));
  const int64_t group = s.q_heads / s.kv_heads;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t t = 0; t < s.steps; ++t) {
      const int64_t row = n * s.steps + t;
      for (int64_t h = 0; h < s.kv_heads; ++h) {
        double* st = state->data() + (n * s.kv_heads + h) * s.d_k * s.d_v;  // [d_k, d_v]
        const double* kt = ks->data() + row * s.kv_heads * s.d_k + h * s.d_k;
        std::vector<double> vt(vs->begin() + row * s.kv_heads * s.d_v + h * s.d_v,
                               vs->begin() + row * s.kv_heads * s.d_v + (h + 1) * s.d_v);
        if (decay != nullptr) {  // S *= exp(g_t), per head or per key dimension
          for (int64_t i = 0; i < s.d_k; ++i) {
            const double g =
                s.decay_width == s.kv_heads ? (*gs)[row * s.kv_heads + h] : (*gs)[row * s.decay_width + h * s.d_k + i];
            for (int64_t m = 0; m < s.d_v; ++m) st[i * s.d_v + m] *= std::exp(g);
          }
        }
        if (beta != nullptr) {  // v_t <- beta_t * (v_t - S^T k_t)
          const double b = (*bs)[row * s.beta_width + (s.beta_width == 1 ? 0 : h)];
          for (int64_t m = 0; m < s.d_v; ++m) {
            double retrieved = 0;
            for (int64_t i = 0; i < s.d_k; ++i) retrieved += st[i * s.d_v + m] * kt[i];
            vt[m] = b * (vt[m] - retrieved);
          }
        }
        for (int64_t i = 0; i < s.d_k; ++i) {
          for (int64_t m = 0; m < s.d_v; ++m) st[i * s.d_v + m] += kt[i] * vt[m];
        }
        for (int64_t hq = h * group; hq < (h + 1) * group; ++hq) {  // o_t = scale * q_t^T S
          const double* qt = qs->data() + row * s.q_heads * s.d_k + hq * s.d_k;
          for (int64_t m = 0; m < s.d_v; ++m) {
            double sum = 0;
            for (int64_t i = 0; i < s.d_k; ++i) sum += qt[i] * st[i * s.d_v + m];
            out[(row * s.q_heads + hq) * s.d_v + m] = scale * sum;
          }
        }
      }
    }
  }
  if (absl::Status st = WriteDoubles(out, *ctx.output(0)); !st.ok()) return st;
  return ctx.output(1) == nullptr ? absl::OkStatus() : WriteDoubles(*state, *ctx.output(1));
}

}  // namespace

std::vector<KernelDef> RecurrentStateKernels() {
  return {{"CausalConvWithState", CausalConvWithState}, {"LinearAttention", LinearAttention}};
}

}  // namespace kernels::cpu
