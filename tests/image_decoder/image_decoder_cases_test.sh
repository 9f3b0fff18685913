#!/usr/bin/env bash
# onnxrun test on every ImageDecoder case (tests/image_decoder/cases): all must pass on the CPU.
set -uo pipefail
onnxrun=$1
out=$("$onnxrun" test --device cpu tests/image_decoder/cases 2>&1)
rc=$?
echo "$out" | tail -5
expected=$(ls -d tests/image_decoder/cases/*/ | wc -l)
if [[ $rc != 0 ]] || ! grep -q "^$expected passed, 0 failed, 0 errors" <<<"$out" || ((expected < 35)); then
  echo "FAIL: expected $expected cases to pass (rc=$rc)"
  exit 1
fi
