#!/usr/bin/env bash
# Runs on the GPU machine (device tool), from the repo root, with a bundle in .gpu/ made by
#   ../shared/tools/gpu-bundle .gpu bazel-bin/cli/onnxrun bazel-bin/kernels/cuda/cuda_kernels_test \
#       [bazel-bin/kernels/cudnn/*_test] -- models/tiny_cnn
# Exports zoo models with the machine's PyTorch, runs the GPU unit tests and `onnxrun --check`
# (GPU vs CPU) on each model, writes logs under $OUT and prints a table last.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
repo=$(pwd)
zoo=/tmp/zoo
models=${MODELS:-"resnet50 mobilenet_v2 densenet121"}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 models/export_zoo.py "$zoo" $models >"$out/export.log" 2>&1 || tail -5 "$out/export.log"
declare -A result
for t in .gpu/bin/*_test; do
  name=$(basename "$t")
  .gpu/run "bin/$name" --gtest_brief=1 >"$out/$name.log" 2>&1
  result[$name]="rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | tr '\n' ' ')"
done
for p in fp32 tf32 fp16; do
  for m in tiny_cnn $models; do
    dir=$zoo/$m
    [[ $m == tiny_cnn ]] && dir=$repo/models/tiny_cnn
    log="$out/check_${m}_$p.log"
    .gpu/run bin/onnxrun --device cuda --precision "$p" --check --input-dir "$dir/test_data_set_0" "$dir/model.onnx" >"$log" 2>&1
    result["check $m $p"]="rc=$? $(grep -E '^check|first divergence|error' "$log" | head -3 | tr '\n' ' ')"
  done
done
for m in resnet50 mobilenet_v2; do .gpu/run bin/onnxrun --device cuda --explain "$zoo/$m/model.onnx" >"$out/explain_$m.txt" 2>&1; done
echo "==== results"
for k in "${!result[@]}"; do echo "$k: ${result[$k]}"; done | sort
