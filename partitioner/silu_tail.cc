// MatchSiluTail (silu_tail.h).
#include "partitioner/silu_tail.h"

namespace partitioner {

std::optional<std::pair<ir::NodeId, ir::NodeId>> MatchSiluTail(const ir::Graph& graph, ir::ValueId x,
                                                               const ValueReaders& readers) {
  if (graph.IsGraphOutput(x)) return std::nullopt;
  const std::vector<ir::NodeId> r = readers(x);
  if (r.size() != 2) return std::nullopt;
  for (int first = 0; first < 2; ++first) {
    const ir::NodeId sig = r[first], mul = r[1 - first];
    const ir::Node& s = graph.node(sig);
    const ir::Node& m = graph.node(mul);
    if (s.op_type != "Sigmoid" || m.op_type != "Mul" || m.inputs.size() != 2) continue;
    const ir::ValueId sig_out = s.outputs[0];
    const bool operands = (m.inputs[0] == x && m.inputs[1] == sig_out) || (m.inputs[1] == x && m.inputs[0] == sig_out);
    const std::vector<ir::NodeId> sig_readers = readers(sig_out);
    if (operands && !graph.IsGraphOutput(sig_out) && sig_readers.size() == 1 && sig_readers[0] == mul) {
      return std::make_pair(sig, mul);
    }
  }
  return std::nullopt;
}

}  // namespace partitioner
