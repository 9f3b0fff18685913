// LtMatmul on the GPU against a double-precision reference on the host, computed from the inputs as
// stored (fp16 / bf16 rounded): with and without the bias, each activation epilogue (ReLU; GELU
// against the tanh formula, and within the documented 4.73e-4 of the erf GELU it stands in for under
// fast GELU), the residual, a batch of per-entry weights, and W stored transposed. Skips without a GPU.
#include "kernels/cublas/lt_matmul.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cublas {
namespace {

using cuda::FloatType;
using cuda::testing::DeviceBuffer;
using cuda::testing::RoundTo;
using Activation = LtMatmulShape::Activation;

double GeluTanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double GeluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

std::vector<float> Random(size_t n, unsigned seed, float scale, FloatType t) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = RoundTo(t, dist(gen));
  return v;
}

struct Case {
  FloatType type = FloatType::kFloat16;
  int64_t m = 96, k = 192, n = 136, batch = 1;
  bool bias = true, residual = false, per_entry_weights = false;
  bool w_transposed = false;  // W uploaded [n, k] (a conv's layout) instead of [k, n]
  Activation activation = Activation::kNone;
};

std::string Name(const Case& c) {
  return std::string(c.type == FloatType::kFloat16 ? "fp16" : "bf16") + (c.bias ? " bias" : "") +
         (c.residual ? " residual" : "") + (c.w_transposed ? " W transposed" : "") + " activation " +
         std::to_string(static_cast<int>(c.activation)) + " batch " + std::to_string(c.batch);
}

// W as uploaded for `c`: each batch entry's [k, n], or with w_transposed its transpose [n, k].
std::vector<float> Stored(const std::vector<float>& w, const Case& c) {
  if (!c.w_transposed) return w;
  std::vector<float> stored(w.size());
  for (size_t e = 0; e < w.size() / (c.k * c.n); ++e) {
    for (int64_t l = 0; l < c.k; ++l) {
      for (int64_t j = 0; j < c.n; ++j) stored[e * c.k * c.n + j * c.k + l] = w[e * c.k * c.n + l * c.n + j];
    }
  }
  return stored;
}

// Runs `c` and checks every output element against the reference (|got - want| <= 1e-2 * max|want|
// + half an ulp of the storage type at |want|); for GELU, also how far the erf form is.
void Check(const Case& c) {
  SCOPED_TRACE(Name(c));
  const int64_t w_count = c.k * c.n * (c.per_entry_weights ? c.batch : 1);
  const std::vector<float> x = Random(c.batch * c.m * c.k, 1, 2.0f, c.type);
  const std::vector<float> w = Random(w_count, 2, 1.0f / std::sqrt(static_cast<float>(c.k)), c.type);
  const std::vector<float> bias = Random(c.n, 3, 1.0f, c.type);
  const std::vector<float> residual = Random(c.batch * c.m * c.n, 4, 1.0f, c.type);
  const std::vector<float> w_stored = Stored(w, c);
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  for (const std::vector<float>* v : {&x, &w_stored, &bias, &residual}) {
    owned.push_back(std::make_unique<DeviceBuffer>(v->size() * 2));
    ASSERT_NE(owned.back()->get(), nullptr);
    const std::vector<uint8_t> bytes = cuda::testing::Encode(c.type, *v);
    ASSERT_EQ(cudaMemcpy(owned.back()->get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  DeviceBuffer d(c.batch * c.m * c.n * 2), workspace(32u << 20);
  LtMatmulShape shape;
  shape.m = c.m, shape.n = c.n, shape.k = c.k, shape.batch = c.batch;
  shape.type = c.type == FloatType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  shape.bias = c.bias ? owned[2]->get() : nullptr;
  shape.residual = c.residual;
  shape.activation = c.activation;
  shape.w_batch_stride = c.per_entry_weights ? c.k * c.n : 0;
  shape.w_transposed = c.w_transposed;
  absl::StatusOr<LtMatmul> lt = LtMatmul::Create(shape);
  if (!lt.ok() && lt.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << lt.status();
  ASSERT_TRUE(lt.ok()) << lt.status();
  ASSERT_TRUE(lt->Run(owned[0]->get(), owned[1]->get(), c.residual ? owned[3]->get() : nullptr, d.get(),
                      workspace.get(), nullptr)
                  .ok());
  std::vector<uint8_t> out(c.batch * c.m * c.n * 2);
  ASSERT_EQ(cudaMemcpy(out.data(), d.get(), out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<double> want(out.size() / 2), erf_form(want.size());
  double max_want = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    const float* wb = w.data() + (c.per_entry_weights ? b * c.k * c.n : 0);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = c.bias ? bias[j] : 0.0;
        for (int64_t l = 0; l < c.k; ++l) {
          acc += double{x[(b * c.m + i) * c.k + l]} * wb[l * c.n + j];
        }
        const int64_t at = (b * c.m + i) * c.n + j;
        if (c.residual) acc += residual[at];
        erf_form[at] = GeluErf(acc);
        if (c.activation == Activation::kRelu) acc = std::max(acc, 0.0);
        if (c.activation == Activation::kGeluTanh) acc = GeluTanh(acc);
        want[at] = acc;
        max_want = std::max(max_want, std::abs(acc));
      }
    }
  }
  const double ulp = c.type == FloatType::kFloat16 ? 0x1p-10 : 0x1p-7;
  int bad = 0;
  double worst_erf = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = cuda::testing::Decode(c.type, &out[i * 2]);
    if (std::abs(got - want[i]) > 1e-2 * max_want + ulp * std::abs(want[i]) && ++bad <= 5) {
      ADD_FAILURE() << "element " << i << ": got " << got << ", want " << want[i];
    }
    worst_erf = std::max(worst_erf, std::abs(want[i] - erf_form[i]));
  }
  EXPECT_EQ(bad, 0) << "of " << want.size();
  if (c.activation == Activation::kGeluTanh) {
    EXPECT_LE(worst_erf, 4.74e-4) << "the bound fast GELU documents (host formulas)";
  }
}

class LtMatmulGpuTest : public cuda::testing::GpuTest {};

TEST_F(LtMatmulGpuTest, EveryEpilogueMatchesTheReference) {
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16}) {
    for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kGeluTanh}) {
      for (bool bias : {false, true}) {
        Case c;
        c.type = type, c.activation = a, c.bias = bias;
        Check(c);
      }
    }
  }
}

TEST_F(LtMatmulGpuTest, ResidualAndBatchedPerEntryWeights) {
  Case residual;
  residual.residual = true;
  Check(residual);
  Case batched;
  batched.batch = 3, batched.per_entry_weights = true, batched.m = 40;
  Check(batched);
}

// W stored [n, k] as a 1x1 conv keeps its weight: the same products (m, k, n all different, so a
// mixed-up layout cannot match).
TEST_F(LtMatmulGpuTest, TransposedWeights) {
  for (Activation a : {Activation::kNone, Activation::kRelu}) {
    Case c;
    c.w_transposed = true, c.activation = a;
    Check(c);
  }
  Case batched;
  batched.batch = 3, batched.per_entry_weights = true, batched.m = 40, batched.w_transposed = true;
  Check(batched);
}

TEST_F(LtMatmulGpuTest, ResidualWithAnActivationIsRefused) {
  LtMatmulShape shape;
  shape.m = shape.n = shape.k = 16;
  shape.residual = true;
  shape.activation = Activation::kRelu;
  absl::StatusOr<LtMatmul> lt = LtMatmul::Create(shape);
  if (!lt.ok() && lt.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << lt.status();
  EXPECT_EQ(lt.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kernels::cublas
