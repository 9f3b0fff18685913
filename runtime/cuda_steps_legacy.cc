// Legacy steps: BN inference (+ReLU), grouped conv (+bias, ReLU/ReLU6), pools, softmax and LRN
// through legacy cuDNN calls; depthwise convs on the own NHWC depthwise kernel; Gemm as a 1x1 conv
// for the fallback rung of FusedGraph steps. LSTM/GRU/RNN steps go to cuda_steps_rnn.cc.
#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/global_avg_pool.h"
#include "kernels/cudnn/status.h"
#include "ops/lrn.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/device_runner.h"
#include "runtime/fused_lowering.h"

namespace exec {

namespace {

cudnn::Shape4 ToShape4(const std::vector<int64_t>& d) {
  return cudnn::Shape4{static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]), static_cast<int>(d[3])};
}

// The activation a Legacy step absorbed after its first node (Relu, or Clip(0,
// 6)).
// Whether a Legacy step's absorbed tail is x * Sigmoid(x) (SiLU; the own depthwise kernel only).
bool HasSiluTail(const ir::Graph& g, const Step& step) {
  return step.nodes.size() == 3 && g.node(step.nodes[1]).op_type == "Sigmoid" && g.node(step.nodes[2]).op_type == "Mul";
}

absl::StatusOr<cudnn::LegacyActivation> AbsorbedActivation(const ir::Graph& g, const Step& step) {
  if (step.nodes.size() == 1 || HasSiluTail(g, step)) return cudnn::LegacyActivation::kNone;
  const ir::Node& act = g.node(step.nodes[1]);
  if (act.op_type == "Relu") return cudnn::LegacyActivation::kRelu;
  if (act.op_type == "Clip" && act.input(1) != ir::kNoValue && act.input(2) != ir::kNoValue &&
      g.value(act.input(1)).constant->GetAsDouble(0) == 0.0 && g.value(act.input(2)).constant->GetAsDouble(0) == 6.0) {
    return cudnn::LegacyActivation::kRelu6;
  }
  return absl::UnimplementedError("absorbed activation is not ReLU or ReLU6");
}

