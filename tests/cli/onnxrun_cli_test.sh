#!/usr/bin/env bash
# The onnxrun command's contract: exit 0 only on success; on failure a non-zero exit and exactly
# one line on stderr. Args: ONNXRUN MODEL_DIR (a folder in the ONNX test layout).
set -uo pipefail
onnxrun=$1
case_dir=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

# expect_fail NAME EXPECTED_RC STDERR_SUBSTRING -- ARGS...
expect_fail() {
  local name=$1 want_rc=$2 want_text=$3
  shift 4
  "$onnxrun" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc != "$want_rc" || $lines != 1 ]] || ! grep -qF -- "$want_text" "$tmp/err"; then
    echo "FAIL $name: rc=$rc (want $want_rc), $lines stderr lines, stderr: $(cat "$tmp/err")"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
}

"$onnxrun" --help >"$tmp/out" || { echo "FAIL --help"; failures=$((failures + 1)); }
grep -q -- "--input-dir" "$tmp/out" || { echo "FAIL --help text"; failures=$((failures + 1)); }

expect_fail "no model" 2 "no model given" --
expect_fail "unknown flag" 2 "unknown option '--bogus'" -- --bogus "$case_dir/model.onnx"
expect_fail "bad device" 2 "--device must be" -- --device tpu "$case_dir/model.onnx"
expect_fail "bad precision" 2 "--precision must be fp32, tf32, fp16 or bf16" -- --precision fp8 "$case_dir/model.onnx"
expect_fail "bad explain format" 2 "--explain takes text, json or dot" -- --explain=yaml "$case_dir/model.onnx"
expect_fail "missing file" 1 "cannot open model" -- /nonexistent/model.onnx
: >"$tmp/empty.onnx"
expect_fail "empty file" 1 "the model file is empty" -- "$tmp/empty.onnx"
head -c 3000 /dev/urandom >"$tmp/random.onnx"
expect_fail "random bytes" 1 "error:" -- "$tmp/random.onnx"
head -c 2000 "$case_dir/model.onnx" >"$tmp/truncated.onnx"
expect_fail "truncated model" 1 "error:" -- "$tmp/truncated.onnx"
expect_fail "a folder" 1 "is a folder" -- "$case_dir"
expect_fail "wrong input shape" 1 "the model expects" -- --input "image=$case_dir/test_data_set_0/output_0.pb" "$case_dir/model.onnx"
expect_fail "unknown input name" 1 "unknown input 'nope'" -- --input "nope=$case_dir/test_data_set_0/input_0.pb" "$case_dir/model.onnx"

# Success: generated inputs, then the ONNX test layout in and out.
"$onnxrun" --device cpu "$case_dir/model.onnx" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL generated run: $(cat "$tmp/err")"; failures=$((failures + 1)); }
grep -q "^output 'probs': float32\[1,10\]" "$tmp/out" || { echo "FAIL summary line"; cat "$tmp/out"; failures=$((failures + 1)); }
"$onnxrun" --batch 4 "$case_dir/model.onnx" | grep -q "float32\[4,10\]" || { echo "FAIL --batch"; failures=$((failures + 1)); }
"$onnxrun" --device cpu --input-dir "$case_dir/test_data_set_0" --output-dir "$tmp/outputs" "$case_dir/model.onnx" >/dev/null \
  && [[ -s $tmp/outputs/output_0.pb ]] || { echo "FAIL --output-dir"; failures=$((failures + 1)); }

# --explain prints the plan (and runs nothing); the summary names what fused.
"$onnxrun" --explain "$case_dir/model.onnx" >"$tmp/out" || { echo "FAIL --explain"; failures=$((failures + 1)); }
grep -q "^#1 FusedGraph Conv+Relu \[conv1:Conv, relu1:Relu\]" "$tmp/out" || { echo "FAIL --explain step line"; cat "$tmp/out"; failures=$((failures + 1)); }
grep -q "^BNs folded: 1, BNs left: 0" "$tmp/out" || { echo "FAIL --explain summary"; failures=$((failures + 1)); }
! grep -q "^output" "$tmp/out" || { echo "FAIL --explain ran the model"; failures=$((failures + 1)); }
"$onnxrun" --precision fp16 "$case_dir/model.onnx" | grep -q "^output 'probs': float32\[1,10\]" || { echo "FAIL --precision fp16"; failures=$((failures + 1)); }

# --profile on the CPU: one step-by-step run, a line per slow step naming its first node, totals.
"$onnxrun" --device cpu --benchmark 2 --profile "$case_dir/model.onnx" >"$tmp/out" 2>&1 || { echo "FAIL --profile: $(tail -1 "$tmp/out")"; failures=$((failures + 1)); }
grep -q "^profile: one step-by-step run, [0-9.]* ms of CPU time in [0-9]* steps" "$tmp/out" || { echo "FAIL --profile header"; cat "$tmp/out"; failures=$((failures + 1)); }
grep -q "FusedGraph Conv+Relu 'conv1'" "$tmp/out" && grep -q "^time per step kind:" "$tmp/out" || { echo "FAIL --profile steps"; cat "$tmp/out"; failures=$((failures + 1)); }

# --version: the release (the one tools/install.sh writes into onnxrun.pc) and the opsets.
"$onnxrun" --version >"$tmp/out" || { echo "FAIL --version"; failures=$((failures + 1)); }
grep -q "^onnxrun [0-9][0-9.]*$" "$tmp/out" || { echo "FAIL --version first line"; failures=$((failures + 1)); }
grep -q "^ONNX opsets 1-" "$tmp/out" || { echo "FAIL --version opsets"; failures=$((failures + 1)); }

# --list-ops: the registry's ops with their step kind, then what the importer rewrites.
"$onnxrun" --list-ops >"$tmp/out" || { echo "FAIL --list-ops"; failures=$((failures + 1)); }
grep -q "^Conv  *FusedGraph" "$tmp/out" || { echo "FAIL --list-ops Conv line"; failures=$((failures + 1)); }
grep -q "^ImageScaler  *-  *rewritten to Mul and Add (a channel bias) (importer)" "$tmp/out" ||
  { echo "FAIL --list-ops ImageScaler line"; failures=$((failures + 1)); }

echo "$failures failures"
exit $((failures > 0))
