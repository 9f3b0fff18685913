#!/usr/bin/env bash
# onnxrun test on a folder of cases in the ONNX test layout (each with the reference outputs of a
# tool no one here wrote): every case must pass on the CPU, and there must be at least MIN of them.
#   onnxrun_cases_test.sh ONNXRUN CASES_DIR MIN
set -uo pipefail
onnxrun=$1 cases=$2 min=$3
out=$("$onnxrun" test --device cpu "$cases" 2>&1)
rc=$?
echo "$out" | tail -5
expected=$(ls -d "$cases"/*/ | wc -l)
if [[ $rc != 0 ]] || ! grep -q "^$expected passed, 0 failed, 0 errors" <<<"$out" || ((expected < min)); then
  echo "FAIL: expected all $expected cases (at least $min) to pass (rc=$rc)"
  exit 1
fi
