// Attention on the GPU through the whole Session: the exported attention pattern (rewritten to one
// Attention node by the partitioner) and ONNX's Attention op, compared element by element with the
// reference plan (no passes: MatMul, Softmax, ... node by node on the CPU reference kernels) and
// with the CPU running the same fused plan, on the step-by-step run, the capture and a replay.
// fp16 (and bf16) forms with no mask or an additive one must run as one cuDNN fused-attention (SDPA) graph; the
// others (fp32, causal, boolean masks, grouped-query) on the own attention kernel; each says which.
// Without a usable GPU only the CPU runs are checked, then the case skips.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/onnx_builder.h"

namespace {

using Dims = std::vector<int64_t>;

struct AttentionCase {
  std::string label;
  // "pattern4d", "pattern3d" (torch MultiheadAttention) or "op" (ONNX Attention); with the heads
  // split from one projection and merged after: "packed" ([B, S, 3*H*D], split by Split as timm
  // and HF write it) or "seq_first" (torch 2's multi-head attention on [S, B, 3*H*D]).
  std::string form;
  Dims q, k, v, mask;  // mask empty: none
  bool bool_mask = false, causal = false;
  int64_t q_heads = 0, kv_heads = 0;  // "op" with 3-D inputs
  std::string precision = "fp16";
  std::string expect;  // the note's start: "cuDNN fused attention" or "own CUDA attention kernel"
};

std::string Name(const testing::TestParamInfo<AttentionCase>& info) { return info.param.label; }

std::vector<std::variant<int64_t, std::string>> Info(const Dims& d) { return {d.begin(), d.end()}; }

// The exported pattern: Transpose(K) -> MatMul -> Div(sqrt(D)) -> [Add mask] -> Softmax -> MatMul.
void AddPattern(const AttentionCase& c, onnx::ModelProto& model) {
  onnx::GraphProto* g = model.mutable_graph();
  const size_t rank = c.q.size();
  Dims perm;
  for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[rank - 2], perm[rank - 1]);
  onnx::NodeProto t = testing_util::MakeNode("Transpose", {"k"}, {"kt"}, "kt");
  testing_util::SetIntsAttr(t, "perm", perm);
  *g->add_node() = t;
  testing_util::AddFloatInitializer(model, "sqrt_d", {}, {std::sqrt(static_cast<float>(c.q.back()))});
  *g->add_node() = testing_util::MakeNode("MatMul", {"q", "kt"}, {"qk"}, "qk");
  *g->add_node() = testing_util::MakeNode("Div", {"qk", "sqrt_d"}, {"scaled"}, "scale");
  std::string scores = "scaled";
  if (!c.mask.empty()) {
    *g->add_node() = testing_util::MakeNode("Add", {"mask", "scaled"}, {"masked"}, "mask_add");
    scores = "masked";
  }
  onnx::NodeProto softmax = testing_util::MakeNode("Softmax", {scores}, {"p"}, "softmax");
  testing_util::SetIntAttr(softmax, "axis", -1);
  *g->add_node() = softmax;
  *g->add_node() = testing_util::MakeNode("MatMul", {"p", "v"}, {"y"}, "pv");
}

void AddNode(onnx::ModelProto& model, const std::string& op, std::vector<std::string> in, const std::string& out,
             const std::vector<int64_t>& perm = {}) {
  onnx::NodeProto node = testing_util::MakeNode(op, std::move(in), {out}, out);
  if (!perm.empty()) testing_util::SetIntsAttr(node, "perm", perm);
  *model.mutable_graph()->add_node() = node;
}

