#!/usr/bin/env bash
# Runs the embedding example on the shipped tiny_cnn and checks what an application relies on:
# exit 0, three classes printed in descending order, probabilities that sum to 1.
set -euo pipefail
out=$("$1" "$2")
echo "$out"
[[ $(grep -c '^class ' <<<"$out") == 3 ]] || { echo "expected 3 classes"; exit 1; }
grep '^class ' <<<"$out" | awk '{print $3}' | sort -rc -g || { echo "classes not in descending order"; exit 1; }
awk '/^sum of probabilities:/ { d = $4 - 1; if (d < 0) d = -d; exit !(d < 1e-5) }' <<<"$out" \
  || { echo "probabilities do not sum to 1"; exit 1; }
# A bad model path is an error message and exit code 1, not a crash.
set +e
"$1" /nonexistent.onnx 2>/dev/null; rc=$?
set -e
[[ $rc == 1 ]] || { echo "expected exit 1 for a missing model, got $rc"; exit 1; }
echo PASS
