// The element-wise comparison of one output in onnxrun test: CompareOutput and DescribeMismatch (see
// model_test.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cli/model_test.h"
#include "ir/narrow.h"

namespace cli {
namespace {

// String outputs: equal byte for byte; the first differing element is reported.
OutputComparison CompareStrings(OutputComparison c, const ir::Tensor& got, const ir::Tensor& want) {
  c.strings = true;
  c.elements = want.num_elements();
  for (int64_t i = 0; i < c.elements; ++i) {
    if (got.strings()[i] == want.strings()[i]) continue;
    if (c.bad++ == 0) {
      c.worst = i;
      c.got_text = got.strings()[i];
      c.want_text = want.strings()[i];
    }
  }
  return c;
}

// `s` quoted and C-escaped, cut after 80 bytes.
std::string Quoted(const std::string& s) {
  constexpr size_t kShown = 80;
  return absl::StrCat("\"", absl::CHexEscape(s.substr(0, kShown)), s.size() > kShown ? "\"..." : "\"");
}

}  // namespace

OutputComparison CompareOutput(const std::string& name, const ir::Tensor& got, const ir::Tensor& want, Tolerance tol) {
  OutputComparison c;
  c.output = name;
  if (got.dtype() != want.dtype()) {
    c.mismatch = absl::StrCat("dtype ", ir::DTypeName(got.dtype()), " != expected ", ir::DTypeName(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.mismatch =
        absl::StrCat("shape ", ir::ShapeToString(got.shape()), " != expected ", ir::ShapeToString(want.shape()));
    return c;
  }
  if (want.dtype() == ir::DType::kString) return CompareStrings(std::move(c), got, want);
  c.elements = want.num_elements();
  const bool exact = !ir::IsFloatingPoint(want.dtype());
  for (int64_t i = 0; i < c.elements && !exact; ++i) {
    const double w = std::fabs(want.GetAsDouble(i));
    if (std::isfinite(w)) c.max_want = std::max(c.max_want, w);
  }
  const double atol = tol.atol + tol.scaled_atol * c.max_want;
  // A bfloat16 output holds 8 significant bits, and a reference computed in bfloat16 rounds its
  // intermediates at other points than onnxrun does: two units in the last place (2^-6 relative at
  // most) is the least difference two correct computations may show.
  const double rtol = want.dtype() == ir::DType::kBFloat16 ? std::max(tol.rtol, 1.0 / 64) : tol.rtol;
  c.rtol = rtol;
  double worst_excess = 0, largest_diff = -1;
  int64_t largest = -1;
  for (int64_t i = 0; i < c.elements; ++i) {
    const double g = got.GetAsDouble(i), w = want.GetAsDouble(i);
    bool ok;
    double diff, excess;
    if (exact && ir::IsNarrowDType(want.dtype())) {  // the same code, or NaN both
      ok = got.data<uint8_t>()[i] == want.data<uint8_t>()[i] || (std::isnan(g) && std::isnan(w));
      diff = ok ? 0 : (std::isfinite(g) && std::isfinite(w) ? std::fabs(g - w) : INFINITY);
      excess = ok ? 0 : std::max(diff, 1.0);
    } else if (exact) {
      ok = got.GetAsInt64(i) == want.GetAsInt64(i);
      diff = std::fabs(g - w);
      excess = ok ? 0 : std::max(diff, 1.0);
    } else if (std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w)) {
      ok = (std::isnan(g) && std::isnan(w)) || g == w;
      diff = ok ? 0 : INFINITY;
      excess = diff;
    } else {
      diff = std::fabs(g - w);
      excess = diff - (atol + rtol * std::fabs(w));
      ok = excess <= 0;
    }
    c.max_abs = std::max(c.max_abs, diff);
    if (w != 0 && std::isfinite(w)) c.max_rel = std::max(c.max_rel, diff / std::fabs(w));
    if (diff > largest_diff) largest_diff = diff, largest = i;
    if (!ok && (c.bad++ == 0 || excess > worst_excess)) {
      c.worst = i;
      worst_excess = excess;
    }
  }
  if (c.bad == 0) c.worst = largest;
  if (c.worst >= 0) c.got = got.GetAsDouble(c.worst), c.want = want.GetAsDouble(c.worst);
  return c;
}

std::string DescribeMismatch(const OutputComparison& c, Tolerance tol) {
  if (!c.mismatch.empty()) return absl::StrCat("output '", c.output, "': ", c.mismatch);
  if (c.strings) {
    return absl::StrCat("output '", c.output, "': ", c.bad, " of ", c.elements, " strings differ; first at flat index ",
                        c.worst, ": got ", Quoted(c.got_text), ", want ", Quoted(c.want_text));
  }
  const double abs_error = std::fabs(c.got - c.want);
  return absl::StrCat(
      "output '", c.output, "': ", c.bad, " of ", c.elements, " elements differ; worst at flat index ", c.worst,
      ": got ", c.got, ", want ", c.want, " (abs error ", abs_error, ", rel ",
      c.want != 0 ? abs_error / std::fabs(c.want) : abs_error, "; rtol ", c.rtol, ", atol ", tol.atol,
      tol.scaled_atol > 0 ? absl::StrCat(", scaled_atol ", tol.scaled_atol, " x max|want| ", c.max_want) : "", ")");
}

}  // namespace cli
