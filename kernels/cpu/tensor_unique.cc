// The CPU kernel of Unique: the distinct elements of the flattened input, or the distinct slices
// along `axis` (compared lexicographically in row-major order), sorted or in order of first
// occurrence, with their first indices, the inverse indices and the counts. Every output's size
// depends on the data, so the kernel creates them.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "kernels/cpu/tensor_select_util.h"
#include "ops/tensor_select_attrs.h"

namespace kernels::cpu {
namespace {

// The input seen as `items` slices: item j is the elements (o * items + j) * inner + i.
struct ItemView {
  int64_t outer = 1, items = 0, inner = 1;
};

// The distinct items: `first[g]` is group g's first item, `inverse[j]` the group of item j.
struct Groups {
  std::vector<int64_t> first, count, inverse;
};

// -1, 0, 1 as item a orders before, like, or after item b.
template <typename T>
int CompareItems(const T* x, const ItemView& v, int64_t a, int64_t b) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const T* base = x + o * v.items * v.inner;
    for (int64_t i = 0; i < v.inner; ++i) {
      const T ea = base[a * v.inner + i], eb = base[b * v.inner + i];
      if (OrderLess(ea, eb)) return -1;
      if (OrderLess(eb, ea)) return 1;
    }
  }
  return 0;
}

template <typename T>
Groups GroupItems(const T* x, const ItemView& v, bool sorted) {
  std::vector<int64_t> order(v.items);
  std::iota(order.begin(), order.end(), 0);
  // Stable: equal items keep index order, so each group starts with its first occurrence.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return CompareItems(x, v, a, b) < 0; });
  Groups g;
  g.inverse.resize(v.items);
  for (size_t n = 0; n < order.size(); ++n) {
    if (n == 0 || CompareItems(x, v, order[n - 1], order[n]) != 0) {
      g.first.push_back(order[n]);
      g.count.push_back(0);
    }
    g.inverse[order[n]] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.count.back();
  }
  if (sorted) return g;
  // Renumber the groups in order of first occurrence.
  std::vector<int64_t> by_first(g.first.size());
  std::iota(by_first.begin(), by_first.end(), 0);
  std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
  std::vector<int64_t> renumber(by_first.size());
  Groups out;
  for (size_t n = 0; n < by_first.size(); ++n) {
    renumber[by_first[n]] = static_cast<int64_t>(n);
    out.first.push_back(g.first[by_first[n]]);
    out.count.push_back(g.count[by_first[n]]);
  }
  for (int64_t& group : g.inverse) group = renumber[group];
  out.inverse = std::move(g.inverse);
  return out;
}

absl::StatusOr<ir::Tensor> Int64Vector(const std::vector<int64_t>& values) {
  absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(ir::DType::kInt64, {static_cast<int64_t>(values.size())});
  if (t.ok() && !values.empty()) std::memcpy(t->raw_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

// Y: the first item of each group, in group order.
absl::StatusOr<ir::Tensor> UniqueItems(const ir::Tensor& x, const ItemView& v, std::optional<int64_t> axis,
                                       const Groups& g) {
  const int64_t unique = static_cast<int64_t>(g.first.size());
  std::vector<int64_t> shape{unique};
  if (axis) {
    shape = x.shape();
    shape[*axis] = unique;
  }
  absl::StatusOr<ir::Tensor> y = ir::Tensor::Create(x.dtype(), shape);
  if (!y.ok()) return y.status();
  const size_t block = static_cast<size_t>(v.inner) * ir::DTypeSize(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(y->raw_data());
  for (int64_t o = 0; block > 0 && o < v.outer; ++o) {
    for (int64_t j : g.first) {
      std::memcpy(dst, src + (o * v.items + j) * block, block);
      dst += block;
    }
  }
  return y;
}

}  // namespace

absl::Status UniqueKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  absl::StatusOr<ops::UniqueAttrs> attrs = ops::ParseUniqueAttrs(ctx.attrs(), x.rank());
  if (!attrs.ok()) return attrs.status();
  ItemView view;
  view.items = x.num_elements();
  if (attrs->axis) {
    const int64_t axis = *attrs->axis;
    view.items = x.shape()[axis];
    for (int64_t k = 0; k < axis; ++k) view.outer *= x.shape()[k];
    for (int64_t k = axis + 1; k < x.rank(); ++k) view.inner *= x.shape()[k];
  }
  Groups groups;
  absl::Status grouped = DispatchNumeric(x.dtype(), [&](auto tag) {
    groups = GroupItems(x.data<decltype(tag)>(), view, attrs->sorted);
    return absl::OkStatus();
  });
  if (!grouped.ok()) return grouped;
  absl::StatusOr<ir::Tensor> outputs[] = {UniqueItems(x, view, attrs->axis, groups), Int64Vector(groups.first),
                                          Int64Vector(groups.inverse), Int64Vector(groups.count)};
  for (size_t i = 0; i < 4; ++i) {
    if (!outputs[i].ok()) return outputs[i].status();
    if (absl::Status s = SetCreatedOutput(ctx, i, *std::move(outputs[i])); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace kernels::cpu
