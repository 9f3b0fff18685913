// Runs a Plan on an NVIDIA GPU, all steps in order on one stream. Values live in device memory in
// the layout the plan annotates (NHWC for 4-D activations), converted where a step needs another.
// How each step runs is decided once, at Create, and reported by step_notes() for --explain:
//   FusedGraph -> one cuDNN operation graph (engine chosen by heuristics) when kernels/cudnn can
//                 build it, else the next rung (see step_notes);
//   Legacy     -> legacy cuDNN calls (LSTM/GRU/RNN: cuDNN's RNN API); depthwise convs (+ReLU/ReLU6)
//                 in NHWC on the own depthwise kernel (kernels/cuda/depthwise_conv.h), which is
//                 several times faster there (and, where measured faster, sums its channels for
//                 the GlobalAveragePool after it: cuda_steps_pooled_sums.cc);
//   Kernel     -> own CUDA kernels (pointwise, concat, pad, runtime/cuda_kernel_steps), else the host
//                 reference kernel (inputs copied to the host and back: correct, slow, and said so);
//   Alias      -> the same device bytes with new dims. Captures may overlap steps: capture_branches.h.
// Run (cuda_executor_run.cc): the first run for a set of input dims runs step by step (building plans);
// the next is captured into a CUDA graph when every step stayed on the device, and later runs with
// those dims replay it (inputs and outputs through fixed buffers; activations in an arena).
// Execution contexts (cuda_contexts.cc): each concurrent Run holds one context (its own stream,
// events, captured graphs and page-locked staging buffers); plans, constants and cuDNN
// descriptors are shared. Replays run without a lock, so N threads run N graphs at once; building
// plans, step-by-step runs and captures are serialised by a mutex.
#ifndef ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_
#define ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "kernels/cublas/lt_matmul.h"
#include "kernels/cuda/depthwise_conv.h"
#include "kernels/cuda/pool.h"
#include "kernels/cudnn/conv_transpose.h"
#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/legacy.h"
#include "ops/infer_concrete.h"
#include "partitioner/add_layer_norm.h"
#include "partitioner/squeeze_excite.h"
#include "runtime/capture_branches.h"
#include "runtime/cuda_executor_options.h"
#include "runtime/cuda_executor_types.h"
#include "runtime/cuda_steps_attention.h"
#include "runtime/cuda_steps_rnn.h"
#include "runtime/device_arena.h"
#include "runtime/device_constants.h"
#include "runtime/device_tensor.h"
#include "runtime/fused_lowering.h"
#include "runtime/matmul_epilogue_form.h"
#include "runtime/plan_builder.h"
#include "runtime/plan_cache.h"
#include "runtime/scaled_conv_form.h"
#include "runtime/strided_view.h"

