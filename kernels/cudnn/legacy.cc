// kernels/cudnn/legacy.cc: descriptors, algorithm choice and calls of the legacy cuDNN wrappers.
#include "kernels/cudnn/legacy.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/operation_graph.h"  // ToCudnnDataType
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;
constexpr double kRelu6Ceiling = 6.0;

cudnnTensorFormat_t FormatOf(Layout layout) { return layout == Layout::kNHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW; }

absl::Status CheckShape(const Shape4& s, const char* what) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": dims must be positive"));
  }
  return absl::OkStatus();
}

absl::StatusOr<FilterDescriptor> MakeFilter(const LegacyConvSpec& spec) {
  cudnnFilterDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&raw));
  FilterDescriptor w(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(raw, ToCudnnDataType(spec.type), FormatOf(spec.layout), spec.k,
                                                   spec.x.c / spec.groups, spec.r, spec.s));
  return w;
}

cudnnMathType_t RequestedMath(const LegacyConvSpec& spec) {
  if (Is16Bit(spec.type)) return CUDNN_TENSOR_OP_MATH;
  return spec.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

absl::StatusOr<ConvolutionDescriptor> MakeConv(const LegacyConvSpec& spec) {
  cudnnConvolutionDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&raw));
  ConvolutionDescriptor conv(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(raw, spec.pad_h, spec.pad_w, spec.stride_h, spec.stride_w,
                                                        spec.dilation_h, spec.dilation_w, CUDNN_CROSS_CORRELATION,
                                                        CUDNN_DATA_FLOAT));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(raw, spec.groups));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(raw, RequestedMath(spec)));
  return conv;
}

absl::Status CheckConvSpec(const LegacyConvSpec& spec) {
  CUDNN_RETURN_IF_NOT_OK(CheckShape(spec.x, "conv input"));
  if (spec.groups <= 0 || spec.x.c % spec.groups != 0 || spec.k % spec.groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("groups ", spec.groups, " must divide C ", spec.x.c, " and K ", spec.k));
  }
  if (spec.activation != LegacyActivation::kNone && spec.activation != LegacyActivation::kRelu &&
      spec.activation != LegacyActivation::kRelu6) {
    return absl::InvalidArgumentError("legacy conv takes no activation, ReLU or ReLU6");
  }
  return absl::OkStatus();
}

// Keeps results that ran, fit the workspace limit and, for strict fp32, use no tensor cores.
bool Usable(const cudnnConvolutionFwdAlgoPerf_t& perf, const LegacyConvSpec& spec) {
  if (perf.status != CUDNN_STATUS_SUCCESS || perf.memory > spec.workspace_limit) return false;
  const bool strict = spec.type == IoType::kFloat && !spec.allow_tf32;
  return !strict || perf.mathType == CUDNN_FMA_MATH || perf.mathType == CUDNN_DEFAULT_MATH;
}

}  // namespace

absl::StatusOr<TensorDescriptor> MakeTensor4d(const Shape4& shape, Layout layout, IoType type) {
  CUDNN_RETURN_IF_NOT_OK(CheckShape(shape, "tensor"));
  cudnnTensorDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&raw));
  TensorDescriptor desc(raw);
  CUDNN_RETURN_IF_ERROR(
      cudnnSetTensor4dDescriptor(raw, FormatOf(layout), ToCudnnDataType(type), shape.n, shape.c, shape.h, shape.w));
  return desc;
}

absl::StatusOr<ActivationDescriptor> MakeActivation(LegacyActivation act, double elu_alpha) {
  if (act == LegacyActivation::kNone) return ActivationDescriptor();
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
  double coef = 0;
  switch (act) {
    case LegacyActivation::kRelu6:
      mode = CUDNN_ACTIVATION_CLIPPED_RELU;
      coef = kRelu6Ceiling;
      break;
    case LegacyActivation::kSigmoid: mode = CUDNN_ACTIVATION_SIGMOID; break;
    case LegacyActivation::kTanh: mode = CUDNN_ACTIVATION_TANH; break;
    case LegacyActivation::kElu:
      mode = CUDNN_ACTIVATION_ELU;
      coef = elu_alpha;
      break;
    default: break;
  }
  cudnnActivationDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&raw));
  ActivationDescriptor desc(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetActivationDescriptor(raw, mode, CUDNN_PROPAGATE_NAN, coef));
  return desc;
}

// ---- BatchNormInference ----

absl::StatusOr<BatchNormInference> BatchNormInference::Create(const Shape4& shape, Layout layout, IoType type,
                                                              double epsilon, LegacyActivation act) {
  if (epsilon < CUDNN_BN_MIN_EPSILON) {
    return absl::InvalidArgumentError(absl::StrCat("BatchNorm epsilon ", epsilon, " < CUDNN_BN_MIN_EPSILON"));
  }
  BatchNormInference bn;
  bn.epsilon_ = epsilon;
  CUDNN_ASSIGN_OR_RETURN(bn.xy_, MakeTensor4d(shape, layout, type));
  cudnnTensorDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&raw));
  bn.params_.reset(raw);
  CUDNN_RETURN_IF_ERROR(cudnnDeriveBNTensorDescriptor(raw, bn.xy_.get(), CUDNN_BATCHNORM_SPATIAL));
  CUDNN_ASSIGN_OR_RETURN(bn.act_, MakeActivation(act));
  return bn;
}

