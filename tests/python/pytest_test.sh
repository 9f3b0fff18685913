#!/usr/bin/env bash
# Runs tests/python with Debian's python3 + pytest + numpy + onnx, importing onnxrun from the built
# module. Args: ONNXRUN_SO.
set -euo pipefail
so=$(realpath "$1")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$tmp/pkg"
ln -sf "$so" "$tmp/pkg/onnxrun.so"
export PYTHONPATH="$tmp/pkg" ONNXRUN_REPO="$PWD"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python/test_onnxrun.py tests/python/test_ml_values.py tests/python/test_gpu.py \
  tests/python/test_triton_model.py
