// Mt19937's draws: numpy's random_sample, legacy gauss and binomial(1, p) from MT19937 outputs
// (see mt19937.h).
#include "kernels/cpu/mt19937.h"

#include <algorithm>
#include <cmath>

namespace kernels::cpu {

double Mt19937::NextDouble() {
  const uint32_t a = NextUint32() >> 5;  // 27 bits
  const uint32_t b = NextUint32() >> 6;  // 26 bits
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double Mt19937::NextGauss() {
  if (has_gauss_) {
    has_gauss_ = false;
    return gauss_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * NextDouble() - 1.0;
    x2 = 2.0 * NextDouble() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

int Mt19937::BernoulliInversion(double p) {
  const double q = 1.0 - p;
  const double qn = std::exp(std::log(q));
  const double bound = std::min(1.0, p + 10.0 * std::sqrt(p * q + 1));
  int x = 0;
  double px = qn;
  double u = NextDouble();
  while (u > px) {
    ++x;
    if (x > bound) {
      x = 0;
      px = qn;
      u = NextDouble();
    } else {
      u -= px;
      px = ((1 - x + 1) * p * px) / (x * q);
    }
  }
  return x;
}

int Mt19937::NextBernoulli(double p) { return p <= 0.5 ? BernoulliInversion(p) : 1 - BernoulliInversion(1.0 - p); }

}  // namespace kernels::cpu
