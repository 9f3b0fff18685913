/* onnxrun's C API: load an ONNX model and run it from C (or any language with a C FFI). Only C types
 * cross this boundary: opaque handles, plain structs of scalars and pointers, and status objects
 * with messages; the C++ API (runtime/session.h) is the convenient layer on top of the same Session.
 *
 * Ownership: every handle a function returns through an out-parameter belongs to the caller and is
 * freed with its *_free function (which accepts NULL). Functions that can fail return an
 * OnnxrunStatus*: NULL on success, otherwise a status the caller frees. Strings and arrays a getter
 * returns are borrowed from the handle they came from and live as long as it does.
 * A session may be run from several threads at once.
 *
 * Example:
 *   OnnxrunSession* session = NULL;
 *   OnnxrunStatus* status = onnxrun_session_create("model.onnx", NULL, &session);
 *   if (status) { fprintf(stderr, "%s\n", onnxrun_status_message(status)); onnxrun_status_free(status); return 1; }
 *   int64_t dims[4] = {1, 3, 32, 32};
 *   OnnxrunTensor input = {"image", ONNXRUN_FLOAT32, dims, 4, pixels};
 *   OnnxrunValues* outputs = NULL;
 *   status = onnxrun_session_run(session, &input, 1, &outputs);
 *   OnnxrunTensor probs;
 *   if (!status) status = onnxrun_values_get(outputs, 0, &probs);   // probs.data: float[probs.dims...]
 *   ...
 *   onnxrun_values_free(outputs);
 *   onnxrun_session_free(session);
 */
#ifndef ONNXRUN_ONNXRUN_C_H_
#define ONNXRUN_ONNXRUN_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct OnnxrunStatus OnnxrunStatus;
typedef struct OnnxrunSession OnnxrunSession;
typedef struct OnnxrunValues OnnxrunValues; /* the outputs of one run */

typedef enum { ONNXRUN_DEVICE_AUTO = 0, ONNXRUN_DEVICE_CPU = 1, ONNXRUN_DEVICE_CUDA = 2 } OnnxrunDevice;

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum {
  ONNXRUN_FLOAT32 = 1,
  ONNXRUN_UINT8 = 2,
  ONNXRUN_INT8 = 3,
  ONNXRUN_UINT16 = 4,
  ONNXRUN_INT16 = 5,
  ONNXRUN_INT32 = 6,
  ONNXRUN_INT64 = 7,
  ONNXRUN_STRING = 8, /* host tensors only: data is an array of NUL-terminated strings (const char*); a
                         string holding a NUL byte reads as ending there */
  ONNXRUN_BOOL = 9,   /* one byte per element, 0 or 1 */
  ONNXRUN_FLOAT16 = 10,
  ONNXRUN_FLOAT64 = 11,
  ONNXRUN_UINT32 = 12,
  ONNXRUN_UINT64 = 13,
  ONNXRUN_BFLOAT16 = 16
} OnnxrunDType;

typedef struct {
  OnnxrunDevice device;  /* ONNXRUN_DEVICE_AUTO: the GPU when one is usable, else the CPU */
  const char* precision; /* "fp32" (also when NULL), "tf32", "fp16" or "bf16" */
  int device_id;         /* which CUDA device (cudaSetDevice numbering; 0 in a zeroed struct) */
} OnnxrunOptions;

/* A dense, row-major host tensor: inputs the caller owns, or a borrowed view of an output. */
typedef struct {
  const char* name;
  OnnxrunDType dtype;
  const int64_t* dims;
  size_t rank;
  const void* data; /* the product of dims elements of dtype */
} OnnxrunTensor;

/* What a model input or output is. dtype 0 when it is not a tensor (a sequence, a map, an optional); rank -1 when
 * unknown; dims[d] -1 for a dim known only by name (dim_names[d],
 * "" for fixed or unnamed dims). Borrowed from the session. */
typedef struct {
  const char* name;
  int dtype; /* an OnnxrunDType, or 0 */
  int64_t rank;
  const int64_t* dims;
  const char* const* dim_names;
} OnnxrunTensorInfo;

/* The status's code (absl's numbering: 3 invalid argument, 12 unimplemented, ...) and message. */
int onnxrun_status_code(const OnnxrunStatus* status);
const char* onnxrun_status_message(const OnnxrunStatus* status);
void onnxrun_status_free(OnnxrunStatus* status);

/* The release, e.g. "0.1.0" (static storage). */
const char* onnxrun_version(void);

/* Loads, checks and plans the model at `model_path`; `options` may be NULL (the defaults). */
OnnxrunStatus* onnxrun_session_create(const char* model_path, const OnnxrunOptions* options, OnnxrunSession** session);
/* As onnxrun_session_create, with `count` further settings by name (keys[i] = values[i]), the CLI's
 * flags without their dashes: "tune_for_streams" = "2", "cuda_graph" = "0", "plan_cache_dir" = "/path",
 * ... (runtime/session_config.h lists them); an unknown key or a bad value is an error naming it. */
