// kernels/cudnn/conv_transpose.cc: ConvTranspose through cudnnConvolutionBackwardData (see
// conv_transpose.h).
#include "kernels/cudnn/conv_transpose.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/operation_graph.h"  // ToCudnnDataType
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Whether y's extent along one dim is the backward-data convolution's: the forward conv of y
// (pad on both sides) gives back x's extent.
bool ReachesExtent(int x, int y, int kernel, int pad, int stride, int dilation) {
  const int64_t span = int64_t{y} + 2 * pad - (int64_t{kernel} - 1) * dilation - 1;
  return span >= 0 && span / stride + 1 == x;
}

absl::Status CheckSpec(const ConvTransposeSpec& spec) {
  if (spec.x.n <= 0 || spec.x.c <= 0 || spec.x.h <= 0 || spec.x.w <= 0 || spec.y.n != spec.x.n || spec.y.c <= 0 ||
      spec.y.h <= 0 || spec.y.w <= 0) {
    return absl::InvalidArgumentError("ConvTranspose dims must be positive, one batch");
  }
  if (spec.groups <= 0 || spec.x.c % spec.groups != 0 || spec.y.c % spec.groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("groups ", spec.groups, " must divide C_in ", spec.x.c, " and C_out ", spec.y.c));
  }
  if (spec.pad_h < 0 || spec.pad_w < 0 || spec.stride_h < 1 || spec.stride_w < 1 || spec.dilation_h < 1 ||
      spec.dilation_w < 1) {
    return absl::InvalidArgumentError("ConvTranspose pads, strides or dilations out of range");
  }
  if (!ReachesExtent(spec.x.h, spec.y.h, spec.r, spec.pad_h, spec.stride_h, spec.dilation_h) ||
      !ReachesExtent(spec.x.w, spec.y.w, spec.s, spec.pad_w, spec.stride_w, spec.dilation_w)) {
    return absl::InvalidArgumentError("output extent not reached by a backward-data convolution with symmetric pads");
  }
  return absl::OkStatus();
}

cudnnTensorFormat_t FormatOf(Layout layout) { return layout == Layout::kNHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW; }

bool Strict(const ConvTransposeSpec& spec) { return spec.type == IoType::kFloat && !spec.allow_tf32; }

}  // namespace

absl::StatusOr<ConvTranspose> ConvTranspose::Create(cudnnHandle_t handle, const ConvTransposeSpec& spec) {
  CUDNN_RETURN_IF_NOT_OK(CheckSpec(spec));
  ConvTranspose t;
  t.spec_ = spec;
  CUDNN_ASSIGN_OR_RETURN(t.x_, MakeTensor4d(spec.x, spec.layout, spec.type));
  CUDNN_ASSIGN_OR_RETURN(t.y_, MakeTensor4d(spec.y, spec.layout, spec.type));
  if (spec.has_bias) {
    CUDNN_ASSIGN_OR_RETURN(t.bias_, MakeTensor4d(Shape4{1, spec.y.c, 1, 1}, Layout::kNCHW, spec.type));
  }
  cudnnFilterDescriptor_t raw_w = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&raw_w));
  t.w_.reset(raw_w);
  CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(raw_w, ToCudnnDataType(spec.type), FormatOf(spec.layout), spec.x.c,
                                                   spec.y.c / spec.groups, spec.r, spec.s));
  cudnnConvolutionDescriptor_t raw_conv = nullptr;
  CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&raw_conv));
  t.conv_.reset(raw_conv);
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(raw_conv, spec.pad_h, spec.pad_w, spec.stride_h, spec.stride_w,
                                                        spec.dilation_h, spec.dilation_w, CUDNN_CROSS_CORRELATION,
                                                        CUDNN_DATA_FLOAT));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(raw_conv, spec.groups));
  const cudnnMathType_t requested = Is16Bit(spec.type) ? CUDNN_TENSOR_OP_MATH
                                    : spec.allow_tf32  ? CUDNN_DEFAULT_MATH
                                                       : CUDNN_FMA_MATH;
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(raw_conv, requested));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
  int returned = 0;
  CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, t.w_.get(), t.x_.get(), t.conv_.get(),
                                                                    t.y_.get(), static_cast<int>(perf.size()),
                                                                    &returned, perf.data()));
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionBwdDataAlgoPerf_t& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > spec.workspace_limit) continue;
    if (Strict(spec) && p.mathType != CUDNN_FMA_MATH && p.mathType != CUDNN_DEFAULT_MATH) continue;
    t.algo_ = p.algo;
    t.math_ = Strict(spec) ? CUDNN_FMA_MATH : p.mathType;
    CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(raw_conv, t.math_));
    CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, t.w_.get(), t.x_.get(), t.conv_.get(),
                                                                       t.y_.get(), t.algo_, &t.workspace_));
    return t;
  }
  return absl::NotFoundError(absl::StrCat("no usable backward-data algorithm among ", returned));
}

absl::Status ConvTranspose::Run(cudnnHandle_t handle, const void* x, const void* w, const void* bias, void* y,
                                void* workspace) const {
  if (spec_.has_bias && bias == nullptr) return absl::InvalidArgumentError("bias pointer is null");
  CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(handle, &kOne, w_.get(), w, x_.get(), x, conv_.get(), algo_,
                                                     workspace, workspace_, &kZero, y_.get(), y));
  if (spec_.has_bias) CUDNN_RETURN_IF_ERROR(cudnnAddTensor(handle, &kOne, bias_.get(), bias, &kOne, y_.get(), y));
  return absl::OkStatus();
}

std::string ConvTranspose::description() const {
  return absl::StrCat("backward-data algo ", static_cast<int>(algo_), " math ", static_cast<int>(math_), " workspace ",
                      workspace_);
}

}  // namespace cudnn
