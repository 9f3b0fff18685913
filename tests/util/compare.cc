// Tensor comparison for tests.
#include "tests/util/compare.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace testing_util {

std::string CompareTensors(const ir::Tensor& actual, const ir::Tensor& expected, Tolerance tol) {
  if (actual.dtype() != expected.dtype()) {
    return absl::StrCat("dtype ", ir::DTypeName(actual.dtype()), " != expected ", ir::DTypeName(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return absl::StrCat("shape ", ir::ShapeToString(actual.shape()), " != expected ",
                        ir::ShapeToString(expected.shape()));
  }
  if (expected.strings() != nullptr) {  // strings: each equal
    for (int64_t i = 0; i < expected.num_elements(); ++i) {
      if (actual.strings()[i] != expected.strings()[i]) {
        return absl::StrCat("string ", i, " is \"", actual.strings()[i], "\", expected \"", expected.strings()[i],
                            "\"");
      }
    }
    return "";
  }
  const bool exact = !ir::IsFloatingPoint(expected.dtype());
  int64_t bad = 0, worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    bool ok;
    double excess = 0;
    if (exact) {
      ok = actual.GetAsInt64(i) == expected.GetAsInt64(i);
      excess = ok ? 0 : 1;
    } else if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
      excess = ok ? 0 : INFINITY;
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
      excess = ok ? 0 : INFINITY;
    } else {
      excess = std::fabs(a - e) - (tol.atol + tol.rtol * std::fabs(e));
      ok = excess <= 0;
    }
    if (!ok) {
      ++bad;
      if (worst < 0 || excess > worst_excess) {
        worst = i;
        worst_excess = excess;
      }
    }
  }
  if (bad == 0) return "";
  return absl::StrCat(bad, " of ", expected.num_elements(), " elements differ; worst at flat index ", worst, ": got ",
                      actual.GetAsDouble(worst), ", expected ", expected.GetAsDouble(worst), " (rtol ", tol.rtol,
                      ", atol ", tol.atol, ")");
}

}  // namespace testing_util