// q, k, v ([B, H, S, D], c.q) from the projection x, as exporters write the head split.
void AddHeadSplit(const AttentionCase& c, onnx::ModelProto& model) {
  const int64_t b = c.q[0], h = c.q[1], s = c.q[2], d = c.q[3];
  if (c.form == "packed") {
    testing_util::AddInt64Initializer(model, "bs3hd", {b, s, 3, h, d});
    testing_util::AddInt64Initializer(model, "ones", {1, 1, 1});
    testing_util::AddInt64Initializer(model, "axis0", {0});
    AddNode(model, "Reshape", {"x", "bs3hd"}, "x5");
    AddNode(model, "Transpose", {"x5"}, "parts", {2, 0, 3, 1, 4});
    onnx::NodeProto split = testing_util::MakeNode("Split", {"parts", "ones"}, {"q1", "k1", "v1"}, "split");
    *model.mutable_graph()->add_node() = split;
    for (const char* name : {"q", "k", "v"}) AddNode(model, "Squeeze", {absl::StrCat(name, "1"), "axis0"}, name);
    return;
  }
  testing_util::AddInt64Initializer(model, "sb3e", {s, b, 3, h * d});
  testing_util::AddInt64Initializer(model, "axis0", {0});
  testing_util::AddInt64Initializer(model, "axis3", {3});
  testing_util::AddInt64Initializer(model, "s_bh_d", {s, b * h, d});
  testing_util::AddInt64Initializer(model, "bhsd", {b, h, s, d});
  AddNode(model, "Reshape", {"x", "sb3e"}, "x4");
  AddNode(model, "Unsqueeze", {"x4", "axis0"}, "x5");
  AddNode(model, "Transpose", {"x5"}, "x5t", {3, 1, 2, 0, 4});
  AddNode(model, "Squeeze", {"x5t", "axis3"}, "parts");
  const char* names[] = {"q", "k", "v"};
  for (int64_t j = 0; j < 3; ++j) {
    const std::string n = names[j];
    testing_util::AddInt64Initializer(model, "index" + n, {j}, /*scalar=*/true);
    AddNode(model, "Gather", {"parts", "index" + n}, n + "_sbe");
    AddNode(model, "Reshape", {n + "_sbe", "s_bh_d"}, n + "_heads");
    AddNode(model, "Transpose", {n + "_heads"}, n + "_bh", {1, 0, 2});
    AddNode(model, "Reshape", {n + "_bh", "bhsd"}, n);
  }
}

// The output `out` from y ([B, H, S, D]): [B, S, H*D] (packed) or [S*B, H*D] (seq_first).
void AddHeadMerge(const AttentionCase& c, onnx::ModelProto& model) {
  const int64_t b = c.q[0], h = c.q[1], s = c.q[2], d = c.q[3];
  const bool packed = c.form == "packed";
  testing_util::AddInt64Initializer(model, "merged", packed ? Dims{b, s, h * d} : Dims{s * b, h * d});
  AddNode(model, "Transpose", {"y"}, "yt", packed ? Dims{0, 2, 1, 3} : Dims{2, 0, 1, 3});
  AddNode(model, "Reshape", {"yt", "merged"}, "out");
}

bool SplitsHeads(const AttentionCase& c) { return c.form == "packed" || c.form == "seq_first"; }

// The projection x of the head-splitting forms.
Dims XDims(const AttentionCase& c) {
  const int64_t b = c.q[0], h = c.q[1], s = c.q[2], d = c.q[3];
  return c.form == "packed" ? Dims{b, s, 3 * h * d} : Dims{s, b, 3 * h * d};
}

void AddAttentionOp(const AttentionCase& c, onnx::ModelProto& model) {
  std::vector<std::string> inputs = {"q", "k", "v"};
  if (!c.mask.empty()) inputs.push_back("mask");
  onnx::NodeProto node = testing_util::MakeNode("Attention", inputs, {"y"}, "attention");
  if (c.causal) testing_util::SetIntAttr(node, "is_causal", 1);
  if (c.q_heads > 0) {
    testing_util::SetIntAttr(node, "q_num_heads", c.q_heads);
    testing_util::SetIntAttr(node, "kv_num_heads", c.kv_heads);
  }
  *model.mutable_graph()->add_node() = node;
}

Dims YDims(const AttentionCase& c) {
  Dims y = c.q;
  y.back() = c.q_heads > 0 ? c.q_heads * (c.v.back() / c.kv_heads) : c.v.back();
  return y;
}

std::string Model(const AttentionCase& c) {
  onnx::ModelProto model = testing_util::MakeModel(c.form == "op" ? 23 : 17);
  onnx::GraphProto* g = model.mutable_graph();
  if (SplitsHeads(c)) {
    const int64_t b = c.q[0], h = c.q[1], s = c.q[2], d = c.q[3];
    *g->add_input() = testing_util::TensorInfo("x", Info(XDims(c)));
    AddHeadSplit(c, model);
    AddPattern(c, model);
    AddHeadMerge(c, model);
    const Dims out = c.form == "packed" ? Dims{b, s, h * d} : Dims{s * b, h * d};
    *g->add_output() = testing_util::TensorInfo("out", Info(out));
    return model.SerializeAsString();
  }
  *g->add_input() = testing_util::TensorInfo("q", Info(c.q));
  *g->add_input() = testing_util::TensorInfo("k", Info(c.k));
  *g->add_input() = testing_util::TensorInfo("v", Info(c.v));
  if (!c.mask.empty()) {
    *g->add_input() = testing_util::TensorInfo("mask", Info(c.mask),
                                               c.bool_mask ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT);
  }
  if (c.form == "op") {
    AddAttentionOp(c, model);
  } else {
    AddPattern(c, model);
  }
  *g->add_output() = testing_util::TensorInfo("y", Info(YDims(c)));
  return model.SerializeAsString();
}

