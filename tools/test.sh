#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every suite, then ends with the plain line
# "N passed, N failed, N skipped" over all of them (gtest cases; a shell test or a fuzz run counts
# as one):
#   1. bazel test (optimised)                          what only runs optimised: the zoo (0.7 GB of
#                                                     models, minutes of CPU), the CUDA/cuDNN
#                                                     kernel tests (their vendor libraries leak by
#                                                     design), the tests tagged "gpu" (they skip
#                                                     without one) and the Python package's test
#                                                     (Debian's unsanitized python3 loads the module)
#   2. --config=asan (ASan + UBSan arithmetic, -O0)  every other test: unit, conformance, bad_input,
#                                                     cli, C API, fuzz regressions, ...
#   3. --config=tsan                                  //tests/concurrency     (TEST_DEEP=1 only)
#   4. tools/fuzz.sh $FUZZ_SECONDS (default 60)       the importer's libFuzzer target (seed 1,
#                                                     at most 150,000 runs: repeatable;
#                                                     TEST_DEEP=1 only)
#   5. tools/install.sh + examples/c_api with CMake    the installed library, header, pkg-config file
#                                                     and Python module work from the install
#   6. examples/serving with Ray Serve from PyPI       one request through a CPU replica (skipped
#                                                     when Ray does not install)
#   7. tools/check_format.sh                          every C++/CUDA source clang-formatted
# Each test runs in one configuration only: compiling is nearly all of the time on a 2-core machine
# (a sanitized test file takes 10-50 s), so a test built twice doubles its cost. Stages 3 and 4
# build the whole tree once more each (tsan; clang for the fuzzer): ~10 and ~15 minutes on such a
# machine, so CI leaves them out (they count as skipped); TEST_DEEP=1 tools/test.sh runs them, as
# does anyone changing the runtime's threading or the importer.
# Extra arguments go to every bazel test.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh || exit 1
trap 'bazel shutdown >/dev/null 2>&1 || true' EXIT

passed=0 failed=0 skipped=0 rc=0

