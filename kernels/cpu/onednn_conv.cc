// OneDnnConvFloat: oneDNN's convolution_forward on channels-last data with the weights' layout
// left to it ("any"), reorders to and from NCHW where the caller's tensors are NCHW, the scratchpad
// handed in per call (so one primitive runs from several threads at once), OpenMP threads as many
// as the worker pool's (parallel.h).
#include "kernels/cpu/onednn_conv.h"

#include <omp.h>

#include <dnnl.hpp>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/kernel_cache.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::nn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// What the cache keeps per node and input shape: the primitive and the weights in its layout.
struct PackedConv {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  memory weights;
};

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

memory::dims Dims(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// NCHW or NHWC data and OIHW (GOIHW grouped) weights for 1-3 spatial dims.
Tag DataTag(size_t spatial, bool channels_last) {
  static constexpr Tag kFirst[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static constexpr Tag kLast[] = {Tag::nwc, Tag::nhwc, Tag::ndhwc};
  return channels_last ? kLast[spatial - 1] : kFirst[spatial - 1];
}
Tag WeightsTag(size_t spatial, bool grouped) {
  static constexpr Tag kPlain[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  static constexpr Tag kGrouped[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
  return grouped ? kGrouped[spatial - 1] : kPlain[spatial - 1];
}

memory::desc DataDesc(const ConvProblem& p, int64_t channels, const std::vector<int64_t>& spatial, Tag tag) {
  return memory::desc(Dims({p.batch, channels}, spatial), memory::data_type::f32, tag);
}

// The plain (user) weights descriptor: [O, I/G, k...] or, grouped, [G, O/G, I/G, k...].
memory::desc UserWeightsDesc(const ConvProblem& p) {
  const WindowGeometry& geo = *p.geo;
  const bool grouped = p.group > 1;
  const int64_t in_per_group = p.channels / p.group;
  memory::dims dims = grouped ? Dims({p.group, p.out_channels / p.group, in_per_group}, geo.kernel)
                              : Dims({p.out_channels, in_per_group}, geo.kernel);
  return memory::desc(dims, memory::data_type::f32, WeightsTag(geo.kernel.size(), grouped));
}

bool Supported(const ConvProblem& p) {
  const WindowGeometry& geo = *p.geo;
  const size_t spatial = geo.kernel.size();
  if (spatial < 1 || spatial > 3 || p.batch <= 0 || p.channels <= 0 || p.out_channels <= 0) return false;
  for (size_t i = 0; i < spatial; ++i) {
    if (geo.pad_begin[i] < 0 || geo.pad_end[i] < 0 || geo.grid[i] <= 0 || geo.image[i] <= 0) return false;
  }
  return true;
}

// The activation as a oneDNN eltwise post-op.
dnnl::post_ops PostOps(const FusedActivation* activation) {
  dnnl::post_ops ops;
  if (activation == nullptr) return ops;
  switch (activation->kind) {
    case FusedActivation::Kind::kRelu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); break;
    case FusedActivation::Kind::kLeakyRelu:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, activation->alpha, 0.f);
      break;
    case FusedActivation::Kind::kClip:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, activation->alpha, activation->beta);
      break;
    case FusedActivation::Kind::kSwish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f); break;
  }
  return ops;
}

// The primitive for this problem, or nullptr where oneDNN has no implementation.
std::shared_ptr<PackedConv> MakePrimitive(const ConvProblem& p, bool has_bias, const FusedActivation* activation) {
  const WindowGeometry& geo = *p.geo;
  memory::dims dilations;
  for (int64_t d : geo.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
  const memory::desc src = DataDesc(p, p.channels, geo.image, DataTag(geo.kernel.size(), true));
  const memory::desc dst = DataDesc(p, p.out_channels, geo.grid, DataTag(geo.kernel.size(), true));
  memory::desc weights = UserWeightsDesc(p);
  weights = memory::desc(weights.dims(), memory::data_type::f32, Tag::any);
  const memory::desc bias({p.out_channels}, memory::data_type::f32, Tag::x);
  using Conv = dnnl::convolution_forward;
  const Conv::desc desc = has_bias
                              ? Conv::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                           weights, bias, dst, geo.strides, dilations, geo.pad_begin, geo.pad_end)
                              : Conv::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                           weights, dst, geo.strides, dilations, geo.pad_begin, geo.pad_end);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(PostOps(activation));
  try {
    auto packed = std::make_shared<PackedConv>();
    packed->pd = Conv::primitive_desc(desc, attr, CpuEngine());
    packed->conv = Conv(packed->pd);
    return packed;
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for this geometry
  }
}

