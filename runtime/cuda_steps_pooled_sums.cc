// GlobalAveragePool joined to the depthwise conv that writes its input (EfficientNet's and
// MobileNetV3's squeeze-excite): the depthwise step's own kernel can also sum its output per image
// and channel (kernels/cuda/depthwise_conv.h, channel_sums), and the pool step then turns the sums
// into the mean (kernels/cuda/global_avg_pool.h, GlobalAvgPoolFromSums) instead of reading the map
// again. That saves the pool's pass and launches where the map is small (batch 1), but the sums'
// atomics cost more than the pass on large maps, so the depthwise step times both ways at its
// first run for the input dims and keeps the faster (its note says what was timed). Float16 maps
// and tf32 plans only: float atomics make the sums' last bits vary between runs. The pairs are
// found at construction; a run holds the sums from one step to the other like the squeeze-excite
// gates (cuda_steps_scaled_conv.cc). Where the depthwise step runs another way (cuDNN, the generic
// kernel) or the pool step does not run on the own kernel, each step runs as before.
// Also the depthwise step's choice between the own kernel's register-tiled and shared-memory tile
// forms for 5x5 / 7x7 filters (kernels/cuda/depthwise_conv.h), timed at its first run where the
// latter has a tile per SM.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/cuda/global_avg_pool.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

constexpr int kTimedRuns = 3;
constexpr double kMargin = 0.95;  // the other way must take under 95% of the default's time

// What the depthwise step's note adds: whether it sums for its pool step.
std::string SumsNote(bool sum, size_t pool_step) {
  return absl::StrCat(sum ? ", summing" : ", not summing", " its channels for step #", pool_step,
                      "'s GlobalAveragePool");
}

// Times the register-tiled and the shared-tile depthwise kernels on the step's tensors, sets
// p.kernel to the faster (shared tiles only under kMargin of the other) and returns the note's part.
absl::StatusOr<std::string> ChooseDepthwiseKernel(kernels::cuda::DepthwiseConvParams& p, const DeviceTensor& in,
                                                  const void* w, const void* bias, DeviceTensor& out,
                                                  cudaStream_t stream) {
  using Kernel = kernels::cuda::DepthwiseConvParams::Kernel;
  double ms[2] = {};
  for (const Kernel kernel : {Kernel::kRegisterTiles, Kernel::kSharedTiles}) {
    p.kernel = kernel;
    absl::StatusOr<double> timed = TimeGpuMs(
        [&]() -> absl::Status {
          ONNXRUN_CUDA_RETURN_IF_ERROR(
              kernels::cuda::DepthwiseConvNhwc(p, in.data(), w, bias, out.data(), stream, nullptr));
          return absl::OkStatus();
        },
        stream, kTimedRuns);
    if (!timed.ok()) {
      p.kernel = Kernel::kRegisterTiles;  // the default form stays when the timing fails
      return timed.status();
    }
    ms[kernel] = *timed;
  }
  const bool shared = ms[Kernel::kSharedTiles] < kMargin * ms[Kernel::kRegisterTiles];
  p.kernel = shared ? Kernel::kSharedTiles : Kernel::kRegisterTiles;
  return absl::StrFormat(
      ", %s (measured at the first run for these dims: register tiles %.3f ms, shared-memory tiles %.3f ms)",
      shared ? "shared-memory tiles" : "register tiles", ms[Kernel::kRegisterTiles], ms[Kernel::kSharedTiles]);
}

}  // namespace

void CudaExecutor::PlanPooledSums() {
  const ir::Graph& g = plan_.graph;
  sums_reader_.assign(plan_.steps.size(), std::nullopt);
  sums_writer_.assign(plan_.steps.size(), std::nullopt);
  sums_to_squeeze_excite_.assign(plan_.steps.size(), std::nullopt);
  std::map<ir::ValueId, size_t> producer;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    for (ir::ValueId out : plan_.steps[s].outputs) producer[out] = s;
  }
  for (size_t t = 0; t < plan_.steps.size(); ++t) {
    const Step& pool = plan_.steps[t];
    if (pool.kind != StepKind::kLegacy || pool.nodes.size() != 1) continue;
    const ir::Node& node = g.node(pool.nodes[0]);
    if (node.op_type != "GlobalAveragePool" || node.inputs.empty()) continue;
    auto it = producer.find(node.inputs[0]);
    if (it == producer.end()) continue;
    const Step& conv = plan_.steps[it->second];
    if (conv.kind != StepKind::kLegacy || conv.outputs.size() != 1 || g.node(conv.nodes[0]).op_type != "Conv") continue;
    sums_reader_[it->second] = t;
    sums_writer_[t] = it->second;
    sums_to_squeeze_excite_[t] = SoleSqueezeExciteReader(node.outputs[0]);
  }
}

