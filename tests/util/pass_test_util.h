// Test helpers shared by the partitioner's pass tests: a builder of small typed ir::Graphs (types
// inferred node by node, as the importer does), seeded random tensors, and a CPU run of a graph
// so a rewritten graph can be compared element by element with the graph before the pass.
#ifndef ONNXRUN_TESTS_UTIL_PASS_TEST_UTIL_H_
#define ONNXRUN_TESTS_UTIL_PASS_TEST_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "partitioner/pass.h"
#include "tests/util/compare.h"

namespace partitioner::test {

ir::Attributes Attrs(std::initializer_list<std::pair<std::string, ir::AttributeValue>> attrs);

// Uniform in [lo, hi), deterministic in `seed`; float32 unless `dtype` says otherwise (any float).
ir::Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f,
                        ir::DType dtype = ir::DType::kFloat32);

// Builds a graph in topological order. Each Op infers its outputs' types at once; the first
// inference error is kept and returned by Build().
class GraphBuilder {
 public:
  explicit GraphBuilder(int opset = 13) : opset_(opset) { graph_.name = "test"; }

  ir::ValueId Input(const std::string& name, std::vector<int64_t> shape, ir::DType dtype = ir::DType::kFloat32);
  ir::ValueId SymbolicInput(const std::string& name, ir::Shape shape, ir::DType dtype = ir::DType::kFloat32);
  ir::ValueId Constant(const std::string& name, ir::Tensor tensor);
  // A node named `name` with one output, also named `name`.
  ir::ValueId Op(const std::string& name, const std::string& op_type, std::vector<ir::ValueId> inputs,
                 ir::Attributes attrs = {});
  // A node named `name` with outputs named `name`_0, `name`_1, ...
  std::vector<ir::ValueId> OpMulti(const std::string& name, const std::string& op_type, std::vector<ir::ValueId> inputs,
                                   int num_outputs, ir::Attributes attrs = {});
  void Output(ir::ValueId id) { graph_.outputs().push_back(id); }

  // Validates the graph and returns it (or the first error).
  absl::StatusOr<ir::Graph> Build();

 private:
  int opset_;
  ir::Graph graph_;
  absl::Status status_;
};

// Runs `graph` with the CPU reference executor, one step per node.
absl::StatusOr<std::vector<ir::Tensor>> RunOnCpu(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs);

// Runs `pass` on `graph` and checks that it succeeded, left a valid graph and computes the same
// outputs as before on RandomInputs (within `tol`): "" when it did, else what failed. `changed`
// (optional) receives what the pass returned.
std::string RunPassAndCompare(Pass& pass, ir::Graph& graph, testing_util::Tolerance tol, bool* changed = nullptr);

// The op types of the graph's nodes, in order (what a rewrite left).
std::vector<std::string> OpTypes(const ir::Graph& g);

// Runs both graphs on `inputs` and compares every output (dtype, shape, each element); "" when
// all match, else what differs.
std::string CompareGraphs(const ir::Graph& actual, const ir::Graph& expected, const std::vector<ir::Tensor>& inputs,
                          testing_util::Tolerance tol);

// Random float inputs (seeded by position) for every graph input; shapes must be concrete.
std::vector<ir::Tensor> RandomInputs(const ir::Graph& graph, uint32_t seed = 1);

}  // namespace partitioner::test

#endif  // ONNXRUN_TESTS_UTIL_PASS_TEST_UTIL_H_
