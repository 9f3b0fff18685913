// Precision: the graph-level part of the precision choice (fp32 | tf32 | fp16 | bf16).
//   fp32, tf32: the graph is unchanged (tf32 is a setting of the executor's conv/matmul math).
//   fp16: every float32 constant becomes float16, except where ONNX requires float32 (Resize's
//         roi and scales); every Cast(to=FLOAT) becomes Cast(to=FLOAT16); each float32 graph input
//         is read through a Cast to float16 and each float32 graph output computed by a node is
//         written through a Cast back to float32, so the graph's interface stays float32; a
//         float32-only input fed by a (now float16) node output gets a Cast to float32. Types are
//         then re-inferred, so every float32 activation becomes float16.
//   bf16: the same with bfloat16 (float32's range, 8 significant bits) in place of float16.
//   With half_inputs (fp16 / bf16 only): a float32 graph input read only as data becomes the 16-bit
//   type itself instead of being read through a Cast (the caller hands it in 16 bits, as
//   trtexec's --inputIOFormats=fp16 does); outputs stay float32.
#ifndef ONNXRUN_PARTITIONER_PRECISION_H_
#define ONNXRUN_PARTITIONER_PRECISION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

enum class PrecisionMode { kFp32, kTf32, kFp16, kBf16 };

// "fp32" | "tf32" | "fp16" | "bf16"; anything else is InvalidArgument.
absl::StatusOr<PrecisionMode> ParsePrecisionMode(std::string_view name);

class Precision : public Pass {
 public:
  explicit Precision(PrecisionMode mode, bool half_inputs = false) : mode_(mode), half_inputs_(half_inputs) {}
  // Same, from the precision's name ("fp32" | "tf32" | "fp16" | "bf16").
  static absl::StatusOr<Precision> Create(std::string_view precision, bool half_inputs = false);

  std::string_view name() const override { return "precision"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  PrecisionMode mode() const { return mode_; }
  // Why an fp16 / bf16 request left the graph in float32 ("" when it did not).
  const std::string& kept_fp32_reason() const { return kept_fp32_reason_; }

 private:
  PrecisionMode mode_;
  bool half_inputs_;
  std::string kept_fp32_reason_;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_PRECISION_H_
