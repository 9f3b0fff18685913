// CPU kernels of RNN, GRU and LSTM (ONNX equations, attributes from ops/rnn_attrs.h): per
// direction, the input projection of every time step is one BLAS gemm, then each step does one
// gemm with R (two for GRU with linear_before_reset 0) and the gate arithmetic. Steps at or past a
// batch entry's sequence_lens leave its state unchanged and its Y rows zero. float16 runs through
// float32.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"
#include "ops/rnn_attrs.h"

namespace kernels::cpu {
namespace {

using nn::Gemm;
using ops::RnnAttrs;
using ops::RnnKind;

struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  int64_t rows() const { return gates * hidden; }  // rows of W and R per direction
};

// Input tensors by role (nullptr when absent) and the outputs (nullptr when not requested).
struct RnnIo {
  const ir::Tensor *x, *w, *r, *b, *seq_lens, *initial_h, *initial_c, *p;
  ir::Tensor *y, *y_h, *y_c;
};

RnnIo ReadIo(const KernelContext& ctx, bool lstm) {
  return {ctx.input(0),
          ctx.input(1),
          ctx.input(2),
          ctx.input(3),
          ctx.input(4),
          ctx.input(5),
          lstm ? ctx.input(6) : nullptr,
          lstm ? ctx.input(7) : nullptr,
          ctx.output(0),
          ctx.output(1),
          lstm ? ctx.output(2) : nullptr};
}

absl::Status CheckShapes(const RnnIo& io, const RnnAttrs& a, const RnnDims& d) {
  using nn::ExpectShape;
  const std::vector<int64_t> state =
      a.batch_major ? std::vector<int64_t>{d.batch, d.dirs, d.hidden} : std::vector<int64_t>{d.dirs, d.batch, d.hidden};
  if (absl::Status s = ExpectShape(*io.w, {d.dirs, d.rows(), d.input}, "W"); !s.ok()) return s;
  if (absl::Status s = ExpectShape(*io.r, {d.dirs, d.rows(), d.hidden}, "R"); !s.ok()) return s;
  const struct {
    const ir::Tensor* t;
    std::vector<int64_t> shape;
    const char* name;
  } optional[] = {
      {io.b, {d.dirs, 2 * d.rows()}, "B"},
      {io.seq_lens, {d.batch}, "sequence_lens"},
      {io.initial_h, state, "initial_h"},
      {io.initial_c, state, "initial_c"},
      {io.p, {d.dirs, 3 * d.hidden}, "P"},
      {io.y,
       a.batch_major ? std::vector<int64_t>{d.batch, d.seq, d.dirs, d.hidden}
                     : std::vector<int64_t>{d.seq, d.dirs, d.batch, d.hidden},
       "Y"},
      {io.y_h, state, "Y_h"},
      {io.y_c, state, "Y_c"},
  };
  for (const auto& o : optional) {
    if (o.t == nullptr) continue;
    if (absl::Status s = ExpectShape(*o.t, o.shape, o.name); !s.ok()) return s;
  }
  for (const ir::Tensor* t : {io.w, io.r, io.b, io.initial_h, io.initial_c, io.p}) {
    if (t != nullptr && t->dtype() != io.x->dtype()) return absl::InvalidArgumentError("inputs differ in dtype");
  }
  if (io.seq_lens != nullptr && io.seq_lens->dtype() != ir::DType::kInt32) {
    return absl::InvalidArgumentError("sequence_lens must be int32");
  }
  return absl::OkStatus();
}

absl::StatusOr<RnnDims> ReadDims(const RnnIo& io, const RnnAttrs& a) {
  if (io.x == nullptr || io.w == nullptr || io.r == nullptr)
    return absl::InvalidArgumentError("X, W and R are required");
  if (io.x->rank() != 3 || io.w->rank() != 3 || io.r->rank() != 3) {
    return absl::InvalidArgumentError("X, W and R must be 3-D");
  }
  RnnDims d;
  d.seq = io.x->shape()[a.batch_major ? 1 : 0];
  d.batch = io.x->shape()[a.batch_major ? 0 : 1];
  d.input = io.x->shape()[2];
  d.hidden = a.hidden_size ? *a.hidden_size : io.r->shape()[2];
  d.dirs = a.num_directions;
  d.gates = a.num_gates;
  if (absl::Status s = CheckShapes(io, a, d); !s.ok()) return s;
  return d;
}

// Per batch entry, the number of valid steps (seq when sequence_lens is absent).
absl::StatusOr<std::vector<int64_t>> SequenceLengths(const ir::Tensor* lens, const RnnDims& d) {
  std::vector<int64_t> out(d.batch, d.seq);
  if (lens == nullptr) return out;
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t v = lens->data<int32_t>()[b];
    if (v < 0 || v > d.seq) {
      return absl::InvalidArgumentError(absl::StrCat("sequence_lens[", b, "] = ", v, " outside [0, ", d.seq, "]"));
    }
    out[b] = v;
  }
  return out;
}

