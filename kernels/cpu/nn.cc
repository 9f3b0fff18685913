// The nn-family CPU kernel table: Conv, ConvTranspose, pools, normalizations, MatMul and Gemm.
// The kernels live in nn_conv.cc, nn_pool.cc, nn_norm.cc and nn_matmul.cc.
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu {

std::vector<KernelDef> NnKernels() {
  return {
      {"Conv", nn::Conv},
      {"ConvTranspose", nn::ConvTranspose},
      {"BatchNormalization", nn::BatchNormalization},
      {"InstanceNormalization", nn::InstanceNormalization},
      {"LayerNormalization", nn::LayerNormalization},
      {"GroupNormalization", nn::GroupNormalization},
      {"RMSNormalization", nn::RMSNormalization},
      {"MatMul", nn::MatMul},
      {"Gemm", nn::GemmOp},
      {"MaxPool", nn::MaxPool},
      {"AveragePool", nn::AveragePool},
      {"GlobalAveragePool", nn::GlobalAveragePool},
      {"GlobalMaxPool", nn::GlobalMaxPool},
  };
}

}  // namespace kernels::cpu