// The own depthwise kernel's parameters for a legacy conv spec, when it is a depthwise conv (one
// output channel per input channel) in NHWC that the kernel handles; nullopt otherwise.
std::optional<kernels::cuda::DepthwiseConvParams> OwnDepthwise(const cudnn::LegacyConvSpec& spec,
                                                               const std::vector<int64_t>& w,
                                                               cudnn::LegacyActivation act) {
  if (spec.layout != cudnn::Layout::kNHWC || spec.groups != spec.x.c || spec.k != spec.x.c || w[1] != 1) {
    return std::nullopt;
  }
  kernels::cuda::DepthwiseConvParams p;
  p.n = spec.x.n, p.c = spec.x.c, p.h = spec.x.h, p.w = spec.x.w, p.r = spec.r, p.s = spec.s;
  p.pad_top = p.pad_bottom = spec.pad_h;
  p.pad_left = p.pad_right = spec.pad_w;
  p.stride_h = spec.stride_h, p.stride_w = spec.stride_w;
  p.dilation_h = spec.dilation_h, p.dilation_w = spec.dilation_w;
  p.out_h = (p.h + 2 * p.pad_top - ((p.r - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  p.out_w = (p.w + 2 * p.pad_left - ((p.s - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  p.activation = act == cudnn::LegacyActivation::kRelu    ? kernels::cuda::DepthwiseConvParams::kRelu
                 : act == cudnn::LegacyActivation::kRelu6 ? kernels::cuda::DepthwiseConvParams::kRelu6
                                                          : kernels::cuda::DepthwiseConvParams::kNone;
  if (spec.type == cudnn::IoType::kBFloat16) return std::nullopt;  // the own kernel is fp32/fp16
  p.fp16 = spec.type == cudnn::IoType::kHalf;
  if (p.out_h < 1 || p.out_w < 1 || !kernels::cuda::DepthwiseConvSupported(p)) return std::nullopt;
  return p;
}

// Gemm(A[M,K], B[N,K] transposed, C[N]) as a 1x1 convolution of A read as [M,K,1,1] NCHW with
// filters B read as [N,K,1,1]: the legacy rung for a matmul cuDNN's graph API cannot build (e.g.
// strict fp32, where every matmul engine uses TF32).
absl::StatusOr<cudnn::LegacyConvSpec> GemmAsConv(const ir::Graph& g, const ir::Node& node,
                                                 const std::vector<int64_t>& a, cudnn::IoType io, bool allow_tf32) {
  const ir::ValueId b = node.input(1), c = node.input(2);
  if (a.size() != 2 || node.attrs.GetInt("transA", 0) != 0 || node.attrs.GetInt("transB", 0) != 1 ||
      node.attrs.GetFloat("alpha", 1.0f) != 1.0f || node.attrs.GetFloat("beta", 1.0f) != 1.0f || !g.value(b).constant ||
      g.value(b).constant->rank() != 2 || g.value(b).constant->shape()[1] != a[1]) {
    return absl::UnimplementedError("Gemm form (transposed A, untransposed B, alpha/beta, non-constant B)");
  }
  const int64_t n = g.value(b).constant->shape()[0];
  // A bias per output column: [N] or [1,N] ([N,1] would be per row).
  const ir::Tensor* bias = c == ir::kNoValue ? nullptr : (g.value(c).constant ? &*g.value(c).constant : nullptr);
  if (c != ir::kNoValue && (bias == nullptr || bias->num_elements() != n || bias->rank() > 2 ||
                            (bias->rank() == 2 && bias->shape()[0] != 1))) {
    return absl::UnimplementedError("Gemm bias is not a constant [N] or [1,N]");
  }
  cudnn::LegacyConvSpec spec;
  spec.x = cudnn::Shape4{static_cast<int>(a[0]), static_cast<int>(a[1]), 1, 1};
  spec.k = static_cast<int>(n);
  spec.r = spec.s = 1;
  spec.layout = cudnn::Layout::kNCHW;
  spec.type = io;
  spec.allow_tf32 = allow_tf32;
  spec.has_bias = c != ir::kNoValue;
  return spec;
}

// Softmax/LogSoftmax as cuDNN's channel-mode softmax over the middle dim of [outer, C, inner]: opset
// 13+ normalises along `axis` alone; before 13 over the dims from `axis` on, flattened (inner = 1).
// Unimplemented when a dim does not fit cuDNN's int descriptors.
absl::StatusOr<std::array<int64_t, 3>> SoftmaxView(const ir::Node& node, const std::vector<int64_t>& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t axis = node.attrs.GetInt("axis", node.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return absl::UnimplementedError("softmax axis out of range");
  std::array<int64_t, 3> view = {1, 1, 1};
  for (int64_t d = 0; d < rank; ++d) {
    view[d < axis ? 0 : (d == axis || node.opset < 13 ? 1 : 2)] *= dims[d];
  }
  for (int64_t v : view) {
    if (v > std::numeric_limits<int32_t>::max())
      return absl::UnimplementedError("softmax dims above cuDNN's int range");
  }
  return view;
}

// LRN of a 3-D or 4-D input as cuDNN's cross-channel LRN over NCHW [N, C, H, W] (3-D: W = 1).
absl::StatusOr<cudnn::LrnSpec> LrnSpecOf(const ir::Node& node, const std::vector<int64_t>& dims, cudnn::IoType io) {
  absl::StatusOr<ops::LrnAttrs> attrs = ops::ParseLrnAttrs(node);
  if (!attrs.ok()) return attrs.status();
  if (dims.size() < 3 || dims.size() > 4) return absl::UnimplementedError("LRN of rank other than 3 or 4");
  for (int64_t d : dims) {
    if (d > std::numeric_limits<int32_t>::max()) return absl::UnimplementedError("LRN dims above cuDNN's int range");
  }
  cudnn::LrnSpec spec;
  spec.x = cudnn::Shape4{static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2]),
                         dims.size() == 4 ? static_cast<int>(dims[3]) : 1};
  spec.type = io;
  spec.size = static_cast<int>(std::min<int64_t>(attrs->size, 1 << 20));
  spec.alpha = attrs->alpha;
  spec.beta = attrs->beta;
  spec.bias = attrs->bias;
  return spec;
}

// The legacy call's name for --explain: the op type, or the cuDNN softmax mode.
std::string LegacyCallName(const ir::Node& node) {
  if (node.op_type == "Softmax") return "Softmax (cudnnSoftmaxForward, accurate)";
  if (node.op_type == "LogSoftmax") return "LogSoftmax (cudnnSoftmaxForward, log)";
  if (node.op_type == "LRN") return "LRN (cudnnLRNCrossChannelForward)";
  return node.op_type;
}

bool SymmetricPads(const std::vector<int64_t>& pads) {
  return pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3];
}

}  // namespace

absl::StatusOr<DeviceTensor> CudaExecutor::FloatConstant(ir::ValueId id) {
  DeviceTensor& cached = float_constants_[id];
  if (cached.valid()) return cached;
  if (Capturing()) return absl::FailedPreconditionError("a constant cache would be filled inside a CUDA graph");
  const ir::Tensor& c = *plan_.graph.value(id).constant;
  absl::StatusOr<ir::Tensor> f = ir::Tensor::Create(ir::DType::kFloat32, c.shape());
  if (!f.ok()) return f.status();
  for (int64_t i = 0; i < c.num_elements(); ++i) f->data<float>()[i] = static_cast<float>(c.GetAsDouble(i));
  absl::StatusOr<DeviceTensor> d = Upload(*f, false, stream_);
  if (!d.ok()) return d.status();
  cached = *std::move(d);
  return cached;
}

absl::Status CudaExecutor::RunLegacy(size_t index, const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  if (IsRecurrentOp(node.op_type)) return RunRecurrent(index, step, values);
  absl::StatusOr<DeviceTensor> x = Input(node.inputs[0], values);
  if (!x.ok()) return x.status();
  const ir::ValueId out_id = step.outputs.size() == 1 ? step.outputs[0] : ir::kNoValue;
  // One node of a split step and the whole step differ: the node count is part of the key.
  const std::string key = absl::StrCat(ir::ShapeToString(x->dims), "#", step.nodes.size());
  auto [it, inserted] = legacy_[index].try_emplace(key);
  LegacyEntry& e = it->second;
  if (inserted) {
    e.status = [&]() -> absl::Status {
      if (out_id == ir::kNoValue) return absl::UnimplementedError("several outputs");
      absl::StatusOr<cudnn::IoType> io_type = IoTypeOf(x->dtype);
      if (!io_type.ok()) return io_type.status();
      const cudnn::IoType io = *io_type;
      absl::StatusOr<cudnn::LegacyActivation> act = AbsorbedActivation(g, step);
      if (!act.ok()) return act.status();
      const std::string& op = node.op_type;
      if (op == "Softmax" || op == "LogSoftmax") {
        absl::StatusOr<std::array<int64_t, 3>> view = SoftmaxView(node, x->dims);
        if (!view.ok()) return view.status();
        CUDNN_ASSIGN_OR_RETURN(cudnn::Softmax sm,
                               cudnn::Softmax::Create(static_cast<int>((*view)[0]), static_cast<int>((*view)[1]),
                                                      static_cast<int>((*view)[2]), io, op == "LogSoftmax"));
        e.softmax = std::make_unique<cudnn::Softmax>(std::move(sm));
        e.out_dims = x->dims;
        return absl::OkStatus();
      }
      if (op == "LRN") {
        // cuDNN 9.19 makes the descriptor but its LRN kernel refuses bfloat16 (NOT_SUPPORTED at run).
        if (io == cudnn::IoType::kBFloat16) return absl::UnimplementedError("cuDNN's LRN has no bfloat16 kernel");
        absl::StatusOr<cudnn::LrnSpec> spec = LrnSpecOf(node, x->dims, io);
        if (!spec.ok()) return spec.status();
        CUDNN_ASSIGN_OR_RETURN(cudnn::Lrn lrn, cudnn::Lrn::Create(*spec));
        e.lrn = std::make_unique<cudnn::Lrn>(std::move(lrn));
        e.out_dims = x->dims;
        return absl::OkStatus();
      }
      if (op == "Gemm") {
        absl::StatusOr<cudnn::LegacyConvSpec> spec = GemmAsConv(g, node, x->dims, io, plan_.precision == "tf32");
        if (!spec.ok()) return spec.status();
        CUDNN_ASSIGN_OR_RETURN(cudnn::LegacyConv conv, cudnn::LegacyConv::Create(cudnn_, *spec));
        e.out_dims = {x->dims[0], spec->k};
        e.conv = std::make_unique<cudnn::LegacyConv>(std::move(conv));
        return absl::OkStatus();
      }
      if (x->dims.size() != 4) return absl::UnimplementedError("not 4-D");
      e.nhwc = WantsNhwc(out_id);
      const cudnn::Layout layout = e.nhwc ? cudnn::Layout::kNHWC : cudnn::Layout::kNCHW;
      const cudnn::Shape4 shape = ToShape4(x->dims);
      if (op == "BatchNormalization") {
        for (int i = 1; i <= 4; ++i) {
          if (!g.value(node.inputs[i]).constant) return absl::UnimplementedError("BN parameters are not constants");
        }
        CUDNN_ASSIGN_OR_RETURN(
            cudnn::BatchNormInference bn,
            cudnn::BatchNormInference::Create(shape, layout, io, node.attrs.GetFloat("epsilon", 1e-5f), *act));
        e.bn = std::make_unique<cudnn::BatchNormInference>(std::move(bn));
        e.out_dims = x->dims;
        return absl::OkStatus();
      }
      if (op == "Conv") {
        const std::vector<int64_t> pads = node.attrs.GetInts("pads", {0, 0, 0, 0});
        if (!SymmetricPads(pads) || node.attrs.GetString("auto_pad", "NOTSET") != "NOTSET") {
          return absl::UnimplementedError("asymmetric or auto pads");
        }
        // The dims only: a constant's from the host (its logical device copy may never be needed).
        const std::optional<ir::Tensor>& constant = g.value(node.inputs[1]).constant;
        absl::StatusOr<DeviceTensor> weights = constant ? DeviceTensor() : Input(node.inputs[1], values);
        if (!weights.ok()) return weights.status();
        const std::vector<int64_t> w = constant ? constant->shape() : weights->dims;
        if (w.size() != 4) return absl::UnimplementedError("weights not 4-D");
        const std::vector<int64_t> strides = node.attrs.GetInts("strides", {1, 1});
        const std::vector<int64_t> dilations = node.attrs.GetInts("dilations", {1, 1});
        cudnn::LegacyConvSpec spec;
        spec.x = shape;
        spec.k = static_cast<int>(w[0]);
        spec.r = static_cast<int>(w[2]);
        spec.s = static_cast<int>(w[3]);
        spec.groups = static_cast<int>(node.attrs.GetInt("group", 1));
        spec.pad_h = static_cast<int>(pads[0]);
        spec.pad_w = static_cast<int>(pads[1]);
        spec.stride_h = static_cast<int>(strides[0]);
        spec.stride_w = static_cast<int>(strides[1]);
        spec.dilation_h = static_cast<int>(dilations[0]);
        spec.dilation_w = static_cast<int>(dilations[1]);
        spec.layout = layout;
        spec.type = io;
        spec.allow_tf32 = false;  // depthwise/grouped convs are memory-bound:
                                  // TF32 only costs accuracy
        spec.has_bias = node.input(2) != ir::kNoValue;
        spec.activation = *act;
        const bool silu = HasSiluTail(g, step);
        if (std::optional<kernels::cuda::DepthwiseConvParams> dw = OwnDepthwise(spec, w, *act)) {
          if (silu) dw->activation = kernels::cuda::DepthwiseConvParams::kSilu;
          e.depthwise = dw;
          e.out_dims = {spec.x.n, spec.k, dw->out_h, dw->out_w};
          return absl::OkStatus();
        }
        if (silu) return absl::UnimplementedError("a SiLU tail runs only on the own depthwise kernel");
        CUDNN_ASSIGN_OR_RETURN(cudnn::LegacyConv conv, cudnn::LegacyConv::Create(cudnn_, spec));
        const cudnn::Shape4 y = conv.output_shape();
        e.out_dims = {y.n, y.c, y.h, y.w};
        e.conv = std::make_unique<cudnn::LegacyConv>(std::move(conv));
        return absl::OkStatus();
      }
      const bool pool_fits_own_kernel = x->dims[0] >= 1 && x->dims[0] < 65536 && x->dims[1] >= 1 &&
                                        x->dims[1] < (int64_t{1} << 30) && x->dims[2] * x->dims[3] >= 1;
      if (op == "GlobalAveragePool" && e.nhwc && step.nodes.size() == 1 && pool_fits_own_kernel) {
        e.own_global_avg_pool = true;
        e.out_dims = {x->dims[0], x->dims[1], 1, 1};
        return absl::OkStatus();
      }
      cudnn::PoolSpec pool;
      pool.x = shape;
      pool.layout = layout;
      pool.type = io;
      if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
        pool.mode = op == "GlobalMaxPool" ? cudnn::PoolMode::kMax : cudnn::PoolMode::kAverageIncludePad;
        pool.window_h = shape.h;
        pool.window_w = shape.w;
      } else {
        const std::vector<int64_t> k = node.attrs.GetInts("kernel_shape");
        const std::vector<int64_t> pads = node.attrs.GetInts("pads", {0, 0, 0, 0});
        const std::vector<int64_t> strides = node.attrs.GetInts("strides", {1, 1});
        if (k.size() != 2 || !SymmetricPads(pads) || node.attrs.GetInt("ceil_mode", 0) != 0 ||
            node.attrs.GetString("auto_pad", "NOTSET") != "NOTSET" ||
            node.attrs.GetInts("dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
            (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue)) {
          if (step.nodes.size() != 1) return absl::UnimplementedError("pooling form with a tail");
          absl::StatusOr<kernels::cuda::PoolParams> own = OwnPoolParams(node, x->dims, e.nhwc);
          if (!own.ok()) return own.status();
          e.own_pool = *own;
          e.out_dims = {x->dims[0], x->dims[1], own->grid[0], own->grid[1]};
          return absl::OkStatus();
        }
        pool.mode = op == "MaxPool"                             ? cudnn::PoolMode::kMax
                    : node.attrs.GetInt("count_include_pad", 0) ? cudnn::PoolMode::kAverageIncludePad
                                                                : cudnn::PoolMode::kAverageExcludePad;
        pool.window_h = static_cast<int>(k[0]);
        pool.window_w = static_cast<int>(k[1]);
        pool.pad_h = static_cast<int>(pads[0]);
        pool.pad_w = static_cast<int>(pads[1]);
        pool.stride_h = static_cast<int>(strides[0]);
        pool.stride_w = static_cast<int>(strides[1]);
      }
      CUDNN_ASSIGN_OR_RETURN(cudnn::Pooling p, cudnn::Pooling::Create(pool));
      const cudnn::Shape4 y = p.output_shape();
      e.out_dims = {y.n, y.c, y.h, y.w};
      e.pool = std::make_unique<cudnn::Pooling>(std::move(p));
      return absl::OkStatus();
    }();
    const bool own_kernel = step.nodes.size() == 1 && CudaKernelSupports(g, node);
    notes_[index] =
        e.status.ok() && e.depthwise ? std::string(kOwnDepthwiseNote)
        : e.status.ok() && e.own_global_avg_pool
            ? absl::StrCat("own NHWC global-average-pool kernel (kernels/cuda/global_avg_pool)", FromSumsNote(index))
        : e.status.ok() && e.own_pool
            ? std::string(
                  "own CUDA pooling kernel (kernels/cuda/pool: cuDNN's pooling descriptor has no ceil_mode, "
                  "asymmetric pads or dilations)")
        : e.status.ok() ? absl::StrCat("legacy cuDNN: ", e.conv ? e.conv->description() : LegacyCallName(node))
        : own_kernel ? absl::StrCat("own CUDA kernel (legacy cuDNN not used: ", e.status.message(), ")")
                        : absl::StrCat("host reference kernels (legacy cuDNN not used: ", e.status.message(), ")");
  }
  if (!e.status.ok()) {
    if (step.nodes.size() > 1) return RunSplit(index, e.status, values);
    return CudaKernelSupports(g, node) ? RunKernel(step, values) : RunOnHost(step, values);
  }
  absl::StatusOr<DeviceTensor> in = ToLayout(*x, e.nhwc, stream_);
  if (!in.ok()) return in.status();
  if (e.own_global_avg_pool && HandSumsToSqueezeExcite(index, *in)) return absl::OkStatus();
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(x->dtype, e.out_dims, e.nhwc, stream_);
  if (!out.ok()) return out.status();
  if (e.softmax) {
    CUDNN_RETURN_IF_NOT_OK(e.softmax->Run(cudnn_, in->data(), out->data()));
  } else if (e.lrn) {
    CUDNN_RETURN_IF_NOT_OK(e.lrn->Run(cudnn_, in->data(), out->data()));
  } else if (e.pool) {
    CUDNN_RETURN_IF_NOT_OK(e.pool->Run(cudnn_, in->data(), out->data()));
  } else if (e.own_pool) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::Pool(ToFloatType(x->dtype), *e.own_pool, in->data(), out->data(), stream_));
  } else if (e.bn) {
    std::vector<DeviceTensor> params;
    for (int i = 1; i <= 4; ++i) {
      absl::StatusOr<DeviceTensor> p = FloatConstant(node.inputs[i]);
      if (!p.ok()) return p.status();
      params.push_back(*std::move(p));
    }
    CUDNN_RETURN_IF_NOT_OK(e.bn->Run(cudnn_, in->data(), out->data(), params[0].data(), params[1].data(),
                                     params[2].data(), params[3].data()));
  } else if (e.own_global_avg_pool) {
    absl::StatusOr<bool> from_sums = PoolFromChannelSums(node.inputs[0], *in, *out);
    if (!from_sums.ok()) return from_sums.status();
    if (!*from_sums) CUDNN_RETURN_IF_NOT_OK(RunOwnGlobalAvgPool(*in, *out));
  } else if (e.depthwise) {
    CUDNN_RETURN_IF_NOT_OK(RunOwnDepthwise(index, e, *in, *out, values));
  } else {
    absl::StatusOr<DeviceTensor> w = Bound({node.inputs[1], e.nhwc, {}}, values);
    if (!w.ok()) return w.status();
    DeviceTensor bias, workspace;
    if (node.input(2) != ir::kNoValue) {
      absl::StatusOr<DeviceTensor> b = Input(node.input(2), values);
      if (!b.ok()) return b.status();
      bias = *std::move(b);
    }
    if (e.conv->workspace_bytes() > 0) {
      absl::StatusOr<DeviceTensor> ws =
          DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(e.conv->workspace_bytes())}, false, stream_);
      if (!ws.ok()) return ws.status();
      workspace = *std::move(ws);
    }
    CUDNN_RETURN_IF_NOT_OK(e.conv->Run(cudnn_, in->data(), w->data(), bias.data(), out->data(), workspace.data()));
  }
  values[out_id] = *std::move(out);
  return absl::OkStatus();
}

}  // namespace exec
