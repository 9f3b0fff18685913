// --explain: the plan as people and tools read it. Text (one line per step: kind, pattern, the ONNX
// nodes it covers, input/output tensors with shapes and layout, and each reason fusion stopped),
// JSON (schema: docs/explain.schema.json) and Graphviz dot (steps as clusters). The summary block
// (steps and nodes per kind, fused pointwise ops, BNs folded and left) is what golden tests
// compare.
#ifndef ONNXRUN_PARTITIONER_EXPLAIN_H_
#define ONNXRUN_PARTITIONER_EXPLAIN_H_

#include <string>

#include "exec/plan.h"

namespace partitioner {

std::string ExplainSummary(const exec::Plan& plan);
std::string ExplainText(const exec::Plan& plan);
std::string ExplainJson(const exec::Plan& plan);
std::string ExplainDot(const exec::Plan& plan);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_EXPLAIN_H_
