#!/usr/bin/env bash
# `onnxrun test`: the per-case lines, the summary, exit codes, a planted wrong output that FAILs
# naming the output, the element and the error, a model that does not load (ERROR, the run goes on),
# tolerance.json, --jobs, and the --junit / --json reports parsed by python3.
# Args: ONNXRUN MODEL_DIR (tiny_cnn in the ONNX test layout) NODE_DATA (libonnx-testdata's node/).
set -uo pipefail
onnxrun=$1
tiny_cnn=$2
node=$3
tmp=${TEST_TMPDIR:-$(mktemp -d)}/test_cmd
rm -rf "$tmp" && mkdir -p "$tmp"
failures=0
fail() { echo "FAIL $1"; [[ -f $tmp/out ]] && cat "$tmp/out"; failures=$((failures + 1)); }
ok() { echo "ok   $1"; }

# expect NAME RC GREP-PATTERN... -- ARGS: runs onnxrun test ARGS, checks the exit code and that
# every pattern (fixed string) is in stdout.
expect() {
  local name=$1 want_rc=$2
  shift 2
  local patterns=()
  while [[ $1 != -- ]]; do patterns+=("$1"); shift; done
  shift
  "$onnxrun" test "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc != "$want_rc" ]]; then fail "$name: rc=$rc (want $want_rc), stderr: $(cat "$tmp/err")"; return; fi
  for p in "${patterns[@]}"; do
    grep -qF -- "$p" "$tmp/out" || { fail "$name: no '$p' in the output"; return; }
  done
  ok "$name"
}

# A small zoo: two node cases (float, int64) and tiny_cnn.
mkdir -p "$tmp/zoo/node"
cp -rL "$node/test_abs" "$node/test_shape" "$tmp/zoo/node/"
cp -rL "$tiny_cnn" "$tmp/zoo/tiny_cnn"
chmod -R u+w "$tmp/zoo"

expect "all pass" 0 "PASS  zoo/node/test_abs  test_data_set_0  cpu fp32" "PASS  zoo/tiny_cnn  test_data_set_0  cpu fp32" \
  "3 passed, 0 failed, 0 errors (3 cases, 3 models)" "tolerance fp32 rtol 0.001 atol 1e-07 scaled_atol 0.0001" -- --device cpu "$tmp/zoo"
expect "--jobs 2" 0 "3 passed, 0 failed, 0 errors (3 cases, 3 models)" -- --device cpu --jobs 2 "$tmp/zoo"
expect "precisions" 0 "cpu      fp16             3        3        0        0" \
  "6 passed, 0 failed, 0 errors (6 cases, 3 models)" "fp16 rtol 0.01 atol 1e-05 scaled_atol 0.01" -- --device cpu --precisions fp32,fp16 "$tmp/zoo"
expect "one model folder" 0 "PASS  tiny_cnn  test_data_set_0" -- --device cpu "$tmp/zoo/tiny_cnn"

# A model.onnx with no data: generated inputs, the plan against the unfused reference plan.
mkdir -p "$tmp/gen/tiny"
cp -L "$tiny_cnn/model.onnx" "$tmp/gen/tiny/"
expect "no data" 0 "PASS  tiny  generated  cpu fp32" -- --device cpu --json "$tmp/gen.json" "$tmp/gen/tiny/model.onnx"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
c = r['cases'][0]
assert r['summary'] == dict(r['summary'], cases=1, passed=1), r['summary']
assert c['reference'] == 'unfused reference plan' and c['data_set'] == 'generated', c
" "$tmp/gen.json" && ok "no data: json" || fail "no data: json"

# A planted wrong output: tiny_cnn's last element (flat index 19 of [2,10]; raw_data ends the TensorProto)
# becomes 100.0f.
out0=$tmp/zoo/tiny_cnn/test_data_set_0/output_0.pb
size=$(stat -c %s "$out0")
printf '\x00\x00\xc8\x42' | dd of="$out0" bs=1 seek=$((size - 4)) conv=notrunc status=none
expect "planted wrong output" 1 "FAIL  zoo/tiny_cnn  test_data_set_0  cpu fp32" \
  "output 'probs': 1 of 20 elements differ; worst at flat index 19: got" ", want 100 (abs error 99." \
  "2 passed, 1 failed, 0 errors (3 cases, 3 models)" -- --device cpu --junit "$tmp/junit.xml" --json "$tmp/report.json" "$tmp/zoo"