absl::Status BatchNormInference::Run(cudnnHandle_t handle, const void* x, void* y, const void* scale, const void* bias,
                                     const void* mean, const void* var) const {
  CUDNN_RETURN_IF_ERROR(cudnnBatchNormalizationForwardInference(handle, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero,
                                                                xy_.get(), x, xy_.get(), y, params_.get(), scale, bias,
                                                                mean, var, epsilon_));
  if (act_) {
    CUDNN_RETURN_IF_ERROR(cudnnActivationForward(handle, act_.get(), &kOne, xy_.get(), y, &kZero, xy_.get(), y));
  }
  return absl::OkStatus();
}

// ---- LegacyConv ----

absl::StatusOr<LegacyConv> LegacyConv::Create(cudnnHandle_t handle, const LegacyConvSpec& spec) {
  CUDNN_RETURN_IF_NOT_OK(CheckConvSpec(spec));
  LegacyConv conv;
  conv.spec_ = spec;
  CUDNN_ASSIGN_OR_RETURN(conv.x_, MakeTensor4d(spec.x, spec.layout, spec.type));
  CUDNN_ASSIGN_OR_RETURN(conv.w_, MakeFilter(spec));
  CUDNN_ASSIGN_OR_RETURN(conv.conv_, MakeConv(spec));
  int n = 0, c = 0, h = 0, w = 0;
  CUDNN_RETURN_IF_ERROR(
      cudnnGetConvolution2dForwardOutputDim(conv.conv_.get(), conv.x_.get(), conv.w_.get(), &n, &c, &h, &w));
  conv.y_shape_ = Shape4{n, c, h, w};
  CUDNN_ASSIGN_OR_RETURN(conv.y_, MakeTensor4d(conv.y_shape_, spec.layout, spec.type));
  if (spec.has_bias) {
    CUDNN_ASSIGN_OR_RETURN(conv.bias_, MakeTensor4d(Shape4{1, spec.k, 1, 1}, Layout::kNCHW, spec.type));
  }
  CUDNN_ASSIGN_OR_RETURN(conv.act_, MakeActivation(spec.activation));
  conv.fused_ = spec.has_bias && spec.activation == LegacyActivation::kRelu;
  CUDNN_RETURN_IF_NOT_OK(conv.ChooseAlgorithm(handle));
  return conv;
}

absl::Status LegacyConv::ChooseAlgorithm(cudnnHandle_t handle) {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int returned = 0;
  if (spec_.exhaustive_search) {
    CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionForwardAlgorithm(handle, x_.get(), w_.get(), conv_.get(), y_.get(),
                                                               static_cast<int>(perf.size()), &returned, perf.data()));
  } else {
    CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
        handle, x_.get(), w_.get(), conv_.get(), y_.get(), static_cast<int>(perf.size()), &returned, perf.data()));
  }
  for (int i = 0; i < returned; ++i) {
    if (!Usable(perf[i], spec_)) continue;
    algo_ = perf[i].algo;
    // Strict fp32 keeps FMA math on the descriptor; otherwise use the math the result was timed
    // with.
    math_ = (spec_.type == IoType::kFloat && !spec_.allow_tf32) ? CUDNN_FMA_MATH : perf[i].mathType;
    CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_.get(), math_));
    CUDNN_RETURN_IF_ERROR(
        cudnnGetConvolutionForwardWorkspaceSize(handle, x_.get(), w_.get(), conv_.get(), y_.get(), algo_, &workspace_));
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no usable convolution algorithm among ", returned, " (workspace limit ",
                                          spec_.workspace_limit, ")"));
}

absl::Status LegacyConv::Run(cudnnHandle_t handle, const void* x, const void* w, const void* bias, void* y,
                             void* workspace) const {
  if (spec_.has_bias && bias == nullptr) return absl::InvalidArgumentError("bias pointer is null");
  if (fused_) {
    // z = y with alpha2 = 0: y's old contents are not read into the result.
    CUDNN_RETURN_IF_ERROR(cudnnConvolutionBiasActivationForward(handle, &kOne, x_.get(), x, w_.get(), w, conv_.get(),
                                                                algo_, workspace, workspace_, &kZero, y_.get(), y,
                                                                bias_.get(), bias, act_.get(), y_.get(), y));
    return absl::OkStatus();
  }
  CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(handle, &kOne, x_.get(), x, w_.get(), w, conv_.get(), algo_, workspace,
                                                workspace_, &kZero, y_.get(), y));
  if (spec_.has_bias) {
    CUDNN_RETURN_IF_ERROR(cudnnAddTensor(handle, &kOne, bias_.get(), bias, &kOne, y_.get(), y));
  }
  if (act_) {
    CUDNN_RETURN_IF_ERROR(cudnnActivationForward(handle, act_.get(), &kOne, y_.get(), y, &kZero, y_.get(), y));
  }
  return absl::OkStatus();
}