ir::Tensor Random(ir::DType dtype, const Dims& dims, uint32_t seed) {
  ir::Tensor t = *ir::Tensor::Create(dtype, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (dtype == ir::DType::kBool) {
      // Key 0 always visible, so no row is fully masked (the reference plan would give NaN there).
      t.data<uint8_t>()[i] = (i % t.shape().back() == 0 || dist(rng) > -0.4f) ? 1 : 0;
    } else {
      t.data<float>()[i] = dist(rng) * 2.0f;
    }
  }
  return t;
}

std::vector<runtime::NamedTensor> Inputs(const AttentionCase& c) {
  if (SplitsHeads(c)) return {{"x", Random(ir::DType::kFloat32, XDims(c), 5)}};
  std::vector<runtime::NamedTensor> in = {{"q", Random(ir::DType::kFloat32, c.q, 1)},
                                          {"k", Random(ir::DType::kFloat32, c.k, 2)},
                                          {"v", Random(ir::DType::kFloat32, c.v, 3)}};
  if (!c.mask.empty()) in.push_back({"mask", Random(c.bool_mask ? ir::DType::kBool : ir::DType::kFloat32, c.mask, 4)});
  return in;
}

testing_util::Tolerance ToleranceOf(const std::string& precision) {
  if (precision == "bf16") return testing_util::Tolerance{8e-2, 4e-2};  // fp16's x 8 (unit roundoffs)
  return precision == "fp16" ? testing_util::Tolerance{1e-2, 5e-3} : testing_util::Tolerance{1e-4, 1e-5};
}

absl::StatusOr<std::vector<runtime::NamedTensor>> RunReference(const AttentionCase& c) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.fuse = false;
  auto session = runtime::Session::CreateFromBytes(Model(c), options);
  if (!session.ok()) return session.status();
  return (*session)->Run(Inputs(c));
}

constexpr char kHeadView[] = "no work: a view attention reads in place";
constexpr char kWrittenByAttention[] = "no work: attention wrote its output in this layout";

class AttentionGpuTest : public testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGpuTest, MatchesReferencePlanAndSaysHowItRan) {
  const AttentionCase& c = GetParam();
  auto reference = RunReference(c);
  ASSERT_TRUE(reference.ok()) << reference.status();
  runtime::SessionOptions options;
  options.precision = c.precision;
  options.gpu.plan_cache = false;
  options.device = runtime::Device::kCpu;
  auto cpu = runtime::Session::CreateFromBytes(Model(c), options);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto cpu_out = (*cpu)->Run(Inputs(c));
  ASSERT_TRUE(cpu_out.ok()) << cpu_out.status();
  EXPECT_EQ(testing_util::CompareTensors((*cpu_out)[0].tensor, (*reference)[0].tensor, ToleranceOf(c.precision)), "");
  options.device = runtime::Device::kCuda;
  auto session = runtime::Session::CreateFromBytes(Model(c), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(Inputs(c));
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*reference)[0].tensor, ToleranceOf(c.precision)), "")
        << "run " << run << " against the reference plan";
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*cpu_out)[0].tensor, ToleranceOf(c.precision)), "")
        << "run " << run << " against the CPU";
  }
  std::string notes;
  for (const std::string& note : (*session)->gpu_step_notes()) absl::StrAppend(&notes, note, "\n");
  EXPECT_TRUE(absl::StrContains(notes, c.expect)) << notes;
  EXPECT_FALSE(absl::StrContains(notes, "host reference")) << notes;
  if (SplitsHeads(c)) {  // no copy of the heads: attention reads them, and writes the merge, in place
    int views = 0, written = 0;
    const std::vector<std::string> step_notes = (*session)->gpu_step_notes();
    for (size_t i = 0; i < step_notes.size(); ++i) {
      views += absl::StartsWith(step_notes[i], kHeadView);
      written += absl::StartsWith(step_notes[i], kWrittenByAttention);
      // Only the precision casts of the input and output run as kernels besides attention.
      if (step_notes[i] == "own CUDA kernel") {
        EXPECT_EQ((*session)->plan().steps[i].pattern, "Cast") << notes;
      }
    }
    EXPECT_GE(views, 3) << notes;
    EXPECT_EQ(written, 1) << notes;
  }
  EXPECT_TRUE(absl::StrContains((*session)->gpu()->graph_status(), "CUDA graph replay"))
      << (*session)->gpu()->graph_status();
}

