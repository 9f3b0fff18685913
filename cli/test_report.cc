// Case lines, summary table, JUnit XML and JSON of onnxrun test (see test_report.h).
#include "cli/test_report.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cli {
namespace {

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') break;  // not allowed in XML 1.0
        out += c;
    }
  }
  return out;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A JSON number; null for NaN and infinities (JSON has neither).
std::string JsonNumber(double value) { return std::isfinite(value) ? absl::StrCat(value) : "null"; }

struct Counts {
  int passed = 0, failed = 0, errors = 0;
  void Add(Outcome o) { ++(o == Outcome::kPass ? passed : o == Outcome::kFail ? failed : errors); }
  int total() const { return passed + failed + errors; }
};

}  // namespace

std::string CaseLine(const CaseResult& r) {
  std::string line =
      absl::StrFormat("%-5s %s  %s  %s %s%s", OutcomeName(r.outcome), r.model, r.data_set, r.device, r.precision,
                      r.computes_in.empty() ? "" : absl::StrCat(" (computes in ", r.computes_in, ")"));
  if (r.outcome != Outcome::kError) {
    absl::StrAppendFormat(&line, "  max abs %.3g (%.3g of max|want|) rel %.3g  %.2f ms", r.max_abs, r.max_scaled,
                          r.max_rel, r.seconds * 1000);
  }
  if (!r.message.empty()) absl::StrAppend(&line, "\n      ", r.message);
  return line;
}

std::string SummaryTable(const std::vector<CaseResult>& results, double seconds) {
  std::map<std::pair<std::string, std::string>, Counts> by_config;
  Counts total;
  std::set<std::string> models;
  for (const CaseResult& r : results) {
    by_config[{r.device, r.precision}].Add(r.outcome);
    total.Add(r.outcome);
    models.insert(r.model);
  }
  std::string out =
      absl::StrFormat("%-8s %-9s %8s %8s %8s %8s\n", "device", "precision", "cases", "passed", "failed", "errors");
  for (const auto& [config, c] : by_config) {
    absl::StrAppendFormat(&out, "%-8s %-9s %8d %8d %8d %8d\n", config.first, config.second, c.total(), c.passed,
                          c.failed, c.errors);
  }
  absl::StrAppendFormat(&out, "%d passed, %d failed, %d errors (%d case%s, %d model%s) in %.1f s\n", total.passed,
                        total.failed, total.errors, total.total(), total.total() == 1 ? "" : "s", models.size(),
                        models.size() == 1 ? "" : "s", seconds);
  return out;
}

std::string JUnitXml(const std::vector<CaseResult>& results, double seconds) {
  // Cases by model, in the order models first appear.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const CaseResult*>> by_model;
  Counts total;
  for (const CaseResult& r : results) {
    if (!by_model.count(r.model)) order.push_back(r.model);
    by_model[r.model].push_back(&r);
    total.Add(r.outcome);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppendFormat(&out,
                        "<testsuites name=\"onnxrun test\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
                        total.total(), total.failed, total.errors, seconds);
  for (const std::string& model : order) {
    Counts c;
    double time = 0;
    for (const CaseResult* r : by_model[model]) c.Add(r->outcome), time += r->seconds + r->load_seconds;
    absl::StrAppendFormat(&out, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
                          XmlEscape(model), c.total(), c.failed, c.errors, time);
    for (const CaseResult* r : by_model[model]) {
      absl::StrAppendFormat(&out, "    <testcase classname=\"%s\" name=\"%s %s %s\" time=\"%.3f\"", XmlEscape(model),
                            XmlEscape(r->data_set), r->device, r->precision, r->seconds);
      if (r->outcome == Outcome::kPass) {
        out += "/>\n";
        continue;
      }
      const char* tag = r->outcome == Outcome::kFail ? "failure" : "error";
      const std::string detail =
          r->outcome == Outcome::kFail
              ? absl::StrFormat("max abs error %g, max rel error %g against %s (rtol %g, atol %g, scaled_atol %g)",
                                r->max_abs, r->max_rel, r->reference, r->tolerance.rtol, r->tolerance.atol,
                                r->tolerance.scaled_atol)
              : "";
      absl::StrAppendFormat(&out, ">\n      <%s message=\"%s\" type=\"%s\">%s</%s>\n    </testcase>\n", tag,
                            XmlEscape(r->message), OutcomeName(r->outcome), XmlEscape(detail), tag);
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string JsonReport(const std::vector<CaseResult>& results, double seconds) {
  Counts total;
  for (const CaseResult& r : results) total.Add(r.outcome);
  std::string out = absl::StrFormat(
      "{\n  \"summary\": {\"cases\": %d, \"passed\": %d, \"failed\": %d, \"errors\": %d, \"seconds\": %s},\n"
      "  \"cases\": [",
      total.total(), total.passed, total.failed, total.errors, JsonNumber(seconds));
  for (size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    absl::StrAppend(&out, i ? ",\n" : "\n", "    {\"model\": ", JsonString(r.model),
                    ", \"data_set\": ", JsonString(r.data_set), ", \"device\": ", JsonString(r.device),
                    ", \"precision\": ", JsonString(r.precision), ", \"reference\": ", JsonString(r.reference),
                    ", \"result\": ", JsonString(OutcomeName(r.outcome)), ", \"message\": ", JsonString(r.message),
                    ", \"rtol\": ", JsonNumber(r.tolerance.rtol), ", \"atol\": ", JsonNumber(r.tolerance.atol),
                    ", \"scaled_atol\": ", JsonNumber(r.tolerance.scaled_atol),
                    ", \"max_abs\": ", JsonNumber(r.max_abs), ", \"max_rel\": ", JsonNumber(r.max_rel),
                    ", \"max_scaled\": ", JsonNumber(r.max_scaled));
    if (r.worst_index >= 0) {
      absl::StrAppend(&out, ", \"worst\": {\"output\": ", JsonString(r.worst_output), ", \"index\": ", r.worst_index,
                      ", \"got\": ", JsonNumber(r.worst_got), ", \"want\": ", JsonNumber(r.worst_want), "}");
    }
    absl::StrAppend(&out, ", \"seconds\": ", JsonNumber(r.seconds), ", \"load_seconds\": ", JsonNumber(r.load_seconds),
                    "}");
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace cli