// Offset of the hidden-size row for (direction, batch) in a state tensor, and for (t, d, b) in Y.
int64_t StateRow(const RnnAttrs& a, const RnnDims& d, int64_t dir, int64_t b) {
  return (a.batch_major ? b * d.dirs + dir : dir * d.batch + b) * d.hidden;
}
int64_t YRow(const RnnAttrs& a, const RnnDims& d, int64_t t, int64_t dir, int64_t b) {
  return (a.batch_major ? (b * d.seq + t) * d.dirs + dir : (t * d.dirs + dir) * d.batch + b) * d.hidden;
}

template <typename T>
T Clip(const RnnAttrs& a, T v) {
  return a.clip ? std::clamp(v, static_cast<T>(-*a.clip), static_cast<T>(*a.clip)) : v;
}

// One direction's recurrence, with its working buffers.
template <typename T>
class Direction {
 public:
  Direction(const RnnIo& io, const RnnAttrs& a, const RnnDims& d, int64_t dir, const std::vector<int64_t>& lens)
      : io_(io), a_(a), d_(d), dir_(dir), lens_(lens) {}

  // x: X in time-major order [seq, batch, input].
  absl::Status Run(const T* x) {
    const int64_t rows = d_.rows(), hidden = d_.hidden;
    absl::StatusOr<std::vector<T>> xw = nn::ScratchBuffer<T>(d_.seq * d_.batch, rows);
    if (!xw.ok()) return xw.status();
    xw_ = *std::move(xw);
    const T* w = io_.w->data<T>() + dir_ * rows * d_.input;
    if (absl::Status s = Gemm(false, true, d_.seq * d_.batch, rows, d_.input, T{1}, x, w, T{0}, xw_.data()); !s.ok()) {
      return s;
    }
    AddBias();
    h_.assign(d_.batch * hidden, T{0});
    c_.assign(d_.batch * hidden, T{0});
    LoadState(io_.initial_h, h_);
    LoadState(io_.initial_c, c_);
    gates_.resize(d_.batch * rows);
    rec_.resize(d_.batch * rows);
    tmp_.resize(d_.batch * hidden);
    const bool reverse = a_.reverse || dir_ == 1;
    for (int64_t s = 0; s < d_.seq; ++s) {
      const int64_t t = reverse ? d_.seq - 1 - s : s;
      if (absl::Status st = Step(t); !st.ok()) return st;
    }
    StoreState(io_.y_h, h_);
    StoreState(io_.y_c, c_);
    return absl::OkStatus();
  }

 private:
  // xw += Wb + Rb (GRU with linear_before_reset keeps Rb of the h gate for Step).
  void AddBias() {
    if (io_.b == nullptr) return;
    const int64_t rows = d_.rows();
    const T* wb = io_.b->data<T>() + dir_ * 2 * rows;
    const T* rb = wb + rows;
    std::vector<T> bias(rows);
    for (int64_t j = 0; j < rows; ++j) {
      const bool keep_rb = a_.kind == RnnKind::kGru && a_.linear_before_reset && j >= 2 * d_.hidden;
      bias[j] = wb[j] + (keep_rb ? T{0} : rb[j]);
    }
    for (int64_t i = 0; i < d_.seq * d_.batch; ++i) {
      T* row = xw_.data() + i * rows;
      for (int64_t j = 0; j < rows; ++j) row[j] += bias[j];
    }
  }

  void LoadState(const ir::Tensor* t, std::vector<T>& state) const {
    if (t == nullptr) return;
    for (int64_t b = 0; b < d_.batch; ++b) {
      const T* src = t->data<T>() + StateRow(a_, d_, dir_, b);
      std::copy(src, src + d_.hidden, state.data() + b * d_.hidden);
    }
  }

