// kernels/cudnn/operation_graph.cc: spec validation and the descriptors of one operation graph.
#include "kernels/cudnn/operation_graph.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

constexpr int64_t kByteAlignment = 16;  // cudaMalloc'd buffers

struct ModeName {
  const char* name;
  cudnnPointwiseMode_t mode;
};
constexpr ModeName kModes[] = {
    {"ADD", CUDNN_POINTWISE_ADD},
    {"SUB", CUDNN_POINTWISE_SUB},
    {"MUL", CUDNN_POINTWISE_MUL},
    {"DIV", CUDNN_POINTWISE_DIV},
    {"MAX", CUDNN_POINTWISE_MAX},
    {"MIN", CUDNN_POINTWISE_MIN},
    {"SIGMOID_FWD", CUDNN_POINTWISE_SIGMOID_FWD},
    {"TANH_FWD", CUDNN_POINTWISE_TANH_FWD},
    {"ELU_FWD", CUDNN_POINTWISE_ELU_FWD},
    {"SWISH_FWD", CUDNN_POINTWISE_SWISH_FWD},
    {"GELU_FWD", CUDNN_POINTWISE_GELU_FWD},
    {"GELU_APPROX_TANH_FWD", CUDNN_POINTWISE_GELU_APPROX_TANH_FWD},
    {"ERF", CUDNN_POINTWISE_ERF},
    {"RELU_FWD", CUDNN_POINTWISE_RELU_FWD},
    {"IDENTITY", CUDNN_POINTWISE_IDENTITY},
    {"EXP", CUDNN_POINTWISE_EXP},
    {"LOG", CUDNN_POINTWISE_LOG},
};

absl::Status CheckTensor(const TensorDesc& t, const char* role) {
  if (t.dims.empty() || t.dims.size() != t.strides.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(role, " tensor uid ", t.uid, ": ", t.dims.size(), " dims but ", t.strides.size(), " strides"));
  }
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] <= 0 || t.strides[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(role, " tensor uid ", t.uid, ": dim/stride ", i, " not positive"));
    }
  }
  if (t.is_virtual && t.by_value) {
    return absl::InvalidArgumentError(absl::StrCat(role, " tensor uid ", t.uid, ": both virtual and by-value"));
  }
  return absl::OkStatus();
}

absl::Status CheckAnchor(const FusedGraphSpec& spec) {
  const size_t rank = spec.x.dims.size();
  if (spec.w.dims.size() != rank || spec.y.dims.size() != rank) {
    return absl::InvalidArgumentError("x, w and y must have the same rank");
  }
  if (spec.x.is_virtual || spec.w.is_virtual || spec.x.by_value || spec.w.by_value) {
    return absl::InvalidArgumentError("x and w must be real (non-virtual, non-by-value) tensors");
  }
  if (spec.anchor == FusedGraphSpec::kMatMul) {
    if (rank != 3) return absl::InvalidArgumentError("matmul tensors are [batch, rows, cols]");
    return absl::OkStatus();
  }
  if (rank < 3) return absl::InvalidArgumentError("conv tensors need at least one spatial dim");
  const size_t spatial = rank - 2;
  const ConvParams& c = spec.conv;
  if (c.pads_begin.size() != spatial || c.pads_end.size() != spatial || c.strides.size() != spatial ||
      c.dilations.size() != spatial) {
    return absl::InvalidArgumentError(
        absl::StrCat("conv params need ", spatial, " pads_begin, pads_end, strides, dilations"));
  }
  return absl::OkStatus();
}

absl::Status CheckEpilogue(const FusedGraphSpec& spec, std::set<int64_t> defined, const std::set<int64_t>& all) {
  for (const PointwiseOp& op : spec.epilogue) {
    CUDNN_ASSIGN_OR_RETURN(cudnnPointwiseMode_t mode, PointwiseModeFromName(op.mode));
    const bool binary = IsBinaryPointwise(mode);
    if (binary != (op.in1 >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(op.mode, ": ", binary ? "needs" : "takes no", " second input"));
    }
    std::vector<int64_t> inputs = {op.in0};
    if (binary) inputs.push_back(op.in1);
    for (int64_t in : inputs) {
      if (!defined.count(in)) {
        return absl::InvalidArgumentError(absl::StrCat(op.mode, ": input uid ", in, " is not defined before use"));
      }
    }
    if (!all.count(op.out)) {
      return absl::InvalidArgumentError(absl::StrCat(op.mode, ": output uid ", op.out, " unknown"));
    }
    defined.insert(op.out);
  }
  return absl::OkStatus();
}

