// ir::Tensor storage, checked sizes and element access.
#include "ir/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/half.h"
#include "ir/narrow.h"

namespace ir {

absl::StatusOr<int64_t> CheckedElementCount(absl::Span<const int64_t> shape, DType dtype) {
  size_t elem_size = DTypeLimitSize(dtype);
  if (elem_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported dtype ", DTypeName(dtype)));
  }
  const int64_t max_elements = kMaxTensorBytes / static_cast<int64_t>(elem_size);
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("negative dimension in shape ", ShapeToString(shape)));
    }
    if (d != 0 && count > max_elements / d) {
      return absl::ResourceExhaustedError(absl::StrCat("tensor of shape ", ShapeToString(shape), " ", DTypeName(dtype),
                                                       " exceeds the ", kMaxTensorBytes, "-byte tensor limit"));
    }
    count *= d;
  }
  return count;
}

absl::StatusOr<Tensor> Tensor::Create(DType dtype, std::vector<int64_t> shape) {
  return Allocate(dtype, std::move(shape), /*zero=*/true);
}

absl::StatusOr<Tensor> Tensor::CreateUninitialized(DType dtype, std::vector<int64_t> shape) {
  return Allocate(dtype, std::move(shape), /*zero=*/false);
}

absl::StatusOr<Tensor> Tensor::Allocate(DType dtype, std::vector<int64_t> shape, bool zero) {
  absl::StatusOr<int64_t> count = CheckedElementCount(shape, dtype);
  if (!count.ok()) return count.status();
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = *count;
  if (dtype == DType::kString) {
    const size_t n = static_cast<size_t>(std::max<int64_t>(1, *count));
    t.strings_ = std::shared_ptr<std::string[]>(new (std::nothrow) std::string[n]);
    if (t.strings_ == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", n, " strings"));
    }
    return t;
  }
  size_t bytes = std::max<size_t>(1, t.byte_size());
  t.buffer_ =
      std::shared_ptr<uint8_t[]>(zero ? new (std::nothrow) uint8_t[bytes]() : new (std::nothrow) uint8_t[bytes]);
  if (t.buffer_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", bytes, " bytes"));
  }
  return t;
}

absl::StatusOr<Tensor> Tensor::FromBuffer(DType dtype, std::vector<int64_t> shape, std::shared_ptr<uint8_t[]> buffer) {
  if (dtype == DType::kString) return absl::InvalidArgumentError("a string tensor cannot wrap a byte buffer");
  absl::StatusOr<int64_t> count = CheckedElementCount(shape, dtype);
  if (!count.ok()) return count.status();
  if (buffer == nullptr && *count > 0) return absl::InvalidArgumentError("a tensor's buffer is null");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = *count;
  t.buffer_ = std::move(buffer);
  return t;
}

Tensor Tensor::Scalar(float value) { return FromFloats({value}, {}); }

Tensor Tensor::FromInt64s(std::vector<int64_t> values) {
  Tensor t = *Create(DType::kInt64, {static_cast<int64_t>(values.size())});
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor Tensor::FromFloats(std::vector<float> values, std::vector<int64_t> shape) {
  Tensor t = *Create(DType::kFloat32, std::move(shape));
  const size_t bytes = std::min(values.size() * sizeof(float), t.byte_size());
  if (bytes > 0) std::memcpy(t.raw_data(), values.data(), bytes);
  return t;
}

Tensor Tensor::FromStrings(std::vector<std::string> values) {
  Tensor t = *Create(DType::kString, {static_cast<int64_t>(values.size())});
  std::move(values.begin(), values.end(), t.mutable_strings());
  return t;
}

Tensor Tensor::Sequence(DType elem_dtype, std::vector<Tensor> elements) {
  Tensor t;
  t.dtype_ = elem_dtype;
  t.kind_ = ValueKind::kSequence;
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  return t;
}

absl::StatusOr<Tensor> Tensor::Map(Tensor keys, Tensor values) {
  const bool key_ok = keys.is_dense() && (keys.dtype() == DType::kInt64 || keys.dtype() == DType::kString);
  if (!key_ok || !values.is_dense() || keys.rank() != 1 || values.rank() != 1 ||
      keys.num_elements() != values.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("a map needs 1-D int64 or string keys and as many values, not ",
                                                   keys.Describe(), " and ", values.Describe()));
  }
  Tensor t;
  t.dtype_ = values.dtype();
  t.kind_ = ValueKind::kMap;
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::vector<Tensor>{std::move(keys), std::move(values)});
  return t;
}

Tensor Tensor::None(DType elem_dtype, ValueKind elem_kind) {
  Tensor t;
  t.dtype_ = elem_dtype;
  t.kind_ = elem_kind;
  t.none_ = true;
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor>& kNoElements = *new std::vector<Tensor>();
  return is_sequence() ? *elements_ : kNoElements;
}

