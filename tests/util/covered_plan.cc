// CoveredPlan (covered_plan.h).
#include "tests/util/covered_plan.h"

#include "importer/importer.h"
#include "partitioner/cover.h"
#include "partitioner/fusion_rules.h"

namespace testing_util {

absl::StatusOr<exec::Plan> CoveredPlan(const onnx::ModelProto& model) {
  absl::StatusOr<ir::Graph> graph = importer::ImportModelBytes(model.SerializeAsString(), "");
  if (!graph.ok()) return graph.status();
  exec::Plan plan;
  plan.graph = *std::move(graph);
  absl::StatusOr<std::vector<exec::Step>> steps = partitioner::CoverGraph(plan.graph, partitioner::Sm90Rules());
  if (!steps.ok()) return steps.status();
  plan.steps = *std::move(steps);
  return plan;
}

}  // namespace testing_util
