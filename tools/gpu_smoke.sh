#!/usr/bin/env bash
# Runs on the GPU machine (device tool), from the repo root, with a bundle in .gpu/ made by
#   ../shared/tools/gpu-bundle .gpu bazel-bin/cli/onnxrun bazel-bin/kernels/cuda/cuda_kernels_test \
#       bazel-bin/kernels/cudnn/cudnn_gpu_test -- models/tiny_cnn
# Exports zoo models with the machine's PyTorch, runs the GPU unit tests, `onnxrun --check` (GPU vs
# CPU) per model and precision, compute-sanitizer memcheck, and (BENCH=1) bench/bench_vs_torch.py.
# Logs go to $OUT (tests.log, checks.log, explain_*.txt, memcheck.log, bench.md); a table last.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
repo=$(pwd)
zoo=/tmp/zoo
models=${MODELS:-"resnet50 mobilenet_v2 densenet121"}
precisions=${PRECISIONS:-"fp32 tf32 fp16"}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Each model from the torchvision zoo script, else from the sequence/detector one (opset 14: the
# device's torch exports the transformer's SDPA only from there).
for m in $models; do
  ONNXRUN_ZOO_OPSET=${ONNXRUN_ZOO_OPSET:-14} python3 models/export_zoo.py "$zoo" "$m" >>/tmp/export.log 2>&1 ||
    ONNXRUN_ZOO_OPSET=14 python3 models/export_seq_zoo.py "$zoo" "$m" >>/tmp/export.log 2>&1 || echo "export $m failed"
done
cat /tmp/export.log >>"$out/checks.log"
summary=()
while read -r line; do summary+=("export ${line%%:*}: ${line#*torch fp32 vs fp64 }"); done < <(grep -o '^[a-z0-9_]*:.*vs fp64 [^;]*;[^;]*' /tmp/export.log)
for t in .gpu/bin/*_test; do
  name=$(basename "$t")
  # From the bundle's data folder, where tests find models/tiny_cnn.
  .gpu/run bash -c "mkdir -p data/models && ln -sfn ../tiny_cnn data/models/tiny_cnn && cd data && exec ../bin/$name --gtest_brief=1" >>"$out/tests.log" 2>&1
  summary+=("$name: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests.log" | tail -3 | tr '\n' ' ')")
done
# CONFORMANCE=1: ONNX's backend suites on the GPU (bin/conformance_gpu + data/testdata.tar.xz).
if [[ -n ${CONFORMANCE:-} && -f .gpu/data/testdata.tar.xz ]]; then
  mkdir -p /tmp/testdata && tar xJf .gpu/data/testdata.tar.xz -C /tmp/testdata
  ONNXRUN_TEST_DEVICE=cuda ONNX_TESTDATA_DIR=/tmp/testdata \
    ONNXRUN_EXPECTED_FAILURES=$repo/tests/conformance/expected_failures.txt \
    ONNXRUN_ONNX_1_23_ARCHIVE=$repo/tests/conformance/onnx_1_23_node.tar.xz .gpu/run bin/conformance_gpu --gtest_brief=1 \
    >"$out/conformance.log" 2>&1
  summary+=("conformance on the GPU: rc=$? $(grep -E '^(node|pytorch|simple)' "$out/conformance.log" | tr -s ' ' | tr '\n' ';')")
fi
# ZOO_TEST=1: tests/zoo against torch's stored outputs on the GPU (bin/zoo_gpu), fp32/tf32/fp16.
if [[ -n ${ZOO_TEST:-} && -x .gpu/bin/zoo_gpu ]]; then
  ONNXRUN_TEST_DEVICE=cuda ONNXRUN_ZOO_DIR=$zoo .gpu/run bin/zoo_gpu --gtest_filter="${ZOO_FILTER:-*}" >"$out/zoo.log" 2>&1
  summary+=("zoo on the GPU vs torch: rc=$? $(grep -cE '^\[       OK' "$out/zoo.log") ok, failed: $(grep -E '^\[  FAILED  \] Torch' "$out/zoo.log" | sed 's/.*ZooTest.MatchesTorch.//;s/,.*//' | tr '\n' ' ')")
  grep -E 'max\|got-want\|' "$out/zoo.log" | sed 's/; worst.*//' >>"$out/checks.log"
fi
# TEST_CMD=1: `onnxrun test` over the exported zoo and tiny_cnn at every precision (against the stored
# outputs and the CPU run of each plan), a planted wrong output that must FAIL, and ONNX's node suite
# when data/testdata.tar.xz is in the bundle; JUnit reports in $OUT/test_*.xml, lines in test_cmd.log.
if [[ -n ${TEST_CMD:-} ]]; then
  .gpu/run bin/onnxrun test --device cuda --quiet --precisions "${precisions// /,}" --junit "$out/test_zoo.xml" \
    "$zoo" "$repo/models/tiny_cnn" >"$out/test_cmd.log" 2>&1
  summary+=("onnxrun test zoo (${precisions// /,}): rc=$? $(tail -1 "$out/test_cmd.log")")
  rm -rf /tmp/planted && cp -rL models/tiny_cnn /tmp/planted
  f=/tmp/planted/test_data_set_0/output_0.pb  # its last float (raw_data ends the file) becomes 100
  printf '\x00\x00\xc8\x42' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 4)) conv=notrunc status=none
  .gpu/run bin/onnxrun test --device cuda --quiet /tmp/planted >/tmp/planted.log 2>&1
  summary+=("onnxrun test planted wrong output: rc=$? (want 1) $(grep -A1 '^FAIL' /tmp/planted.log | tail -1)")
  cat /tmp/planted.log >>"$out/test_cmd.log"
  if [[ -f .gpu/data/testdata.tar.xz ]]; then
    mkdir -p /tmp/testdata && [[ -d /tmp/testdata/node ]] || tar xJf .gpu/data/testdata.tar.xz -C /tmp/testdata
    .gpu/run bin/onnxrun test --device cuda --quiet --junit "$out/test_node.xml" /tmp/testdata/node >/tmp/node.log 2>&1
    summary+=("onnxrun test node: rc=$? $(tail -1 /tmp/node.log)")
    grep -A1 '^FAIL' /tmp/node.log >>"$out/test_cmd.log"
  fi
