#!/usr/bin/env bash
# compute-sanitizer memcheck of GPU test binaries. Bazel links tests against its per-target shared
# libraries by default, and such a binary dies under the sanitizer before its first CUDA call
# (SIGSEGV in the sanitizer's injection); linked statically (--dynamic_mode=off) they run.
#
#   tools/gpu_memcheck.sh build [TARGET...]   here: build them statically, bundle into .gpus/ and
#                                             .gpuz/memcheck.tar.xz (carry that file to the device)
#   tools/gpu_memcheck.sh run                 on the GPU machine, from the repo root: every bundled
#                                             test under memcheck, one line each (rc 9: errors)
set -uo pipefail
default_targets=(//tests/gpu_ops:scatter_gpu_test //tests/gpu_ops:grid_sample_gpu_test //tests/gpu_ops:index_gpu_test
  //tests/gpu_ops:norm_gpu_test //tests/gpu_ops:pool_gpu_test //tests/gpu_ops:elementwise_gpu_test
  //runtime:cuda_kernel_steps_sweep_test)
case "${1:-}" in
  build)
    shift
    targets=("${default_targets[@]}")
    [[ $# -gt 0 ]] && targets=("$@")
    bazel build --dynamic_mode=off "${targets[@]}" || exit 1
    paths=()
    for t in "${targets[@]}"; do paths+=("bazel-bin/$(echo "${t#//}" | tr ':' '/')"); done
    ../shared/tools/gpu-bundle .gpus "${paths[@]}" -- models/tiny_cnn
    mkdir -p .gpuz && tar cf - .gpus | xz -T2 -3 >.gpuz/memcheck.tar.xz
    ls -la .gpuz/memcheck.tar.xz
    ;;
  run)
    [[ -d .gpus ]] || tar xJf .gpuz/memcheck.tar.xz
    sanitizer=/usr/local/cuda/bin/compute-sanitizer
    for t in .gpus/bin/*_test; do
      name=$(basename "$t")
      log=${OUT:-/tmp}/memcheck_$name.log
      timeout 300 .gpus/run bash -c "cd .. && $sanitizer --tool memcheck --error-exitcode 9 .gpus/bin/$name --gtest_brief=1" >"$log" 2>&1
      echo "$name rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY' "$log" | tr '\n' ' ')"
    done
    ;;
  *) sed -n 2,10p "$0"; exit 2 ;;
esac
