// LRN (local response normalisation across channels, opsets 1 and 13): its attributes, parsed once
// for inference, the CPU kernel and the legacy cuDNN call (cudnnLRNCrossChannelForward).
//   y[n,c,...] = x[n,c,...] / (bias + alpha / size * sum of x[n,i,...]^2)^beta,
//   i in [c - floor((size-1)/2), c + ceil((size-1)/2)] within [0, C).
#ifndef ONNXRUN_OPS_LRN_H_
#define ONNXRUN_OPS_LRN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

struct LrnAttrs {
  int64_t size = 0;  // required, >= 1
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
  // The window around channel c: [c - before, c + after].
  int64_t before() const { return (size - 1) / 2; }
  int64_t after() const { return size - 1 - before(); }
};

// An error when `size` is missing or < 1, or a value is not finite.
absl::StatusOr<LrnAttrs> ParseLrnAttrs(const ir::Node& node);

std::vector<OpDef> LrnOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_LRN_H_