fi
# STARTUP="resnet50 ...": process start to first result, fp16 batch 1: plans built on one thread
# (cold), on all threads (cold), and loaded from the plan cache (warm).
for m in ${STARTUP:-}; do
  for mode in "one-after-another:--build-threads 1 --no-plan-cache --no-plan-sharing:/tmp/pc_serial" "parallel::/tmp/pc_parallel" "warm::/tmp/pc_parallel"; do
    IFS=: read -r name flags cache <<<"$mode"
    [[ $name != warm ]] && rm -rf "$cache"
    .gpu/run bin/onnxrun --device cuda --precision fp16 --quiet $flags --plan-cache "$cache" "$zoo/$m/model.onnx" \
      >/tmp/startup.log 2>&1
    { echo "== $m $name"; cat /tmp/startup.log; } >>"$out/startup.log"
    summary+=("startup $m $name: $(grep -o 'cuDNN plans.*' /tmp/startup.log)")
  done
done
for p in $precisions; do
  for m in tiny_cnn $models; do
    dir=$zoo/$m
    [[ $m == tiny_cnn ]] && dir=$repo/models/tiny_cnn
    echo "== $m $p" >>"$out/checks.log"
    start=$SECONDS
    .gpu/run bin/onnxrun --device cuda --precision "$p" --check --input-dir "$dir/test_data_set_0" \
      "$dir/model.onnx" >/tmp/check.log 2>&1
    rc=$?
    cat /tmp/check.log >>"$out/checks.log"
    summary+=("check $m $p: rc=$rc $(grep -E '^check|first divergence|error' /tmp/check.log | head -2 | tr '\n' ' ') ($((SECONDS - start)) s)")
  done
done
for m in ${EXPLAIN:-resnet50 mobilenet_v2}; do
  .gpu/run bin/onnxrun --device cuda --precision "${EXPLAIN_PRECISION:-fp16}" --explain "$zoo/$m/model.onnx" \
    >"$out/explain_$m.txt" 2>&1
done
if [[ -n ${MEMCHECK:-} ]] && command -v /usr/local/cuda/bin/compute-sanitizer >/dev/null; then
  for m in $MEMCHECK; do
    dir=$zoo/$m
    [[ $m == tiny_cnn ]] && dir=$repo/models/tiny_cnn
    /usr/local/cuda/bin/compute-sanitizer --tool memcheck --target-processes all .gpu/run bin/onnxrun \
      --device cuda --precision "${MEMCHECK_PRECISION:-fp32}" --input-dir "$dir/test_data_set_0" "$dir/model.onnx" \
      >>"$out/memcheck.log" 2>&1
    summary+=("memcheck $m: rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)")
  done