std::optional<size_t> CudaExecutor::SoleSqueezeExciteReader(ir::ValueId pooled) const {
  const ir::Graph& g = plan_.graph;
  if (std::count(g.outputs().begin(), g.outputs().end(), pooled) > 0) return std::nullopt;
  std::optional<size_t> reader;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const std::vector<ir::ValueId>& in = plan_.steps[s].inputs;
    if (std::find(in.begin(), in.end(), pooled) == in.end()) continue;
    if (reader || !squeeze_excite_[s] || squeeze_excite_[s]->input != pooled) return std::nullopt;
    reader = s;
  }
  if (!reader) return std::nullopt;
  const partitioner::SqueezeExciteForm& form = *squeeze_excite_[*reader];
  for (ir::ValueId w : {form.w1, form.b1, form.w2, form.b2}) {  // else that step runs on the host
    if (w != ir::kNoValue && g.value(w).type.dtype != g.value(pooled).type.dtype) return std::nullopt;
  }
  return reader;
}

bool CudaExecutor::HandSumsToSqueezeExcite(size_t index, const DeviceTensor& in) {
  const ir::Node& node = plan_.graph.node(plan_.steps[index].nodes[0]);
  auto it = channel_sums_.find(node.inputs[0]);
  if (!sums_to_squeeze_excite_[index] || !views_on_ || it == channel_sums_.end()) return false;
  if (in.dims.size() != 4 || it->second.num_elements() != in.dims[0] * in.dims[1]) return false;
  if (in.dims[1] != squeeze_excite_[*sums_to_squeeze_excite_[index]]->channels) return false;
  pooled_sums_[node.outputs[0]] = {std::move(it->second), in.dims[2] * in.dims[3], in.dtype, *sums_writer_[index]};
  channel_sums_.erase(it);
  notes_[index] = absl::StrCat("no work: step #", *sums_to_squeeze_excite_[index],
                               "'s squeeze-excite kernel reads the channel sums step #", *sums_writer_[index],
                               "'s depthwise kernel wrote (the mean taken there)");
  return true;
}

absl::Status CudaExecutor::RunOwnGlobalAvgPool(const DeviceTensor& in, DeviceTensor& out) {
  const int64_t n = in.dims[0], c = in.dims[1], hw = in.dims[2] * in.dims[3];
  const int splits = kernels::cuda::GlobalAvgPoolSplits(n, hw, c);
  DeviceTensor scratch;
  if (splits > 1) {
    absl::StatusOr<DeviceTensor> s = DeviceTensor::Allocate(ir::DType::kFloat32, {splits * n * c}, false, stream_);
    if (!s.ok()) return s.status();
    scratch = *std::move(s);
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::GlobalAvgPoolNhwc(ToFloatType(in.dtype), in.data(), out.data(), n, hw, c,
                                                                static_cast<float*>(scratch.data()), splits, stream_));
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunOwnDepthwise(size_t index, LegacyEntry& e, const DeviceTensor& in, DeviceTensor& out,
                                           std::vector<DeviceTensor>& values) {
  const ir::Node& node = plan_.graph.node(plan_.steps[index].nodes[0]);
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor w, Input(node.inputs[1], values));  // [C,1,R,S] as given
  DeviceTensor bias;
  if (node.input(2) != ir::kNoValue) {
    CUDNN_ASSIGN_OR_RETURN(bias, Input(node.input(2), values));
  }
  bool decided = false;  // a first-run decision below changes the step's note
  if (!e.kernel_note && !Capturing()) {
    e.kernel_note = "";
    if (options_.measure_choices && kernels::cuda::DepthwiseConvSharedTilesFit(*e.depthwise)) {
      CUDNN_ASSIGN_OR_RETURN(e.kernel_note,
                             ChooseDepthwiseKernel(*e.depthwise, in, w.data(), bias.data(), out, stream_));
    }
    decided = true;
  }
  const kernels::cuda::DepthwiseConvParams& p = *e.depthwise;
  // 16-bit maps and tf32 plans only: the sums' atomics add in a varying order, and a strict float32
  // plan keeps its pools reproducible run to run (an ill-conditioned export amplifies the last bits:
  // the zoo's efficientnet_b0 fp32 --check replay moved 8.9e-5 -> 2.2e-4 with them); in tf32 the
  // network's dense convs round their operands to 10 bits, far coarser than the sums' last bits
  // (the depthwise conv itself computes in float32).
  const bool can_sum =
      sums_reader_[index] && (p.fp16 || plan_.precision == "tf32") && kernels::cuda::DepthwiseConvSumsChannels(p);
  if (can_sum && e.sums == LegacyEntry::Sums::kUndecided && !Capturing()) {
    using PoolSums = CudaExecutorOptions::PoolSums;
    const PoolSums how = options_.measure_choices ? options_.pool_sums : PoolSums::kNever;
    if (how == PoolSums::kMeasured) {
      CUDNN_RETURN_IF_NOT_OK(DecideChannelSums(index, e, in, w.data(), bias.data(), out));
    } else {
      e.sums = how == PoolSums::kAlways ? LegacyEntry::Sums::kSum : LegacyEntry::Sums::kPool;
      e.sums_note = how == PoolSums::kAlways ? SumsNote(true, *sums_reader_[index]) : "";
    }
    using Kernel = kernels::cuda::DepthwiseConvParams::Kernel;
    if (e.sums == LegacyEntry::Sums::kSum && e.depthwise->kernel == Kernel::kSharedTiles && e.kernel_note) {
      e.depthwise->kernel = Kernel::kRegisterTiles;  // only the register tiles sum their channels
      absl::StrAppend(&*e.kernel_note, "; register tiles after all, which sum channels");
    }
    decided = true;
  }
  if (decided) notes_[index] = absl::StrCat(kOwnDepthwiseNote, e.kernel_note.value_or(""), e.sums_note);
  float* sums = nullptr;
  if (can_sum && e.sums == LegacyEntry::Sums::kSum) {
    absl::StatusOr<DeviceTensor> held =
        DeviceTensor::Allocate(ir::DType::kFloat32, {int64_t{p.n} * p.c}, false, stream_);
    if (!held.ok()) return held.status();
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(held->data(), 0, held->bytes(), stream_));
    sums = static_cast<float*>(held->data());
    channel_sums_[plan_.steps[index].outputs[0]] = *std::move(held);
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::DepthwiseConvNhwc(p, in.data(), w.data(), bias.data(), out.data(), stream_, sums));
  return absl::OkStatus();
}

