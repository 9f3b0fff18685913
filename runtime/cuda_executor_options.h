// The options of CudaExecutor (runtime/cuda_executor.h) and what its measured choices report: how
// runs are captured, where plans are cached, what is autotuned or timed at the first run.
#ifndef ONNXRUN_RUNTIME_CUDA_EXECUTOR_OPTIONS_H_
#define ONNXRUN_RUNTIME_CUDA_EXECUTOR_OPTIONS_H_

#include <string>

#include "runtime/plan_builder.h"  // PlanBuildProgress

namespace exec {

struct CudaExecutorOptions {
  bool cuda_graph = true;  // capture and replay runs with the same input dims
  // A captured run's activations in one planned arena (device_arena.h); false: CUDA graph memory
  // nodes.
  bool activation_arena = true;
  // In a capture on the arena, steps that share no bytes may run side by side (capture_branches.h),
  // kept only where the replay writes the same outputs bit for bit and measures faster (H100 batch 1:
  // inception_v3 fp16 0.810 -> 0.752 ms; resnet50, googlenet, efficientnet_b0 keep the chain).
  bool overlap_steps = true;
  bool plan_cache = true;      // keep built cuDNN plans on disk (runtime/plan_cache.h)
  std::string plan_cache_dir;  // "" : PlanCache::DefaultDir()
  int build_threads = 0;       // threads building plans; 0: hardware threads, at most 16
  PlanBuildProgress progress;  // called once per FusedGraph step built or loaded
  bool share_plans = true;     // steps with identical specs share one plan
  // > 1: time up to this many engine configs per plan on the real shapes, keep the fastest (cached
  // with the plan). By default the first 4, runtime-compiled ones only as heuristics' first choice:
  // resnet50 / mobilenet_v2 / efficientnet_b0 fp16 batch 1 2-6% faster (H200), no NVRTC compiles added.
  int autotune_plans = 4;
  bool autotune_runtime_compiled = false;  // also time runtime-compiled configs beyond the first
  // > 1: autotuning picks the config with the best throughput when this many requests are in flight
  // (each config timed as that many executions at once on as many streams) instead of the fastest
  // alone, over at least kStreamTunePlans configs, runtime-compiled ones included: for a Session that
  // serves concurrent callers (cached under their own key; see kStreamTunePlans).
  int autotune_streams = 1;
  bool autotune_matmuls = true;  // matmul steps: time 4 engine configs (plan_builder.h)
  // Conv steps of >= 2 GFLOP (resnet50 at batch 32+): time up to 16 configs, runtime-compiled ones
  // included (plan_builder.h kLargeConvFlops).
  bool autotune_large_convs = true;
  // Time each conv/matmul step's cuDNN graph against its split form (the conv on legacy cuDNN, the
  // epilogue on own kernels) at the first run for its dims and keep the faster; decisions are kept
  // in the plan cache (runtime/cuda_measured_choice.cc).
  bool measure_choices = true;
  // float16/bfloat16 plans: a matmul step's erf GELU may run as cuBLASLt's GELU epilogue, the tanh
  // form (ONNX Runtime's FastGelu, TensorRT's GELU plugin): at most 4.73e-4 apart (at |x| = 2.7),
  // under half a float16 ulp of the value there; one pass over the FFN's widest tensor fewer (BERT-base
  // FFN-up on the H200, bench/lt_matmul_bench: 56.3 -> 41.4 us). False: erf as the model says, in
  // the own epilogue kernel.
  bool fast_gelu = true;
  // A GlobalAveragePool of an own depthwise kernel's output from channel sums that kernel adds up
  // (cuda_steps_pooled_sums.cc): timed against the separate pool at the first run for the dims
  // (kMeasured; without measure_choices: never), or always / never (tests). Float16 maps and tf32
  // plans only (strict fp32 never: reproducible pools).
  enum class PoolSums { kMeasured, kAlways, kNever };
  PoolSums pool_sums = PoolSums::kMeasured;
  int device_id = 0;     // which CUDA device (cudaSetDevice numbering)
  int max_contexts = 8;  // execution contexts (concurrent runs); more callers wait for one
};

// Engine configs timed for a matmul plan (CudaExecutorOptions::autotune_matmuls).
inline constexpr int kMatmulAutotunePlans = 4;

// Engine configs timed per plan when tuning for requests in flight (autotune_streams > 1): among
// the default 4 precompiled ones the throughput choice gained nothing (resnet50 fp16 batch 1, 4 in
// flight on the H200: 6,400 img/s against 6,490 with the latency choice); among 8 to 12 with the
// runtime-compiled ones, 6,900-7,000.
inline constexpr int kStreamTunePlans = 8;

// How a FusedGraph step runs once measured (cuda_measured_choice.cc).
enum class FusedChoice { kUnmeasured, kGraph, kSplit, kOwnKernel, kMatmulEpilogue };

// What the measured choice between a step's forms did (for start-up lines).
struct MeasuredChoices {
  int timed = 0, from_cache = 0, split = 0;  // steps timed now, decisions read from the cache, split chosen
  int own_kernel = 0;                        // own pointwise-conv kernel chosen
  int matmul_epilogue = 0;                   // cuBLASLt's matmul + the own epilogue kernel chosen
  double seconds = 0;                        // time spent timing
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_OPTIONS_H_
