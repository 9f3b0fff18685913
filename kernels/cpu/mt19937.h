// The random numbers of numpy's legacy RandomState, for the ops whose ONNX reference draws them
// with numpy (Dropout's training mask): MT19937 seeded by init_genrand(seed), which is what
// np.random.seed(seed) does for an integer seed, and doubles in [0, 1) made as numpy's
// random_sample makes them, from two 32-bit outputs a, b:
//   ((a >> 5) * 67108864 + (b >> 6)) / 9007199254740992.
// So Mt19937(0).NextDouble() gives np.random.seed(0); np.random.uniform(0, 1) = 0.5488135039273248.
// Normal and Bernoulli draws follow numpy's legacy gauss and binomial(1, p) (the random ops).
#ifndef ONNXRUN_KERNELS_CPU_MT19937_H_
#define ONNXRUN_KERNELS_CPU_MT19937_H_

#include <cstdint>
#include <random>

namespace kernels::cpu {

class Mt19937 {
 public:
  // std::mt19937's seeding is init_genrand (the C++ standard defines it so), its outputs are
  // genrand_int32's.
  explicit Mt19937(uint32_t seed) : engine_(seed) {}

  uint32_t NextUint32() { return static_cast<uint32_t>(engine_()); }
  // A double in [0, 1) with 53 random bits; uses two 32-bit outputs.
  double NextDouble();
  // A standard normal draw as numpy's legacy gauss makes it (np.random.randn): the polar method,
  // which yields two values per accepted pair and returns the cached second one on the next call.
  double NextGauss();
  // A Bernoulli(p) draw as numpy's legacy binomial(1, p) makes it (the inversion algorithm on the
  // smaller of p and 1 - p; p == 0 draws too, as RandomState does). Precondition: 0 <= p <= 1.
  int NextBernoulli(double p);

 private:
  // numpy's binomial inversion for n = 1 and p <= 0.5: the count of successes.
  int BernoulliInversion(double p);

  std::mt19937 engine_;
  bool has_gauss_ = false;
  double gauss_ = 0;
};

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_MT19937_H_
