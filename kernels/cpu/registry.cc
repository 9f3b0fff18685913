// The CPU kernel registry: one explicit table built from the per-family tables.
#include <map>

#include "kernels/cpu/kernel.h"

namespace kernels::cpu {

KernelFn FindKernel(std::string_view op_type) {
  static const auto* registry = [] {
    auto* map = new std::map<std::string_view, KernelFn>();
    for (auto family : {ElementwiseKernels,
                        NnKernels,
                        TensorKernels,
                        ReduceResizeKernels,
                        CumSumKernels,
                        LrnKernels,
                        RnnKernels,
                        QuantizeKernels,
                        QuantizeGemmKernels,
                        VisionKernels,
                        TensorGenKernels,
                        TensorSelectKernels,
                        TensorScatterKernels,
                        TensorSpatialKernels,
                        LogicKernels,
                        MathKernels,
                        EinsumKernels,
                        MathNormKernels,
                        LossKernels,
                        SpectralKernels,
                        DropoutKernels,
                        TfIdfKernels,
                        OptimizerKernels,
                        RandomKernels,
                        AttentionKernels,
                        RotaryEmbeddingKernels,
                        MlKernels,
                        MlModelKernels,
                        MlTreeKernels,
                        MlTransformKernels,
                        MlMapKernels,
                        RecurrentStateKernels,
                        KvCacheKernels}) {
      for (const KernelDef& def : family()) (*map)[def.op_type] = def.fn;
    }
    for (const KernelDef& def : DeformConvKernels()) (*map)[def.op_type] = def.fn;
    for (const KernelDef& def : ImageDecoderKernels()) (*map)[def.op_type] = def.fn;
    for (const KernelDef& def : GroupQueryAttentionKernels()) (*map)[def.op_type] = def.fn;
    for (auto family :
         {ControlFlowKernels, SequenceKernels, OptionalKernels, StringKernels, StringTextKernels, TokenizerKernels}) {
      for (const KernelDef& def : family()) (*map)[def.op_type] = def.fn;
    }
    return map;
  }();
  auto it = registry->find(op_type);
  return it == registry->end() ? nullptr : it->second;
}

}  // namespace kernels::cpu
