// LtMatmul (lt_matmul.h). Row-major buffers read as column-major are the transposes, so cuBLASLt
// computes D^T[N, M] = W^T[N, K] * X^T[K, M] with no transposition: "A" is W (N x K, ld N), "B" is
// X (K x M, ld K), C and D are N x M with ld N, and the bias runs along D^T's rows, the N columns.
// A W stored [N, K] (w_transposed) reads as column-major K x N, which cuBLASLt transposes as A.
#include "kernels/cublas/lt_matmul.h"

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kernels::cublas {
namespace {

constexpr uint64_t kMaxWorkspace = 32u << 20;
constexpr uint32_t kAlignment = 16;  // what onnxrun's buffers promise (views may start anywhere else)
constexpr int kMaxAlgorithms = 8;

// The cuBLASLt entry points, from dlopen("libcublasLt.so.13").
struct Api {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

template <typename F>
bool Load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// The loaded API, or null when the library or a symbol is missing (decided once per process).
const Api* LoadedApi() {
  static const Api* api = []() -> const Api* {
    void* lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    auto* a = new Api;
    const bool ok = Load(lib, "cublasLtCreate", a->create) && Load(lib, "cublasLtMatmulDescCreate", a->desc_create) &&
                    Load(lib, "cublasLtMatmulDescDestroy", a->desc_destroy) &&
                    Load(lib, "cublasLtMatmulDescSetAttribute", a->desc_set) &&
                    Load(lib, "cublasLtMatrixLayoutCreate", a->layout_create) &&
                    Load(lib, "cublasLtMatrixLayoutDestroy", a->layout_destroy) &&
                    Load(lib, "cublasLtMatrixLayoutSetAttribute", a->layout_set) &&
                    Load(lib, "cublasLtMatmulPreferenceCreate", a->pref_create) &&
                    Load(lib, "cublasLtMatmulPreferenceDestroy", a->pref_destroy) &&
                    Load(lib, "cublasLtMatmulPreferenceSetAttribute", a->pref_set) &&
                    Load(lib, "cublasLtMatmulAlgoGetHeuristic", a->heuristic) && Load(lib, "cublasLtMatmul", a->matmul);
    if (!ok) {
      delete a;
      return nullptr;
    }
    return a;
  }();
  return api;
}

// The handle of the current device, made on first use (a handle belongs to the device current when it
// was made; calls through it take their stream and workspace, so threads share it).
absl::StatusOr<cublasLtHandle_t> HandleForCurrentDevice(const Api& api) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasLtHandle_t>;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return absl::UnavailableError("no current CUDA device");
  std::lock_guard<std::mutex> lock(mu);
  cublasLtHandle_t& handle = (*handles)[device];
  if (handle == nullptr && api.create(&handle) != CUBLAS_STATUS_SUCCESS) {
    handle = nullptr;
    return absl::UnavailableError("cublasLtCreate failed");
  }
  return handle;
}

absl::Status Check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuBLASLt ", what, " failed (status ", static_cast<int>(s), ")"));
}

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

// A column-major layout of rows x cols (leading dim rows) in `batch` entries `stride` elements apart.
absl::Status MakeLayout(const Api& api, cudaDataType_t type, int64_t rows, int64_t cols, int64_t batch, int64_t stride,
                        const char* what, cublasLtMatrixLayout_t* layout) {
  if (absl::Status s = Check(api.layout_create(layout, type, rows, cols, rows), what); !s.ok()) return s;
  if (batch == 1) return absl::OkStatus();
  const int32_t count = static_cast<int32_t>(batch);
  if (absl::Status s = Check(api.layout_set(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), what);
      !s.ok()) {
    return s;
  }
  return Check(api.layout_set(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)), what);
}

cublasComputeType_t ComputeType(const LtMatmulShape& shape) {
  if (shape.type != CUDA_R_32F) return CUBLAS_COMPUTE_32F;
  return shape.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// The epilogue for the bias and activation of `shape` (none: cuBLASLt's default).
cublasLtEpilogue_t EpilogueOf(const LtMatmulShape& shape) {
  const bool bias = shape.bias != nullptr;
  switch (shape.activation) {
    case LtMatmulShape::Activation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case LtMatmulShape::Activation::kGeluTanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

absl::Status SetEpilogue(const Api& api, const LtMatmulShape& shape, cublasLtMatmulDesc_t desc) {
  const cublasLtEpilogue_t epilogue = EpilogueOf(shape);
  if (epilogue == CUBLASLT_EPILOGUE_DEFAULT) return absl::OkStatus();
  if (absl::Status s =
          Check(api.desc_set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "epilogue");
      !s.ok() || shape.bias == nullptr) {
    return s;
  }
  const int32_t bias_type = shape.type;
  if (absl::Status s = Check(api.desc_set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &shape.bias, sizeof(void*)), "bias");
      !s.ok()) {
    return s;
  }
  return Check(api.desc_set(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)), "bias type");
}

}  // namespace

struct LtMatmul::State {
  LtMatmulShape shape;
  const Api* api = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t w = nullptr, x = nullptr, d = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;  // heuristics order
  ~State() {
    if (api == nullptr) return;
    for (cublasLtMatrixLayout_t l : {w, x, d}) {
      if (l != nullptr) api->layout_destroy(l);
    }
    if (desc != nullptr) api->desc_destroy(desc);
  }
};

