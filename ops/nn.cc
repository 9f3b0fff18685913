// STUB: replaced by the family implementation.
#include "ops/op_def.h"
namespace ops {
std::vector<OpDef> NnOpDefs() { return {}; }
}  // namespace ops
