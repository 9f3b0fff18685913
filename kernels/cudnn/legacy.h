// kernels/cudnn/legacy.h: the legacy (descriptor-per-call) cuDNN paths the graph API handles badly
// — BatchNorm inference, grouped/depthwise convolution (+ bias + ReLU / ReLU6), pooling, softmax
// and standalone activations. Each wrapper is made once (static Create: descriptors, algorithm
// choice, workspace query) and then Run many times; they own their descriptors (move-only RAII).
// Data pointers are device memory; host scaling factors are handled inside. 4-D only.
#ifndef ONNXRUN_KERNELS_CUDNN_LEGACY_H_
#define ONNXRUN_KERNELS_CUDNN_LEGACY_H_

#include <cudnn.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cudnn/fused_graph.h"  // IoType

namespace cudnn {

enum class Layout { kNCHW, kNHWC };
struct Shape4 {
  int n = 1, c = 1, h = 1, w = 1;
  int64_t elements() const { return int64_t{n} * c * h * w; }
  bool operator==(const Shape4&) const = default;
};

// Activation applied after a legacy op. kRelu6 is CLIPPED_RELU with ceiling 6.
enum class LegacyActivation { kNone, kRelu, kRelu6, kSigmoid, kTanh, kElu };

namespace legacy_internal {
template <typename Desc, cudnnStatus_t (*Destroy)(Desc)>
struct Deleter {
  void operator()(std::remove_pointer_t<Desc>* d) const {
    if (d != nullptr) Destroy(d);
  }
};
template <typename Desc, cudnnStatus_t (*Destroy)(Desc)>
using Owned = std::unique_ptr<std::remove_pointer_t<Desc>, Deleter<Desc, Destroy>>;
}  // namespace legacy_internal

using TensorDescriptor = legacy_internal::Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = legacy_internal::Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = legacy_internal::Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using ActivationDescriptor = legacy_internal::Owned<cudnnActivationDescriptor_t, cudnnDestroyActivationDescriptor>;
using PoolingDescriptor = legacy_internal::Owned<cudnnPoolingDescriptor_t, cudnnDestroyPoolingDescriptor>;
using LrnDescriptor = legacy_internal::Owned<cudnnLRNDescriptor_t, cudnnDestroyLRNDescriptor>;

absl::StatusOr<TensorDescriptor> MakeTensor4d(const Shape4& shape, Layout layout, IoType type);
// kNone → null descriptor; elu_alpha is used by kElu only.
absl::StatusOr<ActivationDescriptor> MakeActivation(LegacyActivation act, double elu_alpha = 1.0);

// y = act(scale * (x - mean) / sqrt(var + epsilon) + bias), per channel (spatial mode).
// scale/bias/mean/var are float[C] in device memory (cudnnDeriveBNTensorDescriptor's type).
class BatchNormInference {
 public:
  static absl::StatusOr<BatchNormInference> Create(const Shape4& shape, Layout layout, IoType type, double epsilon,
                                                   LegacyActivation act = LegacyActivation::kNone);
  absl::Status Run(cudnnHandle_t handle, const void* x, void* y, const void* scale, const void* bias, const void* mean,
                   const void* var) const;
  size_t workspace_bytes() const { return 0; }

