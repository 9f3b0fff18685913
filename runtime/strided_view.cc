// StridedView (strided_view.h).
#include "runtime/strided_view.h"

#include <deque>

namespace exec {
namespace {

int64_t Product(const std::vector<ViewAtom>& atoms) {
  int64_t p = 1;
  for (const ViewAtom& a : atoms) p *= a.size;
  return p;
}

// Merges adjacent atoms that walk memory contiguously (outer stride = inner size * inner stride).
std::vector<ViewAtom> Simplified(const std::vector<ViewAtom>& atoms) {
  std::vector<ViewAtom> out;
  for (const ViewAtom& a : atoms) {
    if (a.size == 1) continue;
    if (!out.empty() && out.back().stride == a.size * a.stride) {
      out.back() = {out.back().size * a.size, a.stride};
      continue;
    }
    out.push_back(a);
  }
  return out;
}

bool ValidAxis(int64_t& axis, size_t rank) {
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return axis >= 0 && axis < static_cast<int64_t>(rank);
}

}  // namespace

StridedView StridedView::Dense(const std::vector<int64_t>& dims) {
  StridedView v;
  int64_t stride = 1;
  v.dims_.resize(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] != 1) v.dims_[i] = {{dims[i], stride}};
    stride *= dims[i];
  }
  return v;
}

bool StridedView::Reshape(const std::vector<int64_t>& dims) {
  std::deque<ViewAtom> atoms;
  for (const std::vector<ViewAtom>& d : dims_) {
    for (const ViewAtom& a : d) {
      if (a.size == 0) return false;
      if (a.size != 1) atoms.push_back(a);
    }
  }
  std::vector<std::vector<ViewAtom>> out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) return false;
    int64_t have = 1;
    while (have < dims[i]) {
      if (atoms.empty()) return false;
      ViewAtom a = atoms.front();
      atoms.pop_front();
      const int64_t need = dims[i] / have;
      if (dims[i] % have != 0) return false;
      if (a.size <= need) {
        if (need % a.size != 0) return false;
        out[i].push_back(a);
        have *= a.size;
        continue;
      }
      if (a.size % need != 0) return false;  // the atom splits into (need, rest)
      const int64_t rest = a.size / need;
      out[i].push_back({need, a.stride * rest});
      atoms.push_front({rest, a.stride});
      have *= need;
    }
    out[i] = Simplified(out[i]);
  }
  if (!atoms.empty()) return false;
  dims_ = std::move(out);
  return true;
}

bool StridedView::Transpose(const std::vector<int64_t>& perm) {
  if (perm.size() != dims_.size()) return false;
  std::vector<std::vector<ViewAtom>> out(perm.size());
  std::vector<bool> used(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (!ValidAxis(p, perm.size()) || used[p]) return false;
    used[p] = true;
    out[i] = dims_[p];
  }
  dims_ = std::move(out);
  return true;
}

bool StridedView::Select(int64_t axis, int64_t index) {
  if (!ValidAxis(axis, dims_.size())) return false;
  const std::vector<ViewAtom>& atoms = dims_[axis];
  if (index < 0) index += Product(atoms);
  if (index < 0 || index >= Product(atoms)) return false;
  for (size_t i = atoms.size(); i-- > 0;) {  // mixed-radix digits, innermost atom first
    offset_ += (index % atoms[i].size) * atoms[i].stride;
    index /= atoms[i].size;
  }
  dims_.erase(dims_.begin() + axis);
  return true;
}

bool StridedView::Narrow(int64_t axis, int64_t start, int64_t length) {
  if (!ValidAxis(axis, dims_.size()) || start < 0 || length <= 0) return false;
  std::vector<ViewAtom>& atoms = dims_[axis];
  if (start + length > Product(atoms)) return false;
  if (atoms.empty()) return true;  // a dim of size 1, taken whole
  // Only the outermost atom is cut: the range must cover whole rows of the inner atoms.
  std::vector<ViewAtom> inner(atoms.begin() + 1, atoms.end());
  const int64_t row = Product(inner);
  if (start % row != 0 || length % row != 0) return false;
  offset_ += (start / row) * atoms[0].stride;
  atoms[0].size = length / row;
  atoms = Simplified(atoms);
  return true;
}

std::vector<int64_t> StridedView::dims() const {
  std::vector<int64_t> d;
  for (const std::vector<ViewAtom>& atoms : dims_) d.push_back(Product(atoms));
  return d;
}

std::optional<std::vector<int64_t>> StridedView::Strides() const {
  std::vector<int64_t> strides;
  for (const std::vector<ViewAtom>& atoms : dims_) {
    if (atoms.size() > 1) return std::nullopt;
    strides.push_back(atoms.empty() ? 0 : atoms[0].stride);
  }
  return strides;
}

std::vector<ViewAtom> StridedView::Atoms() const {
  std::vector<ViewAtom> all;
  for (const std::vector<ViewAtom>& atoms : dims_) all.insert(all.end(), atoms.begin(), atoms.end());
  return all;
}

}  // namespace exec
