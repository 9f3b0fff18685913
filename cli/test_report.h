// What onnxrun test prints and writes: the line per case, the summary table, and the JUnit XML and
// JSON reports of a list of cases (cli/model_test.h).
#ifndef ONNXRUN_CLI_TEST_REPORT_H_
#define ONNXRUN_CLI_TEST_REPORT_H_

#include <string>
#include <vector>

#include "cli/model_test.h"

namespace cli {

// "PASS  node/test_abs  test_data_set_0  cpu fp32  max abs 0 rel 0  0.12 ms", then for FAIL and
// ERROR the message.
std::string CaseLine(const CaseResult& result);

// Passed / failed / errors per device and precision, and a last line "N passed, N failed, N errors
// (N cases, N models) in S s".
std::string SummaryTable(const std::vector<CaseResult>& results, double seconds);

// JUnit XML: one <testsuite> per model, one <testcase> per data set x precision (name
// "test_data_set_0 cpu fp32"), <failure> for FAIL and <error> for ERROR with the message (numbers
// included) as its message attribute.
std::string JUnitXml(const std::vector<CaseResult>& results, double seconds);

// {"summary": {...}, "cases": [{"model", "data_set", "device", "precision", "reference", "result",
// "message", "rtol", "atol", "max_abs", "max_rel", "worst": {"output", "index", "got", "want"},
// "seconds", "load_seconds"}]}.
std::string JsonReport(const std::vector<CaseResult>& results, double seconds);

}  // namespace cli

#endif  // ONNXRUN_CLI_TEST_REPORT_H_