absl::StatusOr<BackendDescriptor> MakeConvOp(const FusedGraphSpec& spec, std::map<int64_t, BackendDescriptor*>& tensors,
                                             std::vector<BackendDescriptor>& parts) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor conv, BackendDescriptor::Create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  const int64_t spatial = static_cast<int64_t>(spec.conv.strides.size());
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_DATA_FLOAT));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_CROSS_CORRELATION));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, spatial));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_DILATIONS, spec.conv.dilations));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, spec.conv.strides));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, spec.conv.pads_begin));
  CUDNN_RETURN_IF_NOT_OK(conv.Set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, spec.conv.pads_end));
  CUDNN_RETURN_IF_NOT_OK(conv.Finalize());

  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op,
                         BackendDescriptor::Create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, *tensors[spec.x.uid]));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, *tensors[spec.w.uid]));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *tensors[spec.y.uid]));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
  CUDNN_RETURN_IF_NOT_OK(op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f));
  CUDNN_RETURN_IF_NOT_OK(op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, 0.0f));
  CUDNN_RETURN_IF_NOT_OK(op.Finalize());
  parts.push_back(std::move(conv));
  return op;
}

absl::StatusOr<BackendDescriptor> MakeMatMulOp(const FusedGraphSpec& spec,
                                               std::map<int64_t, BackendDescriptor*>& tensors,
                                               std::vector<BackendDescriptor>& parts) {
  return MakeMatMulOperation(*tensors[spec.x.uid], *tensors[spec.w.uid], *tensors[spec.y.uid], parts);
}

std::vector<const TensorDesc*> AllTensors(const FusedGraphSpec& spec) {
  std::vector<const TensorDesc*> all = {&spec.x, &spec.w, &spec.y};
  for (const TensorDesc& t : spec.extra) all.push_back(&t);
  return all;
}

}  // namespace

absl::StatusOr<BackendDescriptor> MakeTensor(const TensorDesc& t) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor d, BackendDescriptor::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_DATA_TYPE, ToCudnnDataType(t.type)));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_DIMENSIONS, t.dims));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_STRIDES, t.strides));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, t.uid));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, kByteAlignment));
  CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, t.is_virtual));
  if (t.by_value) CUDNN_RETURN_IF_NOT_OK(d.Set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true));
  CUDNN_RETURN_IF_NOT_OK(d.Finalize());
  return d;
}

absl::StatusOr<BackendDescriptor> MakeMatMulOperation(const BackendDescriptor& a, const BackendDescriptor& b,
                                                      const BackendDescriptor& c,
                                                      std::vector<BackendDescriptor>& parts) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor mm, BackendDescriptor::Create(CUDNN_BACKEND_MATMUL_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(mm.Set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT));
  CUDNN_RETURN_IF_NOT_OK(mm.Finalize());
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, BackendDescriptor::Create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm));
  CUDNN_RETURN_IF_NOT_OK(op.Finalize());
  parts.push_back(std::move(mm));
  return op;
}

namespace {

absl::StatusOr<BackendDescriptor> MakePointwiseDesc(const PointwiseOp& p) {
  CUDNN_ASSIGN_OR_RETURN(cudnnPointwiseMode_t mode, PointwiseModeFromName(p.mode));
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor pw, BackendDescriptor::Create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(pw.Set(CUDNN_ATTR_POINTWISE_MODE, mode));
  CUDNN_RETURN_IF_NOT_OK(pw.Set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_DATA_FLOAT));
  if (mode == CUDNN_POINTWISE_RELU_FWD && p.alpha != 0) {
    CUDNN_RETURN_IF_NOT_OK(pw.Set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, p.alpha));
  }
  if (mode == CUDNN_POINTWISE_ELU_FWD) {
    CUDNN_RETURN_IF_NOT_OK(pw.Set(CUDNN_ATTR_POINTWISE_ELU_ALPHA, p.alpha));
  }
  if (mode == CUDNN_POINTWISE_SWISH_FWD) {  // x * sigmoid(beta * x)
    CUDNN_RETURN_IF_NOT_OK(pw.Set(CUDNN_ATTR_POINTWISE_SWISH_BETA, p.alpha));
  }
  CUDNN_RETURN_IF_NOT_OK(pw.Finalize());
  return pw;
}

}  // namespace