# run_suite NAME BAZEL_FLAGS TARGETS...: runs the targets and adds their cases to the totals. Counts
# come from this invocation's test.xml files (removed first, so a stale file from an earlier run or
# another config never counts); a target that leaves no test.xml counts as one failure.
run_suite() {
  local name=$1 flags=$2 start=$SECONDS
  shift 2
  local logs
  logs=$(bazel info $flags bazel-testlogs 2>/dev/null)
  local t xmls=()
  for t in "$@"; do
    t=${t#//}
    rm -f "$logs/${t/://}/test.xml"
  done
  echo "=== $name: bazel test $flags ($# targets)"
  # --nocache_test_results: the test.xml files were just removed, so every test must run again.
  bazel test $flags --nocache_test_results --test_output=errors "${EXTRA_FLAGS[@]}" -- "$@" || rc=1
  local missing=0
  for t in "$@"; do
    t=${t#//}
    if [[ -f $logs/${t/://}/test.xml ]]; then xmls+=("$logs/${t/://}/test.xml"); else missing=$((missing + 1)); fi
  done
  local counts
  counts=$(awk '
    function done_case() { if (cur != "") { n[cur]++; cur = "" } }
    /<testcase/ { done_case(); cur = ($0 ~ /result="skipped"/ || $0 ~ /status="notrun"/) ? "skip" : "pass";
                  if ($0 ~ /\/>[[:space:]]*$/) done_case() }
    /<skipped/ { if (cur != "") cur = "skip" }
    /<failure|<error/ { if (cur != "") cur = "fail" }
    /<\/testcase>/ { done_case() }
    END { done_case(); printf "%d %d %d\n", n["pass"], n["fail"], n["skip"] }' "${xmls[@]}" /dev/null)
  read -r p f s <<<"$counts"
  f=$((f + missing))
  ((f == 0)) || rc=1
  echo "=== $name: $p passed, $f failed, $s skipped ($((SECONDS - start)) s)"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

EXTRA_FLAGS=("$@")
# The CPU path: every test but the zoo's, the CUDA / cuDNN kernels', the Python package's and those
# tagged "gpu" (see above); the rest run optimised.
cpu_path='tests(//...) except rdeps(//..., //models:zoo)
          except tests(//kernels/cuda/... + //kernels/cudnn/... + //tests/python/...)
          except attr(tags, "[\[ ]gpu[,\]]", tests(//...))'
cpu_path_tests=$(bazel query "$cpu_path" 2>/dev/null)
optimised_tests=$(bazel query "tests(//...) except ($cpu_path)" 2>/dev/null)

run_suite "optimised" "" $optimised_tests
run_suite "asan" "--config=asan" $cpu_path_tests

if [[ ${TEST_DEEP:-0} == 1 ]]; then
  run_suite "tsan" "--config=tsan" //tests/concurrency:concurrent_run_test
  echo "=== fuzz: tools/fuzz.sh ${FUZZ_SECONDS:-60}"
  start=$SECONDS
  # A fixed seed and run count make the fuzz stage repeatable: it replays the same mutations every
  # time (new crashes are for the longer runs by hand, which become regressions).
  if tools/fuzz.sh "${FUZZ_SECONDS:-60}" -seed="${FUZZ_SEED:-1}" -runs="${FUZZ_RUNS:-150000}" 2>&1 | tail -n 25; [[ ${PIPESTATUS[0]} == 0 ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)) rc=1
  fi
  echo "=== fuzz: $((SECONDS - start)) s"
else
  echo "=== tsan, fuzz: skipped (TEST_DEEP=1 tools/test.sh runs them; each builds the tree once more)"
  skipped=$((skipped + 2))
fi

echo "=== install: tools/install.sh, then the CMake example and the Python module from the install"
start=$SECONDS
prefix=$(mktemp -d)
if tools/install.sh "$prefix/usr" &&
   PKG_CONFIG_PATH="$prefix/usr/lib/pkgconfig" cmake -S examples/c_api -B "$prefix/build" >/dev/null &&
   cmake --build "$prefix/build" >/dev/null && "$prefix/build/classify" models/tiny_cnn/model.onnx &&
   [[ "$(PKG_CONFIG_PATH="$prefix/usr/lib/pkgconfig" pkg-config --modversion onnxrun)" == \
      "$("$prefix/usr/bin/onnxrun" --version | head -1 | cut -d' ' -f2)" ]] &&
   PYTHONPATH="$prefix/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
     "import onnxrun; print('python:', onnxrun.Session('models/tiny_cnn/model.onnx').outputs[0]['name'])"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)) rc=1
fi
echo "=== install: $((SECONDS - start)) s"

echo "=== serving: examples/serving/ray_serve_app.py on the CPU, Ray Serve from PyPI, onnxrun from the install"
start=$SECONDS
if /usr/bin/python3 -m venv --system-site-packages "$prefix/ray" >/dev/null &&
   timeout 600 "$prefix/ray/bin/pip" install -q "ray[serve]" >"$prefix/ray.log" 2>&1; then
  if PYTHONPATH="$prefix/usr/lib/python3/dist-packages" timeout 300 "$prefix/ray/bin/python" \
       examples/serving/ray_serve_app.py models/tiny_cnn/model.onnx 2>&1 | grep "same as a direct run"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)) rc=1
  fi
else
  echo "Ray did not install from PyPI here (skipped): $(tail -1 "$prefix/ray.log")"
  skipped=$((skipped + 1))
fi
rm -rf "$prefix"
echo "=== serving: $((SECONDS - start)) s"

echo "=== format: tools/check_format.sh"
if tools/check_format.sh; then passed=$((passed + 1)); else failed=$((failed + 1)) rc=1; fi
echo "=== all suites: $SECONDS s"

echo "$passed passed, $failed failed, $skipped skipped"
exit $rc