OnnxrunStatus* onnxrun_session_create_with_config(const char* model_path, const OnnxrunOptions* options,
                                                  const char* const* keys, const char* const* values, size_t count,
                                                  OnnxrunSession** session);
void onnxrun_session_free(OnnxrunSession* session);
/* "cpu" or "cuda": where the session runs. */
const char* onnxrun_session_device(const OnnxrunSession* session);
size_t onnxrun_session_input_count(const OnnxrunSession* session);
size_t onnxrun_session_output_count(const OnnxrunSession* session);
/* The name of input (output) i; NULL when i is out of range. */
const char* onnxrun_session_input_name(const OnnxrunSession* session, size_t i);
const char* onnxrun_session_output_name(const OnnxrunSession* session, size_t i);

/* Input (output) i's description; an error for i out of range. */
OnnxrunStatus* onnxrun_session_input_info(const OnnxrunSession* session, size_t i, OnnxrunTensorInfo* info);
OnnxrunStatus* onnxrun_session_output_info(const OnnxrunSession* session, size_t i, OnnxrunTensorInfo* info);
/* The plan as JSON (the schema of `onnxrun --explain=json`): steps, what fused and why not. */
const char* onnxrun_session_explain_json(const OnnxrunSession* session);

/* Runs the model on `input_count` named inputs (read during the call, not kept); on success *outputs holds every graph
 * output, in the model's order. A missing input, a wrong dtype or shape is an error status. */
OnnxrunStatus* onnxrun_session_run(const OnnxrunSession* session, const OnnxrunTensor* inputs, size_t input_count,
                                   OnnxrunValues** outputs);

/* A map input (ai.onnx.ml DictVectorizer's and CastMap's map(int64 | string, T)): 1-D keys
 * (ONNXRUN_INT64 or ONNXRUN_STRING) and as many values, host memory, read during the call. Numeric
 * values of another dtype than the model declares are converted to it (a double for a float map). */
typedef struct {
  const char* name;
  OnnxrunTensor keys;
  OnnxrunTensor values;
} OnnxrunMap;
/* onnxrun_session_run with `map_count` map inputs besides the tensors. */
OnnxrunStatus* onnxrun_session_run_with_maps(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                             size_t input_count, const OnnxrunMap* maps, size_t map_count,
                                             OnnxrunValues** outputs);
/* GPU sessions: inputs in device memory (each data a device pointer on the session's device),
 * the work ordered on `cuda_stream` (a cudaStream_t; NULL: the legacy default stream). Returns once
 * the work is enqueued (the first run for a set of input dims synchronises): the inputs must stay
 * valid, and the outputs be read, in `cuda_stream` order (or after onnxrun_values_ready_on).
 * run_device allocates the outputs in device memory (*outputs; freed by onnxrun_values_free, which
 * synchronises the device); run_device_into writes `output_count` caller buffers in place, one per
 * model output in the model's order, each with the dtype and dims the run produces. */
OnnxrunStatus* onnxrun_session_run_device(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                          size_t input_count, void* cuda_stream, OnnxrunValues** outputs);
OnnxrunStatus* onnxrun_session_run_device_into(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                               size_t input_count, const OnnxrunTensor* outputs, size_t output_count,
                                               void* cuda_stream);
/* 1 when the values' data are device pointers (from onnxrun_session_run_device), else 0. */
int onnxrun_values_on_device(const OnnxrunValues* values);
/* Device values: makes `cuda_stream` wait (on the GPU) until they are written. */
OnnxrunStatus* onnxrun_values_ready_on(const OnnxrunValues* values, void* cuda_stream);

size_t onnxrun_values_count(const OnnxrunValues* values);
/* A borrowed view of output i (valid until onnxrun_values_free); an error for i out of range or an
 * output that is not a tensor (a sequence, an empty optional). */
OnnxrunStatus* onnxrun_values_get(const OnnxrunValues* values, size_t i, OnnxrunTensor* tensor);

/* What output i holds: a tensor (onnxrun_values_get), a sequence of maps (ZipMap's {label: score}
 * per row: onnxrun_values_map_count / onnxrun_values_get_map), or another kind the C API does not
 * return (a sequence of tensors, an empty optional; also for i out of range). */
typedef enum { ONNXRUN_VALUE_TENSOR = 0, ONNXRUN_VALUE_MAPS = 1, ONNXRUN_VALUE_OTHER = 2 } OnnxrunValueKind;
OnnxrunValueKind onnxrun_values_kind(const OnnxrunValues* values, size_t i);
OnnxrunStatus* onnxrun_values_map_count(const OnnxrunValues* values, size_t i, size_t* count);
/* Map j of output i: borrowed 1-D views of its keys (ONNXRUN_INT64 or ONNXRUN_STRING) and values. */
OnnxrunStatus* onnxrun_values_get_map(const OnnxrunValues* values, size_t i, size_t j, OnnxrunTensor* keys,
                                      OnnxrunTensor* map_values);
void onnxrun_values_free(OnnxrunValues* values);

#ifdef __cplusplus
}
#endif

#endif /* ONNXRUN_ONNXRUN_C_H_ */