absl::StatusOr<BackendDescriptor> MakePointwiseOp(const PointwiseOp& p, std::map<int64_t, BackendDescriptor*>& tensors,
                                                  std::vector<BackendDescriptor>& parts) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor pw, MakePointwiseDesc(p));
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, BackendDescriptor::Create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, *tensors[p.in0]));
  if (p.in1 >= 0) {
    CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *tensors[p.in1]));
  }
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, *tensors[p.out]));
  CUDNN_RETURN_IF_NOT_OK(op.Finalize());
  parts.push_back(std::move(pw));
  return op;
}

cudnnDataType_t ToCudnnDataType(IoType type) {
  switch (type) {
    case IoType::kHalf: return CUDNN_DATA_HALF;
    case IoType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

absl::StatusOr<cudnnPointwiseMode_t> PointwiseModeFromName(const std::string& name) {
  for (const ModeName& m : kModes) {
    if (name == m.name) return m.mode;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown pointwise mode '", name, "'"));
}

bool IsBinaryPointwise(cudnnPointwiseMode_t mode) {
  switch (mode) {
    case CUDNN_POINTWISE_ADD:
    case CUDNN_POINTWISE_SUB:
    case CUDNN_POINTWISE_MUL:
    case CUDNN_POINTWISE_DIV:
    case CUDNN_POINTWISE_MAX:
    case CUDNN_POINTWISE_MIN: return true;
    default: return false;
  }
}

absl::Status ValidateSpec(const FusedGraphSpec& spec) {
  std::set<int64_t> all;
  for (const TensorDesc* t : AllTensors(spec)) {
    CUDNN_RETURN_IF_NOT_OK(CheckTensor(*t, t == &spec.x ? "x" : (t == &spec.w ? "w" : "other")));
    if (!all.insert(t->uid).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate tensor uid ", t->uid));
    }
  }
  CUDNN_RETURN_IF_NOT_OK(CheckAnchor(spec));
  if (spec.y.is_virtual && spec.epilogue.empty()) {
    return absl::InvalidArgumentError("y is virtual but no epilogue consumes it");
  }
  // Defined before the epilogue: x, w, y and every non-virtual extra (operands).
  std::set<int64_t> defined = {spec.x.uid, spec.w.uid, spec.y.uid};
  for (const TensorDesc& t : spec.extra) {
    if (!t.is_virtual) defined.insert(t.uid);
  }
  return CheckEpilogue(spec, defined, all);
}

absl::StatusOr<OperationGraph> BuildOperationGraph(const FusedGraphSpec& spec) {
  CUDNN_RETURN_IF_NOT_OK(ValidateSpec(spec));
  OperationGraph out;
  const std::vector<const TensorDesc*> all = AllTensors(spec);
  out.parts.reserve(all.size() * 2 + spec.epilogue.size() * 2 + 4);  // no reallocation below
  std::map<int64_t, BackendDescriptor*> tensors;
  for (const TensorDesc* t : all) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor d, MakeTensor(*t));
    out.parts.push_back(std::move(d));
    tensors[t->uid] = &out.parts.back();
  }
  std::vector<BackendDescriptor> ops;
  if (spec.anchor == FusedGraphSpec::kConv) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, MakeConvOp(spec, tensors, out.parts));
    ops.push_back(std::move(op));
  } else {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, MakeMatMulOp(spec, tensors, out.parts));
    ops.push_back(std::move(op));
  }
  for (const PointwiseOp& p : spec.epilogue) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, MakePointwiseOp(p, tensors, out.parts));
    ops.push_back(std::move(op));
  }
  std::vector<const BackendDescriptor*> op_ptrs;
  for (const BackendDescriptor& op : ops) op_ptrs.push_back(&op);
  CUDNN_ASSIGN_OR_RETURN(out.graph, BackendDescriptor::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(out.graph.SetDescriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, op_ptrs));
  CUDNN_RETURN_IF_NOT_OK(out.graph.Finalize());
  for (BackendDescriptor& op : ops) out.parts.push_back(std::move(op));
  return out;
}

}  // namespace cudnn