 private:
  BatchNormInference() = default;
  TensorDescriptor xy_, params_;
  ActivationDescriptor act_;
  double epsilon_ = 0;
};

// Grouped / depthwise (or dense) 2-D convolution with optional bias and activation.
// Weights: [K, C/groups, R, S] logical, stored KRSC for kNHWC and KCRS for kNCHW. Bias: [K].
// Symmetric padding only (the legacy API's limit).
struct LegacyConvSpec {
  Shape4 x;
  int k = 1, r = 1, s = 1, groups = 1;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  Layout layout = Layout::kNHWC;
  IoType type = IoType::kHalf;
  bool allow_tf32 = false;  // float I/O: false → FMA math only
  bool has_bias = false;
  LegacyActivation activation = LegacyActivation::kNone;  // kNone, kRelu or kRelu6
  bool exhaustive_search = false;                         // cudnnFindConvolutionForwardAlgorithm (runs on the GPU)
  size_t workspace_limit = size_t{256} << 20;
};

class LegacyConv {
 public:
  // Needs a handle on a live GPU (the algorithm query does).
  static absl::StatusOr<LegacyConv> Create(cudnnHandle_t handle, const LegacyConvSpec& spec);
  absl::Status Run(cudnnHandle_t handle, const void* x, const void* w, const void* bias, void* y,
                   void* workspace) const;
  const Shape4& output_shape() const { return y_shape_; }
  size_t workspace_bytes() const { return workspace_; }
  cudnnConvolutionFwdAlgo_t algorithm() const { return algo_; }
  // "algo 1 math 0 fused-bias-relu", for --explain.
  std::string description() const;

 private:
  LegacyConv() = default;
  absl::Status ChooseAlgorithm(cudnnHandle_t handle);
  LegacyConvSpec spec_;
  Shape4 y_shape_;
  TensorDescriptor x_, y_, bias_;
  FilterDescriptor w_;
  ConvolutionDescriptor conv_;
  ActivationDescriptor act_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  size_t workspace_ = 0;
  bool fused_ = false;  // cudnnConvolutionBiasActivationForward (bias + ReLU)
};

enum class PoolMode { kMax, kAverageIncludePad, kAverageExcludePad };
struct PoolSpec {
  Shape4 x;
  Layout layout = Layout::kNHWC;
  IoType type = IoType::kHalf;
  PoolMode mode = PoolMode::kMax;
  int window_h = 1, window_w = 1, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
};

class Pooling {
 public:
  static absl::StatusOr<Pooling> Create(const PoolSpec& spec);
  absl::Status Run(cudnnHandle_t handle, const void* x, void* y) const;
  const Shape4& output_shape() const { return y_shape_; }
  size_t workspace_bytes() const { return 0; }

 private:
  Pooling() = default;
  Shape4 y_shape_;
  TensorDescriptor x_, y_;
  PoolingDescriptor pool_;
};

// Cross-channel LRN (cudnnLRNCrossChannelForward) of a packed NCHW tensor: window `size` in [1, 16],
// bias >= 1e-5, beta >= 0.01 (cuDNN's limits; InvalidArgument outside them). cuDNN divides alpha by
// the window size itself, as ONNX does.
struct LrnSpec {
  Shape4 x;
  IoType type = IoType::kFloat;
  int size = 1;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
};

class Lrn {
 public:
  static absl::StatusOr<Lrn> Create(const LrnSpec& spec);
  absl::Status Run(cudnnHandle_t handle, const void* x, void* y) const;

 private:
  Lrn() = default;
  TensorDescriptor xy_;
  LrnDescriptor lrn_;
};

// Accurate softmax (or log-softmax) over the middle dim of a packed [outer, C, inner] tensor (viewed
// as NCHW [outer, C, inner, 1], channel mode): softmax along any axis of any rank.
class Softmax {
 public:
  static absl::StatusOr<Softmax> Create(int outer, int c, int inner, IoType type, bool log);
  absl::Status Run(cudnnHandle_t handle, const void* x, void* y) const;
  size_t workspace_bytes() const { return 0; }

 private:
  Softmax() = default;
  TensorDescriptor xy_;
  bool log_ = false;
};

// Elementwise activation over `count` packed elements (in place allowed: x == y).
class Activation {
 public:
  static absl::StatusOr<Activation> Create(int64_t count, IoType type, LegacyActivation act, double elu_alpha = 1.0);
  absl::Status Run(cudnnHandle_t handle, const void* x, void* y) const;
  size_t workspace_bytes() const { return 0; }

 private:
  Activation() = default;
  TensorDescriptor xy_;
  ActivationDescriptor act_;
};

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_LEGACY_H_