absl::StatusOr<LtMatmul> LtMatmul::Create(const LtMatmulShape& shape) {
  const Api* api = LoadedApi();
  if (api == nullptr) return absl::UnavailableError("libcublasLt.so.13 could not be loaded");
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 ||
      (shape.type != CUDA_R_16F && shape.type != CUDA_R_16BF && shape.type != CUDA_R_32F)) {
    return absl::InvalidArgumentError("cuBLASLt matmul: empty dims or not float16/bfloat16/float32");
  }
  if (shape.batch < 1 || shape.batch > INT32_MAX ||
      (shape.w_batch_stride != 0 && shape.w_batch_stride != shape.k * shape.n)) {
    return absl::InvalidArgumentError("cuBLASLt matmul: batch count or W's batch stride out of range");
  }
  if (shape.residual && shape.activation != LtMatmulShape::Activation::kNone) {
    return absl::InvalidArgumentError("cuBLASLt matmul: a residual is added before the activation, not after");
  }
  absl::StatusOr<cublasLtHandle_t> handle = HandleForCurrentDevice(*api);
  if (!handle.ok()) return handle.status();
  auto state = std::make_shared<State>();
  state->shape = shape;
  state->api = api;
  state->handle = *handle;
  if (absl::Status s = Check(api->desc_create(&state->desc, ComputeType(shape), CUDA_R_32F), "descriptor"); !s.ok()) {
    return s;
  }
  if (absl::Status s = SetEpilogue(*api, shape, state->desc); !s.ok()) return s;
  if (shape.w_transposed) {  // W^T's column-major view is W itself: A is read transposed
    const cublasOperation_t transpose = CUBLAS_OP_T;
    if (absl::Status s =
            Check(api->desc_set(state->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), "transpose");
        !s.ok()) {
      return s;
    }
  }
  const int64_t b = shape.batch;
  const int64_t w_rows = shape.w_transposed ? shape.k : shape.n, w_cols = shape.w_transposed ? shape.n : shape.k;
  for (absl::Status s : {MakeLayout(*api, shape.type, w_rows, w_cols, b, shape.w_batch_stride, "layout W", &state->w),
                         MakeLayout(*api, shape.type, shape.k, shape.m, b, shape.m * shape.k, "layout X", &state->x),
                         MakeLayout(*api, shape.type, shape.n, shape.m, b, shape.m * shape.n, "layout D", &state->d)}) {
    if (!s.ok()) return s;
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if (absl::Status s = Check(api->pref_create(&pref), "preference"); !s.ok()) return s;
  // The alignment preferences must hold: with cuBLASLt's default (256 bytes) Run's check would be too weak.
  bool preferred = api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kMaxWorkspace,
                                 sizeof(kMaxWorkspace)) == CUBLAS_STATUS_SUCCESS;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    preferred = preferred && api->pref_set(pref, attr, &kAlignment, sizeof(kAlignment)) == CUBLAS_STATUS_SUCCESS;
  }
  if (!preferred) {
    api->pref_destroy(pref);
    return absl::UnavailableError("cuBLASLt matmul preferences not accepted");
  }
  std::vector<cublasLtMatmulHeuristicResult_t> results(kMaxAlgorithms);
  int found = 0;
  const cublasStatus_t heuristic = api->heuristic(state->handle, state->desc, state->w, state->x, state->d, state->d,
                                                  pref, kMaxAlgorithms, results.data(), &found);
  api->pref_destroy(pref);
  if (heuristic != CUBLAS_STATUS_SUCCESS || found < 1) {
    return absl::UnavailableError(
        absl::StrCat("cuBLASLt offers no algorithm for ", shape.m, "x", shape.k, " * ", shape.k, "x", shape.n));
  }
  results.resize(found);
  state->algos = std::move(results);
  return LtMatmul(std::move(state));
}

absl::Status LtMatmul::Run(const void* x, const void* w, const void* residual, void* d, void* workspace,
                           cudaStream_t stream) const {
  const State& s = *state_;
  if ((residual != nullptr) != s.shape.residual) return absl::InvalidArgumentError("residual given iff planned");
  for (const void* p : {x, w, static_cast<const void*>(d), residual, s.shape.bias}) {
    if (p != nullptr && !Aligned(p)) return absl::InvalidArgumentError("cuBLASLt matmul: a buffer not 16-byte aligned");
  }
  const float alpha = 1.f, beta = residual != nullptr ? 1.f : 0.f;
  return Check(s.api->matmul(s.handle, s.desc, &alpha, w, s.w, x, s.x, &beta, residual != nullptr ? residual : d, s.d,
                             d, s.d, &s.algos[chosen_].algo, workspace, s.algos[chosen_].workspaceSize, stream),
               "matmul");
}

size_t LtMatmul::workspace_bytes() const { return state_->algos[chosen_].workspaceSize; }
int LtMatmul::algorithm_count() const { return static_cast<int>(state_->algos.size()); }

LtMatmul LtMatmul::WithAlgorithm(int i) const {
  LtMatmul other = *this;
  other.chosen_ = i >= 0 && i < algorithm_count() ? i : 0;
  return other;
}
const LtMatmulShape& LtMatmul::shape() const { return state_->shape; }

}  // namespace kernels::cublas
