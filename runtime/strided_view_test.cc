// StridedView against the CPU reference kernels: a chain of Reshape / Transpose / Gather / Slice /
// Split run on an iota tensor must give, at every index, the element the view addresses.
#include "runtime/strided_view.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace exec {
namespace {

using partitioner::test::Attrs;
using partitioner::test::GraphBuilder;

ir::Tensor Iota(const std::vector<int64_t>& dims) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

ir::Tensor Ints(std::vector<int64_t> v) { return ir::Tensor::FromInt64s(std::move(v)); }

// Every element of `expected` (the CPU result) against base[offset + sum(index * stride)] walking
// the view's atoms in row-major order; "" when all match.
std::string CompareWithView(const StridedView& view, const ir::Tensor& expected) {
  if (view.dims() != expected.shape()) return "dims differ";
  const std::vector<ViewAtom> atoms = view.Atoms();
  std::vector<int64_t> index(atoms.size(), 0);
  for (int64_t linear = 0; linear < expected.num_elements(); ++linear) {
    int64_t offset = view.offset();
    for (size_t k = 0; k < atoms.size(); ++k) offset += index[k] * atoms[k].stride;
    if (expected.data<float>()[linear] != static_cast<float>(offset)) {
      return "element " + std::to_string(linear) + ": view reads " + std::to_string(offset) + ", CPU gives " +
             std::to_string(expected.data<float>()[linear]);
    }
    for (size_t k = atoms.size(); k-- > 0;) {  // next index, innermost atom first
      if (++index[k] < atoms[k].size) break;
      index[k] = 0;
    }
  }
  return "";
}

// torch 2's multi-head attention on a seq-first [S, B, 3E] projection: Q of head h, batch b.
TEST(StridedViewTest, TorchMultiHeadAttentionQueryChainIsAView) {
  const int64_t s = 5, b = 2, h = 3, d = 4, e = h * d;
  for (int64_t part = 0; part < 3; ++part) {
    GraphBuilder g;
    ir::ValueId x = g.Input("x", {s, b, 3 * e});
    ir::ValueId r = g.Op("r", "Reshape", {x, g.Constant("r_shape", Ints({s, b, 3, e}))});
    ir::ValueId u = g.Op("u", "Unsqueeze", {r, g.Constant("u_axes", Ints({0}))});
    ir::ValueId t = g.Op("t", "Transpose", {u}, Attrs({{"perm", std::vector<int64_t>{3, 1, 2, 0, 4}}}));
    ir::ValueId q = g.Op("q", "Squeeze", {t, g.Constant("q_axes", Ints({3}))});
    ir::ValueId sel = g.Op("sel", "Gather", {q, g.Constant("idx", *Ints({part}).Reshaped({}))});
    ir::ValueId heads = g.Op("heads", "Reshape", {sel, g.Constant("h_shape", Ints({s, b * h, d}))});
    ir::ValueId bh = g.Op("bh", "Transpose", {heads}, Attrs({{"perm", std::vector<int64_t>{1, 0, 2}}}));
    ir::ValueId y = g.Op("y", "Reshape", {bh, g.Constant("y_shape", Ints({b, h, s, d}))});
    g.Output(y);
    absl::StatusOr<ir::Graph> graph = g.Build();
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<std::vector<ir::Tensor>> out = partitioner::test::RunOnCpu(*graph, {Iota({s, b, 3 * e})});
    ASSERT_TRUE(out.ok()) << out.status();

    StridedView v = StridedView::Dense({s, b, 3 * e});
    ASSERT_TRUE(v.Reshape({s, b, 3, e}));
    ASSERT_TRUE(v.Reshape({1, s, b, 3, e}));
    ASSERT_TRUE(v.Transpose({3, 1, 2, 0, 4}));
    ASSERT_TRUE(v.Reshape({3, s, b, e}));
    ASSERT_TRUE(v.Select(0, part));
    ASSERT_TRUE(v.Reshape({s, b * h, d}));
    EXPECT_FALSE(v.Strides().has_value()) << "[S, B*H, D] merges B and H, whose strides do not line up";
    ASSERT_TRUE(v.Transpose({1, 0, 2}));
    ASSERT_TRUE(v.Reshape({b, h, s, d}));
    EXPECT_EQ(CompareWithView(v, (*out)[0]), "");
    ASSERT_TRUE(v.Strides().has_value());
    EXPECT_EQ(*v.Strides(), (std::vector<int64_t>{3 * e, d, b * 3 * e, 1}));
    EXPECT_EQ(v.offset(), part * e);
  }
}

// A packed [B, S, 3, H, D] projection split by Split + Squeeze after permute(2, 0, 3, 1, 4).
TEST(StridedViewTest, PackedProjectionSplitIsAView) {
  const int64_t b = 2, s = 3, h = 2, d = 4;
  GraphBuilder g;
  ir::ValueId x = g.Input("x", {b, s, 3 * h * d});
  ir::ValueId r = g.Op("r", "Reshape", {x, g.Constant("shape", Ints({b, s, 3, h, d}))});
  ir::ValueId t = g.Op("t", "Transpose", {r}, Attrs({{"perm", std::vector<int64_t>{2, 0, 3, 1, 4}}}));
  std::vector<ir::ValueId> parts = g.OpMulti("split", "Split", {t, g.Constant("sizes", Ints({1, 1, 1}))}, 3);
  ir::ValueId k = g.Op("k", "Squeeze", {parts[1], g.Constant("axes", Ints({0}))});
  g.Output(k);
  absl::StatusOr<ir::Graph> graph = g.Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<ir::Tensor>> out = partitioner::test::RunOnCpu(*graph, {Iota({b, s, 3 * h * d})});
  ASSERT_TRUE(out.ok()) << out.status();

  StridedView v = StridedView::Dense({b, s, 3 * h * d});
  ASSERT_TRUE(v.Reshape({b, s, 3, h, d}));
  ASSERT_TRUE(v.Transpose({2, 0, 3, 1, 4}));
  ASSERT_TRUE(v.Narrow(0, 1, 1));
  ASSERT_TRUE(v.Reshape({b, h, s, d}));
  EXPECT_EQ(CompareWithView(v, (*out)[0]), "");
  EXPECT_EQ(*v.Strides(), (std::vector<int64_t>{s * 3 * h * d, d, 3 * h * d, 1}));
}

// torch 1.13's form: Slice of the last axis, then [S, B*H, D] and a transpose to [B*H, S, D].
TEST(StridedViewTest, LastAxisSliceThenHeadTransposeIsAView) {
  const int64_t s = 3, b = 2, h = 2, d = 3, e = h * d;
  GraphBuilder g;
  ir::ValueId x = g.Input("x", {s, b, 3 * e});
  ir::ValueId v_in = g.Op(
      "v", "Slice", {x, g.Constant("st", Ints({2 * e})), g.Constant("en", Ints({3 * e})), g.Constant("ax", Ints({2}))});
  ir::ValueId r = g.Op("r", "Reshape", {v_in, g.Constant("shape", Ints({s, b * h, d}))});
  ir::ValueId t = g.Op("t", "Transpose", {r}, Attrs({{"perm", std::vector<int64_t>{1, 2, 0}}}));
  g.Output(t);
  absl::StatusOr<ir::Graph> graph = g.Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<ir::Tensor>> out = partitioner::test::RunOnCpu(*graph, {Iota({s, b, 3 * e})});
  ASSERT_TRUE(out.ok()) << out.status();

  StridedView v = StridedView::Dense({s, b, 3 * e});
  ASSERT_TRUE(v.Narrow(2, 2 * e, e));
  ASSERT_TRUE(v.Reshape({s, b * h, d}));
  ASSERT_TRUE(v.Transpose({1, 2, 0}));
  EXPECT_EQ(CompareWithView(v, (*out)[0]), "");
}

TEST(StridedViewTest, RefusesWhatIsNotAView) {
  StridedView v = StridedView::Dense({4, 6});
  ASSERT_TRUE(v.Transpose({1, 0}));
  EXPECT_FALSE(v.Reshape({4, 4, 2}));  // 6 does not split into 4 * ...
  StridedView w = StridedView::Dense({4, 6});
  ASSERT_TRUE(w.Transpose({1, 0}));
  ASSERT_TRUE(w.Reshape({24}));  // two atoms: (6, 1), (4, 6)
  EXPECT_FALSE(w.Narrow(0, 1, 5)) << "a range that cuts a row of the inner atom";
  EXPECT_TRUE(w.Narrow(0, 4, 8));
  StridedView z = StridedView::Dense({4, 6});
  EXPECT_FALSE(z.Transpose({0, 0}));
  EXPECT_FALSE(z.Select(2, 0));
  EXPECT_FALSE(z.Narrow(1, 4, 3));
}

}  // namespace
}  // namespace exec