namespace exec {

class CudaExecutor {
 public:
  static absl::StatusOr<std::unique_ptr<CudaExecutor>> Create(const Plan& plan,
                                                              const CudaExecutorOptions& options = {});
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // `inputs` in graph-input order, already validated. Outputs in graph-output order, logical.
  absl::StatusOr<std::vector<ir::Tensor>> Run(std::vector<ir::Tensor> inputs, const ValueObserver& observer = nullptr);
  // Inputs and outputs in device memory (graph order, validated), the work ordered on `stream` (the
  // caller's; returns once it is enqueued after the first runs for these dims, which synchronise).
  // `outputs`: empty, and they are allocated; or one buffer per graph output with the dims this
  // run produces, written in place.
  absl::Status RunDevice(const std::vector<DeviceBuffer>& inputs, cudaStream_t stream,
                         std::vector<DeviceBuffer>& outputs);
  // A host tensor in page-locked memory: Run copies it to the device without staging.
  absl::StatusOr<ir::Tensor> AllocateHost(ir::DType dtype, std::vector<int64_t> dims) const;
  // Execution contexts made so far, and the most graph replays that ran at the same time.
  int contexts_created() const;
  int max_replays_in_flight() const { return max_in_flight_.load(); }
  int device_id() const { return options_.device_id; }
  // The GPU time of each step in milliseconds (host fallbacks included), in plan order: the median
  // of kProfileRuns step-by-step runs with a CUDA event after every step, after one untimed run,
  // each with the stream held while the host enqueues it (kernels/cuda/hold.h).
  static constexpr int kProfileRuns = 5;
  absl::StatusOr<std::vector<double>> ProfileSteps(std::vector<ir::Tensor> inputs);
  // GPU time of the last Run between the inputs reaching the device and the outputs leaving it.
  double last_compute_ms() const { return last_compute_ms_.load(); }
  // Builds (or loads from the plan cache) every FusedGraph plan for these graph-input dims, in
  // parallel; Run does it by itself for dims it has not seen. Returns the build summary.
  absl::StatusOr<PlanBuildSummary> Prepare(const std::vector<std::vector<int64_t>>& input_dims);
  // The last Prepare's summary and the plan-cache warnings so far (entries not trusted, no folder).
  PlanBuildSummary last_build() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_build_;
  }
  // The measured choices so far (graph vs split per conv/matmul step).
  MeasuredChoices measured_choices() const {
    std::lock_guard<std::mutex> lock(mu_);
    return measured_;
  }
  std::vector<std::string> cache_warnings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cache_warnings_;
  }
  // How runs with the given input dims execute: "CUDA graph (captured)", or why not.
  std::string graph_status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return graph_status_;
  }
  // The last captured graph's nodes and edges ("61 nodes (59 kernels, 1 copy, 1 memset), ..."); empty
  // before a capture.
  std::string graph_description() const {
    std::lock_guard<std::mutex> lock(mu_);
    return graph_description_;
  }
  // One line per step: how it runs on the GPU.
  std::vector<std::string> step_notes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return notes_;
  }
  std::string device_name() const { return device_name_; }
  // High-water mark of device memory in bytes, in use (as PyTorch's max_memory_allocated counts)
  // or, `reserved`, held by the pools: the largest of (a) the stream-ordered pool's high-water mark
  // before each graph capture (weights and the step-by-step runs' activations) and (b) the pool's
  // high-water mark since the last capture plus CUDA graphs' memory. Before capturing, the pool
  // returns its unused memory to the device, so (a) and (b) are never held at once. Device-wide:
  // other sessions' pool and graph use counts too.
  int64_t peak_device_bytes(bool reserved = false) const;
  // Its parts, in bytes: the stream pool's high-water mark since the last capture, CUDA graphs'
  // memory, and the pool's high-water mark before captures (-1 each when CUDA cannot say).
  struct PeakParts {
    int64_t pool = -1, graphs = -1, before_capture = -1;
  };
  PeakParts peak_parts(bool reserved) const;

 private:
  CudaExecutor(const Plan& plan, const CudaExecutorOptions& options) : plan_(plan), options_(options) {}
  absl::Status Init();
  absl::Status PrepareLocked(const std::vector<std::vector<int64_t>>& input_dims);
  // Stores a built step in fused_ and says how it runs in notes_.
  void InstallFused(BuiltFusedStep built);
  // What one set of input dims needs for capture: the outputs' dims from a step-by-step run, and
  // whether every step stayed on the device.
  struct EagerRecord {
    bool device_only = false;
    std::vector<std::pair<ir::DType, std::vector<int64_t>>> outputs;
  };
  // A captured CUDA graph with the fixed logical buffers it reads inputs from and writes outputs to
  // (no buffer for an output that is a constant).
  struct CapturedRun {
    cudaGraphExec_t exec = nullptr;
    std::vector<DeviceTensor> inputs, outputs;
    std::vector<std::shared_ptr<uint8_t[]>> staging_in, staging_out;  // page-locked, made on first need
    DeviceTensor arena;          // the activations' planned memory (device_arena.h); empty: graph memory nodes
    std::string arena_fallback;  // why the capture is not on the arena (when it could have been)
    std::string description;     // its nodes and edges (capture_order.h DescribeGraph)
    ~CapturedRun();
  };
  // What one run needs of its own (see the header comment); used by one caller at a time.
  struct Context {
    cudaStream_t stream = nullptr;
    cudaEvent_t compute_start = nullptr, compute_end = nullptr;
    cudaEvent_t done = nullptr;  // recorded after the last work that used this context
    std::map<std::string, std::unique_ptr<CapturedRun>> captured;  // by input-dims key
    ~Context();
  };
  // A context held for one run; given back to the pool when it goes.
  class ContextLease {
   public:
    ContextLease(CudaExecutor* owner, Context* context) : owner_(owner), context_(context) {}
    ContextLease(ContextLease&& other) noexcept : owner_(other.owner_), context_(other.context_) {
      other.context_ = nullptr;
    }
    ~ContextLease();
    Context& operator*() const { return *context_; }
    Context* operator->() const { return context_; }

   private:
    CudaExecutor* owner_;
    Context* context_;
  };
  absl::StatusOr<ContextLease> AcquireContext();
  static absl::StatusOr<std::unique_ptr<Context>> MakeContext();
  // Makes `context` the one the step functions use (stream_, the cuDNN handle's stream); mu_ held.
  absl::Status UseContext(Context& context);
  // Host inputs on the device (logical layout) on stream_; mu_ held.
  absl::StatusOr<std::vector<DeviceTensor>> UploadInputs(const std::vector<ir::Tensor>& inputs);
  // Builds the plans and folds the shape computations for the inputs' dims, and makes them the
  // running ones (current_folded_); mu_ held.
  absl::Status PrepareForInputs(const std::vector<DeviceTensor>& inputs);
  // A host run's capture for dims that already ran step by step, without uploading the host
  // inputs first (ReplayHost copies them into the graph's own input buffers; an upload would hold
  // a batch-256 image twice). nullptr when this call does not capture (the caller then runs
  // RunLocked, which runs step by step when a capture failed here).
  absl::StatusOr<CapturedRun*> CaptureForHostInputs(Context& context, const std::string& key,
                                                    const std::vector<ir::Tensor>& inputs);
  // Captures `inputs`' run into `context` for `key`; on failure says why in graph_status_, marks the
  // dims step by step (`record`) and returns nullptr.
  CapturedRun* CaptureOrStepByStep(Context& context, const std::string& key, EagerRecord& record,
                                   const std::vector<DeviceTensor>& inputs);
  // The first runs for a key, under mu_ with `context` in use (UseContext): plans, a step-by-step
  // run or a capture into `context`. Returns the captured run to replay, or null when
  // `eager_outputs` holds the step-by-step result.
  absl::StatusOr<CapturedRun*> RunLocked(Context& context, const std::string& key,
                                         const std::vector<DeviceTensor>& inputs, const ValueObserver& observer,
                                         std::vector<DeviceTensor>& eager_outputs);
  absl::StatusOr<std::vector<ir::Tensor>> ReplayHost(Context& context, CapturedRun& run,
                                                     const std::vector<ir::Tensor>& inputs);
  absl::Status ReplayDevice(Context& context, CapturedRun& run, const std::vector<DeviceBuffer>& inputs,
                            cudaStream_t stream, std::vector<DeviceBuffer>& outputs);
  // Step by step from inputs on the device, on `context`; `step_ms` (optional) gets each step's GPU
  // time. Returns the graph outputs on the device (a constant output as a host_value) and records
  // what a capture needs under `key`. Synchronises the stream.
  absl::StatusOr<std::vector<DeviceTensor>> RunEager(Context& context, const std::string& key,
                                                     std::vector<DeviceTensor> inputs, const ValueObserver& observer,
                                                     std::vector<double>* step_ms);
  // Every step on stream_ from `values` (graph inputs set), freeing values after their last reader.
  absl::Status RunSteps(std::vector<DeviceTensor>& values, const ValueObserver& observer,
                        const std::vector<cudaEvent_t>* step_events);
  // Before a capture: the stream synchronized, the pool's unused memory returned, its high-water
  // marks noted in used_/reserved_before_capture_ and restarted (see peak_device_bytes).
  absl::Status ReleaseBeforeCapture();
  // One step-by-step run on `run`'s (zeroed) inputs under an AllocationRecorder: the arena
  // layout of its activations.
  absl::StatusOr<ArenaLayout> RecordActivations(CapturedRun& run);
  absl::Status CopyToRunOutputs(const std::vector<DeviceTensor>& values, CapturedRun& run);
  // Captures the steps into run.exec (allocations from the installed hook); `segments`: see
  // capture_order.h; `log` (the hook): independent steps may overlap (capture_branches.h).
  absl::Status CaptureSteps(CapturedRun& run, const CaptureSegments* segments, StepAccessLog* log);
  bool SelfContained(size_t index) const;  // a step capture_branches.h may overlap (a cuDNN graph step)
  absl::StatusOr<std::unique_ptr<CapturedRun>> Capture(const EagerRecord& record,
                                                       const std::vector<DeviceTensor>& inputs);
  absl::Status UploadConstants();  // into constants_; a weight only cuDNN graphs read: channels-last only
  absl::StatusOr<DeviceTensor> Input(ir::ValueId id, const std::vector<DeviceTensor>& values) const;
  // A value known on the host before the run: a constant, or a shape folded for the input dims; else nullptr.
  const ir::Tensor* KnownValue(ir::ValueId id) const;
  // Folds the shape computations for `input_dims` and keeps them on the device (folded_).
  void FoldShapes(const std::vector<std::vector<int64_t>>& input_dims);
  absl::Status RunStep(size_t index, std::vector<DeviceTensor>& values);
  absl::Status RunOnHost(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunAlias(const Step& step, std::vector<DeviceTensor>& values);
  // The node's output types from its inference, its first input having `dtype` and `dims` and the
  // others known before the run (KnownValue); nullopt when one is computed at run time or
  // inference fails.
  std::optional<std::vector<ops::ConcreteOutput>> InferOutputs(const ir::Node& node, ir::DType dtype,
                                                               const std::vector<int64_t>& dims) const;
  // `input_dies`: the node's only data input is read by nothing after it, so a unary op may write
  // its result over it (no second buffer).
  absl::Status RunPointwise(const Step& step, std::vector<DeviceTensor>& values, bool input_dies = false);
  // Concat and constant Pad with the strided-copy kernel, in the output's layout; a channel Pad of a float
  // NCHW map to NHWC, and a Cast+Pad step (IsCastPadStep), in one pass (CastPadToNhwc: x as `to`).
  absl::Status RunConcat(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunPad(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunCastPad(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status CastPadToNhwc(const DeviceTensor& x, ir::DType to, const ir::Node& pad, std::vector<DeviceTensor>& v);
  // A residual Add + LayerNormalization step (partitioner/add_layer_norm.h) in one own-kernel pass;
  // node by node when the operands' dims or dtypes differ.
  absl::Status RunAddLayerNorm(const Step& step, std::vector<DeviceTensor>& values);
  // A squeeze-excite MLP step (partitioner/squeeze_excite.h) in one own kernel; on the host when a
  // weight's device type differs from the input's.
  absl::Status RunSqueezeExcite(size_t index, std::vector<DeviceTensor>& values);
  // The node's inputs from `values` from input `first` on (those before, and absent ones, empty).
  absl::StatusOr<std::vector<DeviceTensor>> NodeInputs(const ir::Node& node, const std::vector<DeviceTensor>& values,
                                                       size_t first = 0) const;
  // A device runner's logical-layout outputs of `node` into `values`, each in the layout its readers want.
  absl::Status StoreNodeOutputs(const ir::Node& node, std::vector<DeviceTensor>& outputs,
                                std::vector<DeviceTensor>& values);
  // Other single-node Kernel steps through runtime/cuda_kernel_steps (transpose, slice, gather,
  // reductions, softmax, norms, resize, ...); forms it does not cover run on the host.
  absl::Status RunKernel(const Step& step, std::vector<DeviceTensor>& values);
  // A FusedGraph step as one cuDNN operation graph, built on first use for the step's input dims
  // and cached. NotFound/Unimplemented when cuDNN offers nothing (the caller then falls back).
  absl::Status RunFused(size_t index, std::vector<DeviceTensor>& values);
  // A Legacy step through kernels/cudnn/legacy.h (BN(+ReLU), grouped conv(+ReLU/ReLU6), pools,
  // softmax), made on first use for the input dims; forms it does not cover run on the host.
  // `step` is plan_.steps[index], or one node of it (the anchor of a FusedGraph whose cuDNN graph
  // was not built: a conv, or a Gemm run as a 1x1 conv).
  absl::Status RunLegacy(size_t index, const Step& step, std::vector<DeviceTensor>& values);
  // A ConvTranspose step: cuDNN's backward-data convolution, or the host (cuda_steps_conv_transpose.cc).
  absl::Status RunConvTranspose(size_t index, const Step& step, std::vector<DeviceTensor>& values);
  // A Legacy LSTM/GRU/RNN step through cuDNN's RNN API (cuda_steps_rnn.cc): weights packed at the
  // first run, descriptors per X dims; forms cuDNN does not compute as ONNX does run on the host.
  absl::Status RunRecurrent(size_t index, const Step& step, std::vector<DeviceTensor>& values);
  // Data-movement steps as views (cuda_views.cc). PlanViews marks the steps whose outputs only
  // attention heads (or other such steps) read; RunAsView records such a step's outputs in views_
  // (false: it cannot, and the step runs as usual); MaterialiseViews copies a step's view inputs
  // to dense tensors, except `keep` (attention's Q, K, V).
  void PlanViews();
  void PlanOutputTransposes(const std::vector<std::vector<size_t>>& readers);
  // The perm of the Transpose an Attention step writes its output for (output_transpose_), if any.
  std::optional<std::vector<int64_t>> OutputTransposePerm(size_t attention_step) const;
  absl::StatusOr<bool> RunAsView(const Step& step, std::vector<DeviceTensor>& values);
  bool SliceView(const ir::Node& node, const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                 StridedView& view) const;
  std::optional<ValueView> ViewOf(ir::ValueId id, const std::vector<DeviceTensor>& values) const;
  absl::StatusOr<DeviceTensor> Materialise(const ValueView& v);
  absl::Status MaterialiseViews(const Step& step, std::vector<DeviceTensor>& values,
                                const std::vector<ir::ValueId>& keep = {});
  // Attention's Q, K, V or mask: a head view with a stride per dim read in place, else dense.
  absl::StatusOr<HeadsInput> HeadsOperand(ir::ValueId id, std::vector<DeviceTensor>& values);
  // A view of `id` read in place when each dim has one stride (with `contiguous_rows`, the last
  // stride 1); nullopt when `id` is no view, or was one and is now materialised in `values`.
  absl::StatusOr<std::optional<HeadsInput>> InPlaceView(ir::ValueId id, std::vector<DeviceTensor>& values,
                                                        bool contiguous_rows);
  // A binary pointwise operand: a view read in place, else the stored tensor (any layout).
  absl::StatusOr<HeadsInput> PointwiseOperand(ir::ValueId id, std::vector<DeviceTensor>& values);
  // The inputs `step` reads in place when they are views: attention's Q, K, V, a binary op's operands.
  std::vector<ir::ValueId> ViewReadInputs(const Step& step) const;
  // A binary pointwise Kernel step (RunBinary).
  absl::Status RunBinary(const Step& step, std::vector<DeviceTensor>& values);
  // An Attention step (cuda_steps_attention.cc): cuDNN's fused attention, the own kernel, or the
  // host, decided per input dims at the first run.
  absl::Status RunAttention(size_t index, const Step& step, std::vector<DeviceTensor>& values);
  // The device int32 [N] sequence lengths of a recurrent step's run into `lengths`; false when this
  // run needs the host kernel (an empty sequence or a bad length computed at run time).
  absl::StatusOr<bool> RecurrentLengths(const ir::Node& node, RecurrentStep& state, RecurrentShape& shape,
                                        const DeviceTensor& x, const std::vector<DeviceTensor>& values,
                                        DeviceTensor& lengths);
  // The fallback of a FusedGraph step without a cuDNN graph, or of a Legacy step whose absorbed tail
  // the legacy call cannot run: the first node (conv/matmul) through RunLegacy, then each other node
  // on an own kernel (or on the host when none fits).
  absl::Status RunSplit(size_t index, const absl::Status& why_not_whole, std::vector<DeviceTensor>& values);
  // A per-channel constant as float32 on the device (cuDNN BN parameters are float).
  absl::StatusOr<DeviceTensor> FloatConstant(ir::ValueId id);
  // A value bound to a graph UID, in the layout the binding needs (weights converted once).
  absl::StatusOr<DeviceTensor> Bound(const UidBinding& binding, const std::vector<DeviceTensor>& values);
  bool WantsNhwc(ir::ValueId id) const;
  // Whether stream_ is being captured into a CUDA graph (caches must be filled before capture:
  // memory allocated inside it belongs to the graph).
  bool Capturing() const;

  static constexpr char kOwnDepthwiseNote[] = "own NHWC depthwise-conv kernel (kernels/cuda/depthwise_conv)";
  struct LegacyEntry {
    absl::Status status;
    std::unique_ptr<cudnn::BatchNormInference> bn;
    std::unique_ptr<cudnn::LegacyConv> conv;
    std::unique_ptr<cudnn::ConvTranspose> conv_transpose;  // a ConvTranspose step's backward-data call
    std::vector<int64_t> cropped_from;  // ConvTranspose: the call's output dims when out_dims are its crop
    std::optional<kernels::cuda::DepthwiseConvParams> depthwise;  // own NHWC depthwise kernel instead
    // With depthwise, for a step whose GlobalAveragePool can take channel sums: whether the kernel
    // sums (measured at the first run), and the note saying what was timed.
    enum class Sums { kUndecided, kSum, kPool } sums = Sums::kUndecided;
    std::string sums_note;
    std::optional<std::string> kernel_note;  // with depthwise: once its 5x5 / 7x7 kernel is chosen
    bool own_global_avg_pool = false;        // NHWC GlobalAveragePool on the own kernel
    // A MaxPool / AveragePool form cuDNN's pooling cannot state, on the own pooling kernel.
    std::optional<kernels::cuda::PoolParams> own_pool;
    std::unique_ptr<cudnn::Pooling> pool;
    std::unique_ptr<cudnn::Softmax> softmax;
    std::unique_ptr<cudnn::Lrn> lrn;
    std::vector<int64_t> out_dims;
    bool nhwc = false;
  };
  struct FusedEntry {
    absl::Status status;  // why no plan, when the build failed
    LoweredStep lowered;
    std::shared_ptr<const cudnn::FusedGraphPlan> plan;  // shared by steps with the same spec
    FusedChoice choice = FusedChoice::kUnmeasured;
    std::string note;  // the step note once chosen (how it runs, and what was measured)
    // A MatMul + epilogue step's form (runtime/matmul_epilogue_form.h) and its cuBLASLt matmul, once made.
    std::optional<MatmulEpilogueForm> epilogue;
    std::shared_ptr<const kernels::cublas::LtMatmul> lt_matmul;
  };
  // Binds a lowered graph's tensors to `values` and executes `plan`; returns the output it wrote.
  absl::StatusOr<DeviceTensor> ExecutePlan(const LoweredStep& lowered, const cudnn::FusedGraphPlan& plan,
                                           const std::vector<DeviceTensor>& values);
  // Runs the built cuDNN graph of a FusedGraph step.
  absl::Status ExecuteFused(size_t index, const FusedEntry& entry, std::vector<DeviceTensor>& values);
  // Runs a FusedGraph step that MatchPointwiseConv accepts on the own 1x1-conv kernel (the cuDNN
  // graph when the tensors are not 16-byte aligned).
  absl::Status RunOwnPointwiseConv(size_t index, const FusedEntry& entry, std::vector<DeviceTensor>& values);
  // Whether the step is a MatMul + epilogue in fp16/bf16 (or float32 when cuBLASLt takes the whole
  // epilogue) on dense inputs; then makes its cuBLASLt matmul into `entry` once. False when it is
  // not one or cuBLASLt cannot run it. `exact_fp32`: also a MatMul with no tail (the fallback for
  // float32 matmuls cuDNN has no exact engine for).
  bool PrepareMatmulEpilogue(size_t index, FusedEntry& entry, const std::vector<DeviceTensor>& values,
                             bool exact_fp32 = false);
  // The fastest of cuBLASLt's algorithms for `lt`, timed on the step's real inputs.
  kernels::cublas::LtMatmul FastestAlgorithm(const kernels::cublas::LtMatmul& lt, const MatmulEpilogueForm& form,
                                             const std::vector<DeviceTensor>& values);
  // Runs a step PrepareMatmulEpilogue accepted: the cuBLASLt matmul (with the bias, then a ReLU or
  // GELU epilogue, or the residual when there is no activation), then the own epilogue kernel in
  // place for what is left.
  absl::Status RunMatmulEpilogue(size_t index, const FusedEntry& entry, std::vector<DeviceTensor>& values);
  // Sets entry.choice: the cached decision, else the fastest of the graph, the split form, (for
  // a 1x1 conv it computes) the own pointwise-conv kernel and (for a MatMul + epilogue) the
  // matmul alone + own epilogue kernel timed on `values` (the step's real inputs), else the graph
  // (measuring off, or during a capture).
  absl::Status ChooseGraphOrSplit(size_t index, FusedEntry& entry, std::vector<DeviceTensor>& values);
  // Whether the own pointwise-conv kernel computes the step for its current input dims.
  bool OwnPointwiseConvFits(size_t index, const std::vector<DeviceTensor>& values) const;
  // Whether the split form's conv/matmul can run on legacy cuDNN (a 4-D conv, or a Gemm).
  bool SplitRunsOnDevice(size_t index, const std::vector<DeviceTensor>& values) const;
  // Squeeze-excite gates folded into the next 1x1 conv (cuda_steps_scaled_conv.cc): the gate's
  // Mul step holds its operands (HoldGate true: it did no work) and the conv step then runs the
  // faster of the folded form (per-sample weights + a batched matmul) and the Mul + the conv.
  struct HeldGate {
    DeviceTensor x, gate;
  };
  // A pool step's output left unwritten: its channel sums, which the squeeze-excite step reads instead.
  struct HeldSums {
    DeviceTensor sums;   // float [N * C]
    int64_t map_pixels;  // H * W of the pooled map: the mean is sums / map_pixels
    ir::DType dtype;     // the pool output's
    size_t writer_step;  // the depthwise step that wrote the sums
  };
  void PlanScaledConvs();
  absl::StatusOr<bool> HoldGate(size_t index, const std::vector<DeviceTensor>& values);
  absl::Status RunScaledConv(size_t index, const HeldGate& held, std::vector<DeviceTensor>& values);
  absl::Status DecideScaledConv(size_t index, const HeldGate& held, ScaledConvEntry& entry,
                                std::vector<DeviceTensor>& values);
  absl::Status RunGateThenConv(size_t index, const HeldGate& held, std::vector<DeviceTensor>& values);
  absl::Status RunFoldedGate(size_t index, const HeldGate& held, const kernels::cublas::LtMatmul& lt,
                             std::vector<DeviceTensor>& values);

  // GlobalAveragePool steps reading a depthwise conv step's output (cuda_steps_pooled_sums.cc): the
  // conv's own kernel sums its channels into a run-held float buffer, the pool step takes the mean.
  void PlanPooledSums();
  // The squeeze-excite step that is the only reader of `pooled` (a pool step's output), if any.
  std::optional<size_t> SoleSqueezeExciteReader(ir::ValueId pooled) const;
  // The own depthwise kernel on `in` into `out` (the step's output); at the first run first times
  // its 5x5 / 7x7 forms where both apply, and for a step whose pool can take channel sums both
  // ways (DecideChannelSums), then sums into a held buffer where that was faster.
  absl::Status RunOwnDepthwise(size_t index, LegacyEntry& e, const DeviceTensor& in, DeviceTensor& out,
                               std::vector<DeviceTensor>& values);
  absl::Status DecideChannelSums(size_t index, LegacyEntry& e, const DeviceTensor& in, const void* w, const void* bias,
                                 DeviceTensor& out);
  // The own GlobalAveragePool kernel on an NHWC `in` into out [N, C, 1, 1].
  absl::Status RunOwnGlobalAvgPool(const DeviceTensor& in, DeviceTensor& out);
  // Writes the pool of `x` (its tensor `in`, NHWC) into `out` from held sums; false when none are held.
  absl::StatusOr<bool> PoolFromChannelSums(ir::ValueId x, const DeviceTensor& in, DeviceTensor& out);
  // The pool step's note addition when it reads held sums ("" otherwise).
  std::string FromSumsNote(size_t index) const;
  // For a pool step whose only reader is a squeeze-excite step (sums_to_squeeze_excite_): hands the
  // held sums of its input `x` (tensor `in`) on to that step instead of pooling; false when none are
  // held or an observer reads every step's output.
  bool HandSumsToSqueezeExcite(size_t index, const DeviceTensor& in);
  // Squeeze-excite gates joined to the Mul reading them (cuda_steps_joined_gate.cc): DeferGate leaves
  // the MLP step's gate for that Mul (false where it cannot), WriteGate writes a gate on its own,
  // RunJoinedGate runs such a Mul step.
  void PlanJoinedGates();
  bool DeferGate(size_t index, const JoinedGates::Deferred& gate);
  absl::StatusOr<DeviceTensor> WriteGate(const JoinedGates::Deferred& gate);
  absl::StatusOr<bool> RunJoinedGate(size_t index, std::vector<DeviceTensor>& values);

  const Plan& plan_;
  const CudaExecutorOptions options_;
  cudaStream_t stream_ = nullptr;        // the stream of the context running under mu_
  bool ran_on_host_ = false;             // set by RunOnHost during a run
  StepAccessLog* access_log_ = nullptr;  // while a capture watches its steps' accesses
  std::atomic<double> last_compute_ms_{0};
  std::string graph_status_ = "not run yet";
  std::string graph_description_;
  std::map<std::string, EagerRecord> eager_runs_;  // by input-dims key
  // The pool of execution contexts (contexts_[0] is made at Init and holds the constants' stream).
  mutable std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<Context*> idle_;
  std::atomic<int> in_flight_{0}, max_in_flight_{0};
  std::atomic<int64_t> used_before_capture_{0}, reserved_before_capture_{0};  // (a) of peak_device_bytes
  std::optional<PlanCache> cache_;
  std::set<std::vector<std::vector<int64_t>>> prepared_;  // input dims whose plans were built
  std::map<std::vector<std::vector<int64_t>>, FoldedValues> folded_;
  const FoldedValues* current_folded_ = nullptr;  // the running input dims' entry
  PlanBuildSummary last_build_;
  MeasuredChoices measured_;  // what ChooseGraphOrSplit did
  std::vector<std::string> cache_warnings_;
  cudnnHandle_t cudnn_ = nullptr;
  std::vector<std::map<std::string, FusedEntry>> fused_;                 // per step: input-dims key -> plan
  std::vector<DeviceTensor> float_constants_;                            // float32 copies, by value id
  std::vector<std::map<std::string, LegacyEntry>> legacy_;               // per step: input-dims key -> calls
  std::vector<std::unique_ptr<RecurrentStep>> recurrent_;                // per step: LSTM/GRU/RNN on cuDNN
  std::vector<std::map<std::string, AttentionShape>> attention_;         // per step: input-dims key -> how
  std::map<std::string, std::shared_ptr<cudnn::SdpaPlan>> shared_sdpa_;  // by spec: one per layer shape
  mutable DeviceConstants constants_;  // device copies of the constants steps read (made on first need)
  std::vector<std::string> notes_;
  std::vector<bool> view_steps_;  // per step: may run as a view (PlanViews)
  // per step: its squeeze-excite form when it is one (set at construction)
  std::vector<std::optional<partitioner::SqueezeExciteForm>> squeeze_excite_;
  // Per Attention step: the Transpose step, sole reader of its output, whose output it writes
  // directly (the Transpose step then does nothing).
  std::vector<std::optional<size_t>> output_transpose_;
  std::vector<bool> written_by_attention_;                     // per step: such a Transpose
  std::vector<std::optional<ScaledConvForm>> scaled_conv_;     // per conv step: the gate it may fold (construction)
  std::vector<std::optional<size_t>> gate_reader_;             // per gate Mul step: that conv step
  std::map<size_t, HeldGate> held_gates_;                      // this run's held gates, by conv step (mu_ held)
  std::vector<std::optional<size_t>> sums_reader_;             // per depthwise conv step: its pool step
  std::vector<std::optional<size_t>> sums_writer_;             // per pool step: that conv step
  std::map<ir::ValueId, DeviceTensor> channel_sums_;           // this run's held sums, by pooled value (mu_ held)
  std::vector<std::optional<size_t>> sums_to_squeeze_excite_;  // per pool step: the MLP step, its output's sole reader
  std::map<ir::ValueId, HeldSums> pooled_sums_;                // this run's sums in place of pools, by pool output
  JoinedGates joined_gates_;
  std::map<std::pair<size_t, std::string>, ScaledConvEntry> scaled_entries_;  // by conv step and input dims
  std::map<ir::ValueId, ValueView> views_;                                    // the running run's views (mu_ held)
  bool views_on_ = false;                               // off while an observer reads every step's output
  std::map<ir::ValueId, DeviceTensor> expanded_masks_;  // attention masks expanded for cuDNN, this run
  std::string device_name_;
  std::string gpu_signature_;  // GpuSignature() of this device, for plan-cache keys
  mutable std::mutex mu_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_
