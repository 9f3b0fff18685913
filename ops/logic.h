// The logic family (comparisons, boolean logic, IsInf/IsNaN, Sign, Mod, BitShift, Bitwise*): the
// attribute structs and parsers shared by inference and the CPU kernels (kernels/cpu/logic.cc).
#ifndef ONNXRUN_OPS_LOGIC_H_
#define ONNXRUN_OPS_LOGIC_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

// IsInf: which infinities count (both by default).
struct IsInfAttrs {
  bool detect_negative = true;
  bool detect_positive = true;
};
absl::StatusOr<IsInfAttrs> ParseIsInfAttrs(const ir::Node& node);

// Mod: fmod = C fmod (sign of the dividend); otherwise integer mod with the divisor's sign. A
// floating-point input needs fmod (the caller checks that against the dtype).
struct ModAttrs {
  bool fmod = false;
};
absl::StatusOr<ModAttrs> ParseModAttrs(const ir::Node& node);

// BitShift: the required `direction`, "LEFT" or "RIGHT".
struct BitShiftAttrs {
  bool left = true;
};
absl::StatusOr<BitShiftAttrs> ParseBitShiftAttrs(const ir::Node& node);

std::vector<OpDef> LogicOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_LOGIC_H_
