// STUB: replaced by the family implementation.
#include "ops/op_def.h"
namespace ops {
std::vector<OpDef> ElementwiseOpDefs() { return {}; }
}  // namespace ops