  void StoreState(ir::Tensor* t, const std::vector<T>& state) const {
    if (t == nullptr) return;
    for (int64_t b = 0; b < d_.batch; ++b) {
      const T* src = state.data() + b * d_.hidden;
      std::copy(src, src + d_.hidden, t->data<T>() + StateRow(a_, d_, dir_, b));
    }
  }

  const T* R(int64_t gate) const { return io_.r->data<T>() + (dir_ * d_.rows() + gate * d_.hidden) * d_.hidden; }

  absl::Status Step(int64_t t) {
    const int64_t rows = d_.rows();
    std::copy(xw_.data() + t * d_.batch * rows, xw_.data() + (t + 1) * d_.batch * rows, gates_.begin());
    absl::Status s;
    switch (a_.kind) {
      case RnnKind::kRnn: s = RnnStep(t); break;
      case RnnKind::kGru: s = GruStep(t); break;
      case RnnKind::kLstm: s = LstmStep(t); break;
    }
    if (!s.ok()) return s;
    if (io_.y != nullptr) {
      for (int64_t b = 0; b < d_.batch; ++b) {
        if (t >= lens_[b]) continue;
        std::copy(h_.data() + b * d_.hidden, h_.data() + (b + 1) * d_.hidden,
                  io_.y->data<T>() + YRow(a_, d_, t, dir_, b));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RnnStep(int64_t t) {
    const int64_t hidden = d_.hidden;
    if (absl::Status s = Gemm(false, true, d_.batch, hidden, hidden, T{1}, h_.data(), R(0), T{1}, gates_.data());
        !s.ok()) {
      return s;
    }
    const ops::RnnActivation& f = a_.activation(dir_, 0);
    for (int64_t b = 0; b < d_.batch; ++b) {
      if (t >= lens_[b]) continue;
      for (int64_t j = 0; j < hidden; ++j) {
        h_[b * hidden + j] = ops::ApplyRnnActivation(f, Clip(a_, gates_[b * hidden + j]));
      }
    }
    return absl::OkStatus();
  }

  // Gates z, r, h; H = (1 - z) * h~ + z * H.
  absl::Status GruStep(int64_t t) {
    const int64_t hidden = d_.hidden, rows = d_.rows();
    const ops::RnnActivation& f = a_.activation(dir_, 0);
    const ops::RnnActivation& g = a_.activation(dir_, 1);
    // rec_[:, 0:2H] = H * [Rz; Rr]^T.
    if (absl::Status s = Gemm(false, true, d_.batch, 2 * hidden, hidden, T{1}, h_.data(), R(0), T{0}, rec_.data());
        !s.ok()) {
      return s;
    }
    for (int64_t b = 0; b < d_.batch; ++b) {
      T* gate = gates_.data() + b * rows;
      const T* rec = rec_.data() + b * 2 * hidden;
      for (int64_t j = 0; j < 2 * hidden; ++j) gate[j] = ops::ApplyRnnActivation(f, Clip(a_, gate[j] + rec[j]));
      for (int64_t j = 0; j < hidden; ++j) {  // the operand of Rh
        tmp_[b * hidden + j] = a_.linear_before_reset ? h_[b * hidden + j] : gate[hidden + j] * h_[b * hidden + j];
      }
    }
    // rec_[:, 0:H] = operand * Rh^T.
    if (absl::Status s = Gemm(false, true, d_.batch, hidden, hidden, T{1}, tmp_.data(), R(2), T{0}, rec_.data());
        !s.ok()) {
      return s;
    }
    const T* rbh = io_.b != nullptr ? io_.b->data<T>() + dir_ * 2 * rows + rows + 2 * hidden : nullptr;
    for (int64_t b = 0; b < d_.batch; ++b) {
      if (t >= lens_[b]) continue;
      const T* gate = gates_.data() + b * rows;
      const T* rec = rec_.data() + b * hidden;
      for (int64_t j = 0; j < hidden; ++j) {
        const T z = gate[j], r = gate[hidden + j];
        const T rh = a_.linear_before_reset ? r * (rec[j] + (rbh != nullptr ? rbh[j] : T{0})) : rec[j];
        const T candidate = ops::ApplyRnnActivation(g, Clip(a_, gate[2 * hidden + j] + rh));
        T& h = h_[b * hidden + j];
        h = (T{1} - z) * candidate + z * h;
      }
    }
    return absl::OkStatus();
  }

  // Gates i, o, f, c with optional peepholes P = [Pi, Po, Pf].
  absl::Status LstmStep(int64_t t) {
    const int64_t hidden = d_.hidden, rows = d_.rows();
    if (absl::Status s = Gemm(false, true, d_.batch, rows, hidden, T{1}, h_.data(), R(0), T{1}, gates_.data());
        !s.ok()) {
      return s;
    }
    const ops::RnnActivation& f = a_.activation(dir_, 0);
    const ops::RnnActivation& g = a_.activation(dir_, 1);
    const ops::RnnActivation& h = a_.activation(dir_, 2);
    const T* p = io_.p != nullptr ? io_.p->data<T>() + dir_ * 3 * hidden : nullptr;
    for (int64_t b = 0; b < d_.batch; ++b) {
      if (t >= lens_[b]) continue;
      const T* gate = gates_.data() + b * rows;
      for (int64_t j = 0; j < hidden; ++j) {
        T& c = c_[b * hidden + j];
        const T pi = p != nullptr ? p[j] : T{0}, po = p != nullptr ? p[hidden + j] : T{0};
        const T pf = p != nullptr ? p[2 * hidden + j] : T{0};
        const T in = ops::ApplyRnnActivation(f, Clip(a_, gate[j] + pi * c));
        const T forget =
            a_.input_forget ? T{1} - in : ops::ApplyRnnActivation(f, Clip(a_, gate[2 * hidden + j] + pf * c));
        const T cell = ops::ApplyRnnActivation(g, Clip(a_, gate[3 * hidden + j]));
        c = forget * c + in * cell;
        const T out = ops::ApplyRnnActivation(f, Clip(a_, gate[hidden + j] + po * c));
        h_[b * hidden + j] = out * ops::ApplyRnnActivation(h, c);
      }
    }
    return absl::OkStatus();
  }

  const RnnIo& io_;
  const RnnAttrs& a_;
  const RnnDims& d_;
  const int64_t dir_;
  const std::vector<int64_t>& lens_;
  std::vector<T> xw_, gates_, rec_, tmp_, h_, c_;
};

// X as [seq, batch, input]: a copy when layout is batch-major, else X itself.
template <typename T>
absl::StatusOr<std::vector<T>> TimeMajor(const ir::Tensor& x, const RnnDims& d) {
  absl::StatusOr<std::vector<T>> out = nn::ScratchBuffer<T>(d.seq * d.batch, d.input);
  if (!out.ok()) return out.status();
  const T* src = x.data<T>();
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t t = 0; t < d.seq; ++t) {
      std::copy(src + (b * d.seq + t) * d.input, src + (b * d.seq + t + 1) * d.input,
                out->data() + (t * d.batch + b) * d.input);
    }
  }
  return out;
}

template <typename T>
absl::Status RnnTyped(const RnnIo& io, const RnnAttrs& a, const RnnDims& d) {
  absl::StatusOr<std::vector<int64_t>> lens = SequenceLengths(io.seq_lens, d);
  if (!lens.ok()) return lens.status();
  std::vector<T> transposed;
  const T* x = io.x->data<T>();
  if (a.batch_major) {
    absl::StatusOr<std::vector<T>> tm = TimeMajor<T>(*io.x, d);
    if (!tm.ok()) return tm.status();
    transposed = *std::move(tm);
    x = transposed.data();
  }
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    Direction<T> direction(io, a, d, dir, *lens);
    if (absl::Status s = direction.Run(x); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Recurrent(KernelContext& ctx) {
  if (nn::IsHalf(ctx)) return nn::RunAsFloat32(ctx, &Recurrent);
  absl::StatusOr<RnnAttrs> attrs = ops::ParseRnnAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const RnnIo io = ReadIo(ctx, attrs->kind == RnnKind::kLstm);
  absl::StatusOr<RnnDims> dims = ReadDims(io, *attrs);
  if (!dims.ok()) return dims.status();
  switch (io.x->dtype()) {
    case ir::DType::kFloat32: return RnnTyped<float>(io, *attrs, *dims);
    case ir::DType::kFloat64: return RnnTyped<double>(io, *attrs, *dims);
    default: return absl::UnimplementedError(absl::StrCat("dtype ", ir::DTypeName(io.x->dtype()), " not supported"));
  }
}

}  // namespace

std::vector<KernelDef> RnnKernels() {
  return {
      {"RNN", Recurrent},
      {"GRU", Recurrent},
      {"LSTM", Recurrent},
  };
}

}  // namespace kernels::cpu
