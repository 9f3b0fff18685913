// Strided byte copies and output checks shared by the tensor-family CPU kernels.
#include "kernels/cpu/tensor_ops_util.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu {
namespace {

// Copies n elements of ES bytes, stride bytes apart in src, contiguously into dst.
template <size_t ES>
void CopyElements(uint8_t* dst, const uint8_t* src, int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i, src += stride) std::memcpy(dst + i * ES, src, ES);
}

void CopyRun(uint8_t* dst, const uint8_t* src, size_t es, int64_t n, int64_t stride_elems) {
  if (stride_elems == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * es);
    return;
  }
  const int64_t stride = stride_elems * static_cast<int64_t>(es);
  switch (es) {
    case 1: return CopyElements<1>(dst, src, n, stride);
    case 2: return CopyElements<2>(dst, src, n, stride);
    case 4: return CopyElements<4>(dst, src, n, stride);
    case 8: return CopyElements<8>(dst, src, n, stride);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src + i * stride, es);
  }
}

}  // namespace

std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

void StridedCopy(void* dst, const void* src, size_t elem_size, absl::Span<const int64_t> shape,
                 absl::Span<const int64_t> src_strides) {
  // Drop size-1 dims and merge dims that are contiguous with each other in src.
  std::vector<int64_t> dims, strides;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return;
    if (shape[i] == 1) continue;
    if (!dims.empty() && strides.back() == src_strides[i] * shape[i]) {
      dims.back() *= shape[i];
      strides.back() = src_strides[i];
    } else {
      dims.push_back(shape[i]);
      strides.push_back(src_strides[i]);
    }
  }
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  if (dims.empty()) {
    std::memcpy(out, in, elem_size);
    return;
  }
  const size_t outer_rank = dims.size() - 1;
  const int64_t inner = dims.back(), inner_stride = strides.back();
  int64_t outer_count = 1;
  for (size_t k = 0; k < outer_rank; ++k) outer_count *= dims[k];
  const int64_t es = static_cast<int64_t>(elem_size);
  // Runs [begin, end) on ParallelFor's threads, each chunk starting from its own source offset.
  constexpr int64_t kMinBytesPerChunk = int64_t{1} << 17;
  ParallelFor(outer_count, ItemsForWork(inner * es, kMinBytesPerChunk), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(outer_rank, 0);
    int64_t offset = 0;  // in elements
    for (int64_t k = static_cast<int64_t>(outer_rank) - 1, rest = begin; k >= 0; --k) {
      index[k] = rest % dims[k];
      rest /= dims[k];
      offset += index[k] * strides[k];
    }
    uint8_t* run_out = out + begin * inner * es;
    for (int64_t o = begin; o < end; ++o) {
      CopyRun(run_out, in + offset * es, elem_size, inner, inner_stride);
      run_out += inner * es;
      for (int64_t k = static_cast<int64_t>(outer_rank) - 1; k >= 0; --k) {
        offset += strides[k];
        if (++index[k] < dims[k]) break;
        offset -= strides[k] * dims[k];
        index[k] = 0;
      }
    }
  });
}

absl::Status RequireInput(const KernelContext& ctx, size_t i) {
  if (ctx.input(i) == nullptr || !ctx.input(i)->valid()) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  }
  return absl::OkStatus();
}

absl::Status CheckOutput(const KernelContext& ctx, size_t i, ir::DType dtype, absl::Span<const int64_t> shape) {
  const ir::Tensor* out = ctx.output(i);
  if (out == nullptr) return absl::InvalidArgumentError(absl::StrCat("output ", i, " is missing"));
  if (out->dtype() != dtype) {
    return absl::InternalError(
        absl::StrCat("output ", i, " has dtype ", ir::DTypeName(out->dtype()), ", expected ", ir::DTypeName(dtype)));
  }
  if (absl::Span<const int64_t>(out->shape()) != shape) {
    return absl::InternalError(absl::StrCat("output ", i, " has shape ", ir::ShapeToString(out->shape()), ", expected ",
                                            ir::ShapeToString(shape)));
  }
  return absl::OkStatus();
}

}  // namespace kernels::cpu
