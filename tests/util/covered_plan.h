// A model imported and covered into steps with the sm90 fusion rules, without the other passes:
// the Plan that tests of step matchers and lowerings (runtime/*_form_test, fused_lowering_test) read.
//
// Usage:
//   absl::StatusOr<exec::Plan> plan = testing_util::CoveredPlan(model);
#ifndef ONNXRUN_TESTS_UTIL_COVERED_PLAN_H_
#define ONNXRUN_TESTS_UTIL_COVERED_PLAN_H_

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "onnx/onnx_pb.h"

namespace testing_util {

// The imported graph of `model` and its cover; the importer's or the cover's error otherwise.
absl::StatusOr<exec::Plan> CoveredPlan(const onnx::ModelProto& model);

}  // namespace testing_util

#endif  // ONNXRUN_TESTS_UTIL_COVERED_PLAN_H_
