#!/usr/bin/env bash
# --explain=json validates against docs/explain.schema.json (with python3-jsonschema, not our code),
# its summary agrees with its steps, and --explain=dot has one cluster per step, for every model given.
# Args: ONNXRUN SCHEMA MODEL...
set -euo pipefail
onnxrun=$1 schema=$2
shift 2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
for model in "$@"; do
  "$onnxrun" --explain=json "$model" >"$tmp/plan.json"
  /usr/bin/python3 - "$schema" "$tmp/plan.json" <<'PY'
import collections, json, sys
import jsonschema
schema, plan = (json.load(open(p)) for p in sys.argv[1:3])
jsonschema.validate(plan, schema)
kinds = collections.Counter(s["kind"] for s in plan["steps"])
for kind, count in plan["summary"]["steps"].items():
    assert kinds[kind] == count, (kind, kinds[kind], count)
assert [s["index"] for s in plan["steps"]] == list(range(len(plan["steps"])))
PY
  steps=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$tmp/plan.json")
  "$onnxrun" --explain=dot "$model" >"$tmp/plan.dot"
  head -1 "$tmp/plan.dot" | grep -q '^digraph plan {$'
  clusters=$(grep -c 'subgraph cluster_' "$tmp/plan.dot")
  [[ $clusters == "$steps" ]] || { echo "$model: $clusters clusters for $steps steps"; exit 1; }
  echo "ok $model: $steps steps"
done
