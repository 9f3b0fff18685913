// Channels-last values in the CPU executor. oneDNN's CPU convolutions run NHWC
// (kernels/cpu/onednn_conv.h); reordering every convolution's input and output between NCHW and
// NHWC took a third of resnet50's CPU time. So a float32 rank-4 Conv output stays NHWC (its dims
// still say NCHW) and flows on through the convolutions and elementwise ops that read it (and into
// GlobalAveragePool, which reads it as it is); any other op reads an NCHW copy, as do the observer
// and the caller. Transposes between NHWC and NCHW dims are views where the bytes allow.
#ifndef ONNXRUN_RUNTIME_CPU_LAYOUT_H_
#define ONNXRUN_RUNTIME_CPU_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace exec {

// How one node reads the channels-last values among its inputs.
enum class LayoutUse {
  kConv,        // a float32 rank-4 Conv: takes X channels-last and may write Y so
  kReadsInput,  // GlobalAveragePool: takes X channels-last, writes NCHW
  kNhwcView,    // elementwise: runs on NHWC-dimmed views of its inputs; its output is channels-last
  kNchwCopies,  // anything else: reads NCHW copies of the channels-last inputs
};

// `channels_last` bit i: input i is stored channels-last (inputs[i] non-null).
LayoutUse ChooseLayoutUse(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs, uint32_t channels_last);

// A Transpose that needs no copy: a channels-last input with perm (0, 2, 3, 1) is a logical
// [N, H, W, C] tensor of the same bytes; a logical float32 [N, H, W, C] input with perm
// (0, 3, 1, 2) whose output the plan stores NHWC (it feeds a conv: partitioner/layout.h, as
// tf2onnx writes after an NHWC model input) is a channels-last [N, C, H, W] one.
struct TransposeView {
  ir::Tensor tensor;
  bool channels_last = false;
};
// The view for such a Transpose, nullopt for any other node.
std::optional<TransposeView> TransposeAsView(const ir::Graph& graph, const ir::Node& node, const ir::Tensor& input,
                                             bool input_channels_last);

// The dims of the NHWC view of an operand of a kNhwcView node, left-padded to rank 4: (n, c, h, w)
// -> (n, h, w, c); ToNchwDims undoes it.
std::vector<int64_t> ToNhwcDims(const std::vector<int64_t>& nchw);
std::vector<int64_t> ToNchwDims(const std::vector<int64_t>& nhwc);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CPU_LAYOUT_H_
