// Mt19937::NextDouble: numpy's random_sample from two MT19937 outputs (see mt19937.h).
#include "kernels/cpu/mt19937.h"

namespace kernels::cpu {

double Mt19937::NextDouble() {
  const uint32_t a = NextUint32() >> 5;  // 27 bits
  const uint32_t b = NextUint32() >> 6;  // 26 bits
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

}  // namespace kernels::cpu
