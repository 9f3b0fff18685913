// Helpers shared by the device runners (see device_runner.h).
#include "runtime/device_runner.h"

#include "absl/strings/str_cat.h"
#include "kernels/cuda/strided_copy.h"

namespace exec {

absl::Status NotCovered(const ir::Node& node, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(node.op_type, " on the device: ", why));
}

bool Movable(ir::DType d) {
  const size_t bytes = ir::DTypeSize(d);
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
}

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

ir::DType InputDType(const ir::Graph& g, const ir::Node& n, size_t i) {
  return n.input(i) == ir::kNoValue ? ir::DType::kUndefined : g.value(n.input(i)).type.dtype;
}

const ir::Tensor* ConstantInput(const ir::Graph& g, const ir::Node& n, size_t i) {
  const ir::ValueId id = n.input(i);
  return id == ir::kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant;
}

bool ConstantOrAbsent(const ir::Graph& g, const ir::Node& n, size_t i) {
  return n.input(i) == ir::kNoValue || ConstantInput(g, n, i) != nullptr;
}

// Copies `src` (viewed through `src_strides` over `dims`) into the dense `dst`.
absl::Status CopyView(const void* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      DeviceTensor& dst, cudaStream_t stream) {
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(dims.size());
  const std::vector<int64_t> dst_strides = DenseStrides(dims);
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = dims[d];
    shape.src_strides[d] = src_strides[d];
    shape.dst_strides[d] = dst_strides[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::StridedCopy(src, dst.data(), shape, ElementBytes(dst.dtype), stream));
  return absl::OkStatus();
}

}  // namespace exec