# The JUnit XML parses, with 3 testcases, 1 failure naming the output and the numbers.
python3 -c "
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == 'testsuites' and root.get('tests') == '3' and root.get('failures') == '1', root.attrib
cases = root.findall('testsuite/testcase')
assert len(cases) == 3, len(cases)
failures = root.findall('testsuite/testcase/failure')
assert len(failures) == 1 and len(root.findall('testsuite/testcase/error')) == 0
msg = failures[0].get('message')
assert \"output 'probs'\" in msg and 'flat index 19' in msg and 'want 100' in msg, msg
bad = [s for s in root.findall('testsuite') if s.find('testcase/failure') is not None][0]
assert bad.get('name') == 'zoo/tiny_cnn' and bad.get('failures') == '1', bad.attrib
" "$tmp/junit.xml" && ok "junit parses" || { fail "junit parses"; cat "$tmp/junit.xml"; }
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['summary']['failed'] == 1 and r['summary']['passed'] == 2, r['summary']
bad = [c for c in r['cases'] if c['result'] == 'FAIL'][0]
assert bad['worst'] == dict(bad['worst'], output='probs', index=19, want=100), bad
" "$tmp/report.json" && ok "json parses" || fail "json parses"

# tolerance.json beside the model loosens it: the planted error passes.
echo '{"rtol": 0, "atol": 1000}' >"$tmp/zoo/tiny_cnn/tolerance.json"
expect "tolerance.json" 0 "3 passed, 0 failed" -- --device cpu "$tmp/zoo"
rm "$tmp/zoo/tiny_cnn/tolerance.json"
expect "--atol" 0 "3 passed, 0 failed" -- --device cpu --atol 1000 "$tmp/zoo"

# A model that does not load is ERROR with the message; the others still run.
mkdir -p "$tmp/zoo/broken"
head -c 3000 /dev/urandom >"$tmp/zoo/broken/model.onnx"
expect "broken model" 1 "ERROR zoo/broken  load  cpu fp32" "2 passed, 1 failed, 1 errors (4 cases, 4 models)" \
  -- --device cpu "$tmp/zoo"
expect "missing path" 1 "ERROR /nonexistent  load" "does not exist" "PASS  test_abs" \
  -- --device cpu /nonexistent "$tmp/zoo/node/test_abs"

# --device cuda without a usable GPU: exit 1 and one line on stderr, before any model runs.
"$onnxrun" test --device auto "$tmp/zoo/node/test_abs" >"$tmp/auto" 2>&1
if head -1 "$tmp/auto" | grep -q "device cpu"; then
  "$onnxrun" test --device cuda "$tmp/zoo/node/test_abs" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [[ $rc == 1 && $(wc -l <"$tmp/err") == 1 ]] && grep -q "error: --device cuda: " "$tmp/err"; then
    ok "--device cuda without a GPU: $(cat "$tmp/err")"
  else
    fail "--device cuda without a GPU: rc=$rc, stderr: $(cat "$tmp/err")"
  fi
fi

# Usage errors: exit 2 and one line on stderr.
for args in "" "--precisions fp8 $tmp/zoo" "--jobs 0 $tmp/zoo" "--rtol x $tmp/zoo" "--bogus $tmp/zoo"; do
  # shellcheck disable=SC2086
  "$onnxrun" test $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [[ $rc == 2 && $(wc -l <"$tmp/err") == 1 ]]; then ok "usage: '$args': $(cat "$tmp/err")"; else fail "usage: '$args' rc=$rc"; fi
done
"$onnxrun" test --help | grep -q -- "--junit FILE" && ok "--help" || fail "--help"

echo "$failures failures"
exit $((failures > 0))