fi
# EXTRA_CHECKS="efficientnet_b0:fp16 ...": --check (GPU vs CPU) on a bench export (torchvision's
# own random init, generated input) of a model the zoo does not have.
for spec in ${EXTRA_CHECKS:-}; do
  IFS=: read -r m p <<<"$spec"
  [[ -f /tmp/bench_$m.onnx ]] || python3 -c "import sys; sys.path.insert(0, 'bench'); import bench_vs_torch as b; \
b.export('$m', '/tmp/bench_$m.onnx')" >/dev/null 2>&1
  .gpu/run bin/onnxrun --device cuda --precision "$p" --check --quiet "/tmp/bench_$m.onnx" >/tmp/check.log 2>&1
  rc=$?
  { echo "== $m $p"; cat /tmp/check.log; } >>"$out/checks.log"
  summary+=("check $m $p: rc=$rc $(grep -E '^check|first divergence|error' /tmp/check.log | head -3 | tr '\n' ' ')")
done
# PROFILE="resnet50:fp16:256 ...": where the GPU time goes, step by step (profiles.txt).
for spec in ${PROFILE:-}; do
  IFS=: read -r m p b <<<"$spec"
  [[ -f /tmp/bench_$m.onnx ]] || python3 -c "import sys; sys.path.insert(0, 'bench'); import bench_vs_torch as b; \
b.export('$m', '/tmp/bench_$m.onnx')" >/dev/null 2>&1
  .gpu/run bin/onnxrun --device cuda --precision "$p" --batch "$b" --benchmark 20 --profile "/tmp/bench_$m.onnx" \
    >/tmp/profile.txt 2>&1
  { echo "== $m $p batch $b"; cat /tmp/profile.txt; } >>"$out/profiles.txt"
  summary+=("profile $m $p b$b: $(grep -E '^(gpu compute|benchmark)' /tmp/profile.txt | tr '\n' ' ')")
done
# STREAMS="resnet50:fp16:256:2 ...": --benchmark with K requests in flight (model:precision:batch:K),
# inputs in page-locked memory; lines in streams.txt.
for spec in ${STREAMS:-}; do
  IFS=: read -r m p b k <<<"$spec"
  [[ -f /tmp/bench_$m.onnx ]] || python3 -c "import sys; sys.path.insert(0, 'bench'); import bench_vs_torch as b; \
b.export('$m', '/tmp/bench_$m.onnx')" >/dev/null 2>&1
  .gpu/run bin/onnxrun --device cuda --precision "$p" --batch "$b" --benchmark "${STREAM_RUNS:-50}" --streams "$k" \
    --quiet "/tmp/bench_$m.onnx" >/tmp/streams.txt 2>&1
  { echo "== $m $p batch $b streams $k"; cat /tmp/streams.txt; } >>"$out/streams.txt"
  summary+=("streams $m $p b$b K=$k: $(grep -E '^(benchmark|gpu compute|streams)' /tmp/streams.txt | sed 's/ (inputs and outputs already on the device)//' | tr '\n' ' ')")
done
# PYTHON_GPU=1: the Python module built here against the bundled libonnxrun.so (tools/
# build_python_module.sh), then tests/python/test_gpu.py (torch DLPack, CuPy, the CLI).
if [[ -n ${PYTHON_GPU:-} && -f .gpu/bin/libonnxrun.so ]]; then
  tools/build_python_module.sh .gpu/bin/libonnxrun.so /tmp/pymod >"$out/python_gpu.log" 2>&1
  libs=$(.gpu/run bash -c 'echo $LD_LIBRARY_PATH')
  LD_LIBRARY_PATH=$libs PYTHONPATH=/tmp/pymod ONNXRUN_REPO=$repo ONNXRUN_CLI="$repo/.gpu/run bin/onnxrun" \
    python3 tests/python/test_gpu.py >>"$out/python_gpu.log" 2>&1
  summary+=("python gpu: rc=$? $(grep -cE '^PASSED' "$out/python_gpu.log") passed; $(grep -E '^(SKIPPED|Traceback|[A-Za-z]*Error)' "$out/python_gpu.log" | head -3 | tr '\n' ' ')")
fi
# STEM_BENCH=1: the ways cuDNN can run resnet50's fp16 stem (bin/stem_bench), in stem.md.
if [[ -n ${STEM_BENCH:-} && -x .gpu/bin/stem_bench ]]; then
  .gpu/run bin/stem_bench ${STEM_BATCHES:-32 256} >"$out/stem.md" 2>&1
  summary+=("stem_bench: rc=$? $(grep -c '^| [0-9]' "$out/stem.md") rows in stem.md")
fi
if [[ -n ${BENCH:-} ]]; then
  python3 bench/bench_vs_torch.py ${BENCH_ARGS:-} --out "$out" >/tmp/bench.log 2>&1 || tail -5 /tmp/bench.log
fi
echo "==== results"
printf '%s\n' "${summary[@]}"
[[ -f $out/bench.md ]] && cat "$out/bench.md"