const Tensor& Tensor::map_keys() const {
  static const Tensor& kNoTensor = *new Tensor();
  return is_map() ? (*elements_)[0] : kNoTensor;
}

const Tensor& Tensor::map_values() const {
  static const Tensor& kNoTensor = *new Tensor();
  return is_map() ? (*elements_)[1] : kNoTensor;
}

std::string Tensor::Describe() const {
  if (is_none()) return "none";
  if (is_map())
    return absl::StrCat("map(", DTypeName(map_keys().dtype()), ",", DTypeName(dtype_), ") of ",
                        map_values().num_elements());
  if (is_map_sequence()) {
    return absl::StrCat("seq(map(", DTypeName(elements_->front().map_keys().dtype()), ",", DTypeName(dtype_), ")) of ",
                        elements_->size());
  }
  if (is_sequence()) return absl::StrCat("seq(", DTypeName(dtype_), ") of ", elements_->size());
  return absl::StrCat(DTypeName(dtype_), ShapeToString(shape_));
}

absl::StatusOr<Tensor> Tensor::Reshaped(std::vector<int64_t> shape) const {
  absl::StatusOr<int64_t> count = CheckedElementCount(shape, dtype_);
  if (!count.ok()) return count.status();
  if (*count != num_elements_ || !is_dense()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape ", ShapeToString(shape_), " to ", ShapeToString(shape)));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  if (!valid() || is_none()) return *this;
  if (is_sequence()) {
    std::vector<Tensor> copies;
    for (const Tensor& e : *elements_) copies.push_back(e.Clone());
    return Sequence(dtype_, std::move(copies));
  }
  if (is_map()) return *Map(map_keys().Clone(), map_values().Clone());
  Tensor t = *Create(dtype_, shape_);
  t.CopyDataFrom(*this).IgnoreError();  // same dtype and count by construction
  return t;
}

absl::Status Tensor::CopyDataFrom(const Tensor& src) {
  if (!is_dense() || !src.is_dense() || src.dtype_ != dtype_ || src.num_elements_ != num_elements_) {
    return absl::InvalidArgumentError(absl::StrCat("cannot copy ", src.Describe(), " into ", Describe()));
  }
  if (dtype_ == DType::kString) {
    if (strings_ != src.strings_) std::copy_n(src.strings(), num_elements_, mutable_strings());
    return absl::OkStatus();
  }
  if (byte_size() > 0 && raw_data() != src.raw_data()) std::memcpy(raw_data(), src.raw_data(), byte_size());
  return absl::OkStatus();
}

size_t Tensor::host_bytes() const {
  if (elements_ != nullptr) {  // a sequence or a map: its elements, and what holding each costs
    size_t bytes = 0;
    for (const Tensor& e : *elements_) bytes += e.host_bytes() + kValueOverheadBytes;
    return bytes;
  }
  if (strings_ == nullptr) return byte_size();
  size_t bytes = static_cast<size_t>(num_elements_) * kStringElementBytes;
  for (int64_t i = 0; i < num_elements_; ++i) bytes += strings_[i].size();
  return bytes;
}

void Tensor::CopyElementFrom(const Tensor& src, int64_t from, int64_t to) {
  if (dtype_ == DType::kString) {
    strings_[to] = src.strings()[from];
    return;
  }
  const size_t size = DTypeSize(dtype_);
  std::memcpy(static_cast<uint8_t*>(raw_data()) + to * size, static_cast<const uint8_t*>(src.raw_data()) + from * size,
              size);
}

double Tensor::GetAsDouble(int64_t i) const {
  switch (dtype_) {
    case DType::kFloat32: return data<float>()[i];
    case DType::kFloat64: return data<double>()[i];
    case DType::kFloat16: return static_cast<float>(data<Half>()[i]);
    case DType::kBFloat16: return BFloat16BitsToFloat(data<uint16_t>()[i]);
    case DType::kUint8: return data<uint8_t>()[i];
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kUint16: return data<uint16_t>()[i];
    case DType::kInt16: return data<int16_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kBool: return data<uint8_t>()[i] ? 1.0 : 0.0;
    case DType::kUint32: return data<uint32_t>()[i];
    case DType::kUint64: return static_cast<double>(data<uint64_t>()[i]);
    default: return IsNarrowDType(dtype_) ? NarrowToDouble(dtype_, data<uint8_t>()[i]) : 0.0;
  }
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  switch (dtype_) {
    case DType::kInt64: return data<int64_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kUint64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: {
      const double v = GetAsDouble(i);  // NaN (a float8 NaN code) and values past int64 give 0 / the bound
      if (std::isnan(v)) return 0;
      return v >= 9.2e18    ? std::numeric_limits<int64_t>::max()
             : v <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                            : static_cast<int64_t>(v);
    }
  }
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(num_elements_);
  for (int64_t i = 0; i < num_elements_; ++i) out[i] = GetAsInt64(i);
  return out;
}

std::string ShapeToString(absl::Span<const int64_t> shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

}  // namespace ir
