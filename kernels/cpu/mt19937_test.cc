// Mt19937 against values numpy gives (np.random.seed(s); np.random.uniform(0, 1, n)) and against
// MT19937's reference output.
#include "kernels/cpu/mt19937.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kernels::cpu {
namespace {

TEST(Mt19937Test, DoublesMatchNumpySeed0) {
  Mt19937 rng(0);
  const double expected[] = {0.5488135039273248, 0.7151893663724195, 0.6027633760716439, 0.5448831829968969,
                             0.4236547993389047};
  for (double want : expected) EXPECT_DOUBLE_EQ(rng.NextDouble(), want);
}

TEST(Mt19937Test, DoublesMatchNumpySeed42) {
  Mt19937 rng(42);
  const double expected[] = {0.3745401188473625, 0.9507143064099162, 0.7319939418114051};
  for (double want : expected) EXPECT_DOUBLE_EQ(rng.NextDouble(), want);
}

TEST(Mt19937Test, GaussMatchesNumpyRandn) {
  Mt19937 rng(0);  // np.random.seed(0); np.random.randn(5)
  const double expected[] = {1.764052345967664, 0.4001572083672233, 0.9787379841057392, 2.240893199201458,
                             1.8675579901499675};
  for (double want : expected) EXPECT_NEAR(rng.NextGauss(), want, 1e-14);
  Mt19937 rng7(7);  // np.random.seed(7); np.random.randn(3)
  for (double want : {1.690525703800356, -0.4659373705408328, 0.0328201636785844}) {
    EXPECT_NEAR(rng7.NextGauss(), want, 1e-14);
  }
}

TEST(Mt19937Test, BernoulliMatchesNumpyBinomial) {
  Mt19937 rng(0);  // np.random.seed(0); np.random.binomial(1, p)
  const double p[] = {0.1, 0.9, 0.5, 0.3, 0.7, 0.0, 1.0, 0.2};
  const int expected[] = {0, 1, 1, 0, 1, 0, 1, 1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(rng.NextBernoulli(p[i]), expected[i]) << "p=" << p[i];
}

TEST(Mt19937Test, ReferenceOutputForDefaultSeed) {
  Mt19937 rng(5489);  // mt19937ar.c's default seed: its first output is 3499211612
  EXPECT_EQ(rng.NextUint32(), 3499211612u);
}

TEST(Mt19937Test, SameSeedSameSequence) {
  Mt19937 a(123), b(123), c(124);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const double x = a.NextDouble();
    EXPECT_EQ(x, b.NextDouble());
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    differs |= x != c.NextDouble();
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace kernels::cpu
