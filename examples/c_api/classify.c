/* A C program (compiled as C: only the C API's types cross) that runs models/tiny_cnn through
 * include/onnxrun/onnxrun_c.h on a generated image and checks what can be checked without a
 * reference: one output 'probs' of [1, 10] probabilities (the model ends in Softmax) summing to 1.
 * Exit status 0 when every check holds. Built by Bazel (//tests/c_api:c_program_test) and, against an
 * installed onnxrun (tools/install.sh), by CMake (examples/c_api/CMakeLists.txt). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnxrun/onnxrun_c.h"

static int Fail(const char* what, OnnxrunStatus* status) {
  fprintf(stderr, "FAIL %s: %s\n", what, status ? onnxrun_status_message(status) : "");
  onnxrun_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "models/tiny_cnn/model.onnx";
  OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, NULL};
  OnnxrunSession* session = NULL;
  OnnxrunStatus* status = onnxrun_session_create(path, &options, &session);
  if (status) return Fail("create", status);
  static float pixels[1 * 3 * 32 * 32];
  for (size_t i = 0; i < sizeof(pixels) / sizeof(pixels[0]); ++i) pixels[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  int64_t dims[4] = {1, 3, 32, 32};
  OnnxrunTensor input = {onnxrun_session_input_name(session, 0), ONNXRUN_FLOAT32, dims, 4, pixels};
  OnnxrunValues* outputs = NULL;
  status = onnxrun_session_run(session, &input, 1, &outputs);
  if (status) return Fail("run", status);
  OnnxrunTensor probs;
  status = onnxrun_values_get(outputs, 0, &probs);
  if (status) return Fail("get", status);
  int failures = 0;
  if (onnxrun_values_count(outputs) != 1 || strcmp(probs.name, "probs") != 0) failures += Fail("output name", NULL);
  if (probs.dtype != ONNXRUN_FLOAT32 || probs.rank != 2 || probs.dims[0] != 1 || probs.dims[1] != 10) {
    failures += Fail("output type", NULL);
  } else {
    double sum = 0;
    for (int i = 0; i < 10; ++i) {
      const float p = ((const float*)probs.data)[i];
      if (!(p >= 0.0f && p <= 1.0f)) failures += Fail("probability range", NULL);
      sum += p;
    }
    if (fabs(sum - 1.0) > 1e-5) failures += Fail("probabilities sum to 1", NULL);
  }
  onnxrun_values_free(outputs);
  onnxrun_session_free(session);
  printf("%s (onnxrun %s)\n", failures == 0 ? "classify: all checks passed" : "classify: FAILED", onnxrun_version());
  return failures == 0 ? 0 : 1;
}
