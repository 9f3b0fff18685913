// The matmul epilogue kernel against a double reference, every element: each activation, with and
// without bias and residual, float16 / bfloat16 / float32, rows in 16-byte packs and not.
#include "kernels/cuda/matmul_epilogue.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

using namespace testing;  // NOLINT: the kernel test helpers
using Params = MatmulEpilogueParams;

class MatmulEpilogueGpuTest : public GpuTest {};

double Activate(Params::Activation act, double v) {
  switch (act) {
    case Params::kRelu: return v > 0 ? v : 0;
    case Params::kGelu: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case Params::kGeluTanh: return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    default: return v;
  }
}

void ExpectMatchesReference(Params p, bool bias, bool residual) {
  std::mt19937 gen(static_cast<uint32_t>(p.rows * 31 + p.n * 7 + p.activation));
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  auto random = [&](int64_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = RoundTo(p.type, dist(gen));
    return v;
  };
  const std::vector<float> y = random(p.rows * p.n), b = random(p.n), r = random(p.rows * p.n);
  void* dy = ToDevice(Encode(p.type, y));
  void* db = bias ? ToDevice(Encode(p.type, b)) : nullptr;
  void* dr = residual ? ToDevice(Encode(p.type, r)) : nullptr;
  p.bias = db;
  p.bias_type = p.type;
  p.residual = dr;
  ASSERT_EQ(MatmulEpilogue(p, dy, nullptr), cudaSuccess);
  std::vector<uint8_t> got(y.size() * StorageBytes(p.type));
  ASSERT_EQ(cudaMemcpy(got.data(), dy, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  const double tolerance = p.type == FloatType::kFloat32 ? 1e-5 : p.type == FloatType::kFloat16 ? 2e-3 : 1.6e-2;
  int bad = 0;
  for (int64_t i = 0; i < p.rows * p.n; ++i) {
    double want = Activate(p.activation, y[i] + (bias ? b[i % p.n] : 0.0));
    if (residual) want += r[i];
    const double value = Decode(p.type, &got[i * StorageBytes(p.type)]);
    if (std::fabs(value - want) > tolerance * std::max(1.0, std::fabs(want)) && ++bad <= 5) {
      ADD_FAILURE() << "element " << i << ": got " << value << ", want " << want;
    }
  }
  EXPECT_EQ(bad, 0) << "rows " << p.rows << " n " << p.n << " act " << p.activation << " bias " << bias << " residual "
                    << residual;
  for (void* d : {dy, db, dr}) cudaFree(d);
}

TEST_F(MatmulEpilogueGpuTest, EveryActivationAndTypeMatchesReference) {
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16, FloatType::kFloat32}) {
    for (Params::Activation act : {Params::kNone, Params::kRelu, Params::kGelu, Params::kGeluTanh}) {
      Params p;
      p.rows = 37;
      p.n = 64;  // whole 16-byte packs
      p.type = type;
      p.activation = act;
      ExpectMatchesReference(p, /*bias=*/true, /*residual=*/act != Params::kRelu);
    }
  }
}

TEST_F(MatmulEpilogueGpuTest, RowsNotInPacksAndOptionalOperands) {
  for (int64_t n : {6, 8, 1000}) {
    Params p;
    p.rows = 5;
    p.n = n;
    p.activation = Params::kGelu;
    ExpectMatchesReference(p, /*bias=*/false, /*residual=*/true);
    ExpectMatchesReference(p, /*bias=*/true, /*residual=*/false);
  }
}

TEST_F(MatmulEpilogueGpuTest, EmptyAndInvalidSizes) {
  Params p;
  p.rows = 0;
  p.n = 16;
  EXPECT_EQ(MatmulEpilogue(p, nullptr, nullptr), cudaSuccess);
  p.rows = -1;
  EXPECT_EQ(MatmulEpilogue(p, nullptr, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kernels::cuda