// The primitive with W reordered into its layout.
absl::StatusOr<std::shared_ptr<const PackedConv>> Pack(const ConvProblem& p, const float* w, bool has_bias,
                                                       const FusedActivation* activation) {
  std::shared_ptr<PackedConv> packed = MakePrimitive(p, has_bias, activation);
  if (packed == nullptr) return nullptr;
  memory user(UserWeightsDesc(p), CpuEngine(), const_cast<float*>(w));
  packed->weights = memory(packed->pd.weights_desc(), CpuEngine());
  dnnl::stream stream(CpuEngine());
  dnnl::reorder(user, packed->weights).execute(stream, user, packed->weights);
  stream.wait();
  return packed;
}

absl::StatusOr<std::shared_ptr<const PackedConv>> FindOrPack(const KernelContext& ctx, const ConvProblem& p,
                                                             const float* w, bool has_bias) {
  const bool constant_weights = (ctx.constant_inputs >> 1 & 1) != 0;
  if (ctx.cache == nullptr || !constant_weights) return Pack(p, w, has_bias, ctx.activation);
  std::vector<int64_t> key = ctx.input(0)->shape();
  key.push_back(ctx.activation != nullptr ? 1 + static_cast<int64_t>(ctx.activation->kind) : 0);
  absl::StatusOr<KernelCache::Entry> entry = ctx.cache->GetOrMake(
      ctx.node, key, [&]() { return absl::StatusOr<KernelCache::Entry>(Pack(p, w, has_bias, ctx.activation)); });
  if (!entry.ok()) return entry.status();
  return std::static_pointer_cast<const PackedConv>(*entry);
}

// Runs the packed convolution: x reordered into the primitive's source layout where it differs,
// the result reordered into y where the destination layout differs.
void Execute(const PackedConv& packed, const ConvProblem& p, const float* x, bool x_channels_last, const float* bias,
             float* y, bool y_channels_last) {
  const WindowGeometry& geo = *p.geo;
  const dnnl::engine& engine = CpuEngine();
  dnnl::stream stream(engine);
  const size_t spatial = geo.kernel.size();
  memory user_src(DataDesc(p, p.channels, geo.image, DataTag(spatial, x_channels_last)), engine, const_cast<float*>(x));
  memory user_dst(DataDesc(p, p.out_channels, geo.grid, DataTag(spatial, y_channels_last)), engine, y);
  memory src = user_src, dst = user_dst;
  if (packed.pd.src_desc() != user_src.get_desc()) {
    src = memory(packed.pd.src_desc(), engine);
    dnnl::reorder(user_src, src).execute(stream, user_src, src);
  }
  if (packed.pd.dst_desc() != user_dst.get_desc()) dst = memory(packed.pd.dst_desc(), engine);
  memory scratchpad(packed.pd.scratchpad_desc(), engine);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, packed.weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
  if (bias != nullptr) {
    args.emplace(DNNL_ARG_BIAS, memory(memory::desc({p.out_channels}, memory::data_type::f32, Tag::x), engine,
                                       const_cast<float*>(bias)));
  }
  packed.conv.execute(stream, args);
  if (dst != user_dst) dnnl::reorder(dst, user_dst).execute(stream, dst, user_dst);
  stream.wait();
}

}  // namespace

absl::StatusOr<bool> OneDnnConvFloat(KernelContext& ctx, const ConvProblem& problem, const float* x, const float* w,
                                     const float* bias, float* y) {
  if (!Supported(problem)) return false;
  omp_set_num_threads(ParallelThreads());
  const bool x_channels_last = (ctx.channels_last_inputs & 1) != 0;
  const bool y_channels_last = ctx.channels_last_output_ok && problem.geo->kernel.size() == 2;
  try {
    absl::StatusOr<std::shared_ptr<const PackedConv>> packed = FindOrPack(ctx, problem, w, bias != nullptr);
    if (!packed.ok()) return packed.status();
    if (*packed == nullptr) return false;
    Execute(**packed, problem, x, x_channels_last, bias, y, y_channels_last);
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN convolution: ", e.what(), " (status ", e.status, ")"));
  }
  ctx.channels_last_output = y_channels_last;
  ctx.activation_applied = ctx.activation != nullptr;
  return true;
}

absl::StatusOr<ir::Tensor> ChannelsLastToNchw(const ir::Tensor& t) {
  if (t.dtype() != ir::DType::kFloat32 || t.rank() != 4) {
    return absl::InternalError(absl::StrCat("a channels-last tensor must be float32 of rank 4, got ", t.Describe()));
  }
  absl::StatusOr<ir::Tensor> out = ir::Tensor::CreateUninitialized(t.dtype(), t.shape());
  if (!out.ok() || t.num_elements() == 0) return out;
  omp_set_num_threads(ParallelThreads());
  try {
    const memory::dims dims(t.shape().begin(), t.shape().end());
    memory from(memory::desc(dims, memory::data_type::f32, Tag::nhwc), CpuEngine(), const_cast<void*>(t.raw_data()));
    memory to(memory::desc(dims, memory::data_type::f32, Tag::nchw), CpuEngine(), out->raw_data());
    dnnl::stream stream(CpuEngine());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN reorder: ", e.what()));
  }
  return out;
}

}  // namespace kernels::cpu::nn