constexpr char kCudnn[] = "cuDNN fused attention (one SDPA graph)";
constexpr char kOwn[] = "own CUDA attention kernel";
// cuDNN 9.19's SDPA operation takes no bias: a masked fp16 attention runs as the composite graph.
constexpr char kCudnnComposite[] = "cuDNN fused attention (one SDPA graph): composite graph";

std::vector<AttentionCase> Cases() {
  return {
      {.label = "pattern4d_mask_fp16",
       .form = "pattern4d",
       .q = {2, 4, 40, 64},
       .k = {2, 4, 56, 64},
       .v = {2, 4, 56, 64},
       .mask = {2, 1, 1, 56},
       .expect = kCudnnComposite},
      {.label = "pattern4d_nomask_fp16",
       .form = "pattern4d",
       .q = {1, 2, 128, 32},
       .k = {1, 2, 128, 32},
       .v = {1, 2, 128, 32},
       .expect = kCudnn},
      {.label = "pattern3d_mha_fp16",
       .form = "pattern3d",
       .q = {6, 17, 64},
       .k = {6, 17, 64},
       .v = {6, 17, 64},
       .expect = kCudnn},
      {.label = "packed_qkv_fp16",
       .form = "packed",
       .q = {2, 3, 24, 32},
       .k = {2, 3, 24, 32},
       .v = {2, 3, 24, 32},
       .expect = kCudnn},
      {.label = "seq_first_mha_fp16",
       .form = "seq_first",
       .q = {3, 2, 17, 64},
       .k = {3, 2, 17, 64},
       .v = {3, 2, 17, 64},
       .expect = kCudnn},
      {.label = "pattern4d_mask_bf16",
       .form = "pattern4d",
       .q = {2, 4, 40, 64},
       .k = {2, 4, 56, 64},
       .v = {2, 4, 56, 64},
       .mask = {2, 1, 1, 56},
       .precision = "bf16",
       .expect = kCudnnComposite},
      {.label = "seq_first_mha_bf16",
       .form = "seq_first",
       .q = {3, 2, 17, 64},
       .k = {3, 2, 17, 64},
       .v = {3, 2, 17, 64},
       .precision = "bf16",
       .expect = kCudnn},
      {.label = "seq_first_mha_fp32",
       .form = "seq_first",
       .q = {2, 2, 9, 16},
       .k = {2, 2, 9, 16},
       .v = {2, 2, 9, 16},
       .precision = "fp32",
       .expect = kOwn},
      {.label = "pattern4d_mask_fp32",
       .form = "pattern4d",
       .q = {2, 4, 40, 64},
       .k = {2, 4, 56, 64},
       .v = {2, 4, 56, 64},
       .mask = {2, 1, 1, 56},
       .precision = "fp32",
       .expect = kOwn},
      {.label = "pattern4d_odd_head_fp16",
       .form = "pattern4d",
       .q = {1, 3, 9, 12},
       .k = {1, 3, 11, 12},
       .v = {1, 3, 11, 12},
       .expect = kOwn},
      {.label = "op_causal_fp32",
       .form = "op",
       .q = {2, 3, 7, 16},
       .k = {2, 3, 7, 16},
       .v = {2, 3, 7, 8},
       .causal = true,
       .precision = "fp32",
       .expect = kOwn},
      {.label = "op_bool_mask_gqa_fp16",
       .form = "op",
       .q = {2, 4, 5, 16},
       .k = {2, 2, 9, 16},
       .v = {2, 2, 9, 16},
       .mask = {5, 9},
       .bool_mask = true,
       .expect = kOwn},
      {.label = "op_3d_heads_fp16",
       .form = "op",
       .q = {2, 6, 4 * 16},
       .k = {2, 10, 4 * 16},
       .v = {2, 10, 4 * 8},
       .q_heads = 4,
       .kv_heads = 4,
       .expect = kCudnn},
  };
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionGpuTest, testing::ValuesIn(Cases()), Name);

}  // namespace
