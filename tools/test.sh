#!/usr/bin/env bash
# Installs dependencies, builds everything, runs every test (unit, conformance, examples, CLI), and
# ends with the plain line "N passed, N failed, N skipped" (gtest cases; a shell test counts as one).
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh || exit 1
trap 'bazel shutdown >/dev/null 2>&1 || true' EXIT

bazel test //... --test_output=errors "$@"
rc=$?

# Count test cases from the XML of the test targets that exist now (bazel-testlogs keeps stale XML
# of deleted targets, so do not glob it).
xmls=()
for t in $(bazel query 'tests(//...)' 2>/dev/null); do
  t=${t#//}
  f="bazel-testlogs/${t/://}/test.xml"
  [[ -f $f ]] && xmls+=("$f")
done
awk '
  function done_case() { if (cur != "") { n[cur]++; cur = "" } }
  /<testcase/ { done_case(); cur = ($0 ~ /result="skipped"/ || $0 ~ /status="notrun"/) ? "skip" : "pass";
                if ($0 ~ /\/>[[:space:]]*$/) done_case() }
  /<skipped/ { if (cur != "") cur = "skip" }
  /<failure|<error/ { if (cur != "") cur = "fail" }
  /<\/testcase>/ { done_case() }
  END { done_case(); printf "%d passed, %d failed, %d skipped\n", n["pass"], n["fail"], n["skip"] }' \
  "${xmls[@]}" /dev/null
exit $rc
