#!/usr/bin/env bash
# `onnxrun test DATA/node` and the conformance gtest count the same: the passes equal, and onnxrun
# test's failures + errors equal the gtest's failures + op-set skips + expected failures (both
# compare through cli/model_test). Args: CONFORMANCE_TEST ONNXRUN.
set -uo pipefail
conformance=$1
onnxrun=$2
data=${ONNX_TESTDATA_DIR:-/usr/share/libonnx-testdata/data}
tmp=${TEST_TMPDIR:-$(mktemp -d)}

"$conformance" >"$tmp/gtest.txt" 2>&1
read -r gtest_passed gtest_failed skipped expected < <(awk '$1 == "node" { print $2, $3, $4, $5 }' "$tmp/gtest.txt")
"$onnxrun" test --device cpu --jobs 2 "$data/node" >"$tmp/test.txt"
summary=$(grep -E '^[0-9]+ passed, ' "$tmp/test.txt")
read -r passed failed errors < <(sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) errors.*/\1 \2 \3/' <<<"$summary")
# The random-output cases (expected_failures.txt) are never passes for the gtest, which cannot
# compare their values; a draw that happens to equal the stored one is moved to onnxrun test's
# failures likewise.
random_cases=$(awk '$2 == "random" && $3 == "output:" { print $1 }' tests/conformance/expected_failures.txt)
lucky=0
for name in $random_cases; do
  grep -qE "^PASS +node/$name( |$)" "$tmp/test.txt" && lucky=$((lucky + 1))
done
passed=$((passed - lucky)) failed=$((failed + lucky))
echo "gtest node: $gtest_passed passed, $gtest_failed failed, $skipped skipped (op), $expected expected failures"
echo "onnxrun test: $summary"
if [[ -z $gtest_passed || $passed != "$gtest_passed" ||
      $((failed + errors)) != $((gtest_failed + skipped + expected)) ]]; then
  echo "FAIL: the counts differ"
  exit 1
fi
echo "ok"
