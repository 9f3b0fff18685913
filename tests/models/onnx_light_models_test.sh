#!/usr/bin/env bash
# ONNX's "light" model-zoo models (AlexNet, DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet,
# SqueezeNet, VGG-19, ZFNet-512 at opset 9 / IR 3, from the onnx package's backend test data; made
# by make_onnx_light.py) against their stored outputs, through `onnxrun test` on the CPU.
# Args: ONNXRUN ARCHIVE.
set -uo pipefail
onnxrun=$1
archive=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
tar xJf "$archive" -C "$tmp" || { echo "FAIL: cannot unpack $archive"; exit 1; }
out=$("$onnxrun" test --device cpu --quiet "$tmp/onnx_light" 2>&1)
rc=$?
echo "$out"
if [[ $rc != 0 ]] || ! grep -q "^9 passed, 0 failed, 0 errors" <<<"$out"; then
  echo "FAIL: want all 9 models to pass (rc $rc)"
  exit 1
fi