std::string LegacyConv::description() const {
  return absl::StrCat("algo ", static_cast<int>(algo_), " math ", static_cast<int>(math_), " workspace ", workspace_,
                      fused_ ? " fused-bias-relu" : "");
}

// ---- Pooling ----

absl::StatusOr<Pooling> Pooling::Create(const PoolSpec& spec) {
  Pooling pool;
  CUDNN_ASSIGN_OR_RETURN(pool.x_, MakeTensor4d(spec.x, spec.layout, spec.type));
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  if (spec.mode == PoolMode::kAverageIncludePad) mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  if (spec.mode == PoolMode::kAverageExcludePad) mode = CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  cudnnPoolingDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreatePoolingDescriptor(&raw));
  pool.pool_.reset(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetPooling2dDescriptor(raw, mode, CUDNN_PROPAGATE_NAN, spec.window_h, spec.window_w,
                                                    spec.pad_h, spec.pad_w, spec.stride_h, spec.stride_w));
  int n = 0, c = 0, h = 0, w = 0;
  CUDNN_RETURN_IF_ERROR(cudnnGetPooling2dForwardOutputDim(raw, pool.x_.get(), &n, &c, &h, &w));
  pool.y_shape_ = Shape4{n, c, h, w};
  CUDNN_ASSIGN_OR_RETURN(pool.y_, MakeTensor4d(pool.y_shape_, spec.layout, spec.type));
  return pool;
}

absl::Status Pooling::Run(cudnnHandle_t handle, const void* x, void* y) const {
  CUDNN_RETURN_IF_ERROR(cudnnPoolingForward(handle, pool_.get(), &kOne, x_.get(), x, &kZero, y_.get(), y));
  return absl::OkStatus();
}

// ---- LRN ----

absl::StatusOr<Lrn> Lrn::Create(const LrnSpec& spec) {
  if (spec.size < CUDNN_LRN_MIN_N || spec.size > CUDNN_LRN_MAX_N || spec.bias < CUDNN_LRN_MIN_K ||
      spec.beta < CUDNN_LRN_MIN_BETA) {
    return absl::InvalidArgumentError("LRN parameters outside cuDNN's limits (size 1-16, bias >= 1e-5, beta >= 0.01)");
  }
  Lrn lrn;
  CUDNN_ASSIGN_OR_RETURN(lrn.xy_, MakeTensor4d(spec.x, Layout::kNCHW, spec.type));
  cudnnLRNDescriptor_t raw = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateLRNDescriptor(&raw));
  lrn.lrn_.reset(raw);
  CUDNN_RETURN_IF_ERROR(cudnnSetLRNDescriptor(raw, static_cast<unsigned>(spec.size), spec.alpha, spec.beta, spec.bias));
  return lrn;
}

absl::Status Lrn::Run(cudnnHandle_t handle, const void* x, void* y) const {
  CUDNN_RETURN_IF_ERROR(cudnnLRNCrossChannelForward(handle, lrn_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne, xy_.get(),
                                                    x, &kZero, xy_.get(), y));
  return absl::OkStatus();
}

// ---- Softmax ----

absl::StatusOr<Softmax> Softmax::Create(int outer, int c, int inner, IoType type, bool log) {
  Softmax softmax;
  softmax.log_ = log;
  CUDNN_ASSIGN_OR_RETURN(softmax.xy_, MakeTensor4d(Shape4{outer, c, inner, 1}, Layout::kNCHW, type));
  return softmax;
}

absl::Status Softmax::Run(cudnnHandle_t handle, const void* x, void* y) const {
  CUDNN_RETURN_IF_ERROR(cudnnSoftmaxForward(handle, log_ ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                            CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, xy_.get(), x, &kZero, xy_.get(), y));
  return absl::OkStatus();
}

// ---- Activation ----

absl::StatusOr<Activation> Activation::Create(int64_t count, IoType type, LegacyActivation act, double elu_alpha) {
  if (count <= 0 || count > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("activation element count ", count));
  }
  if (act == LegacyActivation::kNone) return absl::InvalidArgumentError("activation kNone");
  Activation out;
  CUDNN_ASSIGN_OR_RETURN(out.xy_, MakeTensor4d(Shape4{1, 1, 1, static_cast<int>(count)}, Layout::kNCHW, type));
  CUDNN_ASSIGN_OR_RETURN(out.act_, MakeActivation(act, elu_alpha));
  return out;
}

absl::Status Activation::Run(cudnnHandle_t handle, const void* x, void* y) const {
  CUDNN_RETURN_IF_ERROR(cudnnActivationForward(handle, act_.get(), &kOne, xy_.get(), x, &kZero, xy_.get(), y));
  return absl::OkStatus();
}

}  // namespace cudnn