absl::Status CudaExecutor::DecideChannelSums(size_t index, LegacyEntry& e, const DeviceTensor& in, const void* w,
                                             const void* bias, DeviceTensor& out) {
  const kernels::cuda::DepthwiseConvParams& p = *e.depthwise;
  const int64_t count = int64_t{p.n} * p.c, hw = int64_t{p.out_h} * p.out_w;
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor pooled, DeviceTensor::Allocate(out.dtype, {p.n, p.c, 1, 1}, true, stream_));
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor sums, DeviceTensor::Allocate(ir::DType::kFloat32, {count}, false, stream_));
  float* sums_data = static_cast<float*>(sums.data());
  absl::StatusOr<double> pool_ms = TimeGpuMs(
      [&]() -> absl::Status {
        ONNXRUN_CUDA_RETURN_IF_ERROR(
            kernels::cuda::DepthwiseConvNhwc(p, in.data(), w, bias, out.data(), stream_, nullptr));
        return RunOwnGlobalAvgPool(out, pooled);
      },
      stream_, kTimedRuns);
  absl::StatusOr<double> sum_ms = TimeGpuMs(
      [&]() -> absl::Status {
        ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(sums_data, 0, sums.bytes(), stream_));
        ONNXRUN_CUDA_RETURN_IF_ERROR(
            kernels::cuda::DepthwiseConvNhwc(p, in.data(), w, bias, out.data(), stream_, sums_data));
        ONNXRUN_CUDA_RETURN_IF_ERROR(
            kernels::cuda::GlobalAvgPoolFromSums(ToFloatType(out.dtype), sums_data, pooled.data(), count, hw, stream_));
        return absl::OkStatus();
      },
      stream_, kTimedRuns);
  if (!pool_ms.ok()) return pool_ms.status();
  if (!sum_ms.ok()) return sum_ms.status();
  const bool sum = *sum_ms < kMargin * *pool_ms;
  e.sums = sum ? LegacyEntry::Sums::kSum : LegacyEntry::Sums::kPool;
  e.sums_note = absl::StrFormat(
      "%s (measured at the first run for these dims: conv + pool %.3f ms, conv summing channels + mean %.3f ms "
      "-> %s)",
      SumsNote(sum, *sums_reader_[index]), *pool_ms, *sum_ms, sum ? "summing" : "conv + pool");
  return absl::OkStatus();
}

absl::StatusOr<bool> CudaExecutor::PoolFromChannelSums(ir::ValueId x, const DeviceTensor& in, DeviceTensor& out) {
  auto it = channel_sums_.find(x);
  if (it == channel_sums_.end()) return false;
  const DeviceTensor sums = std::move(it->second);
  channel_sums_.erase(it);
  const int64_t count = in.dims[0] * in.dims[1], hw = in.dims[2] * in.dims[3];
  if (sums.num_elements() != count) return false;
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::GlobalAvgPoolFromSums(
      ToFloatType(in.dtype), static_cast<const float*>(sums.data()), out.data(), count, hw, stream_));
  return true;
}

std::string CudaExecutor::FromSumsNote(size_t index) const {
  const ir::ValueId x = plan_.graph.node(plan_.steps[index].nodes[0]).inputs[0];
  if (!sums_writer_[index] || !channel_sums_.count(x)) return "";
  return absl::StrCat(" from the channel sums step #", *sums_writer_[index],
                      "'s depthwise kernel wrote (no pass over its input)");
}

}  // namespace exec
