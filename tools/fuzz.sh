#!/usr/bin/env bash
# Builds the importer's libFuzzer target (//tests/fuzz:importer_fuzzer, --config=fuzz: clang,
# ASan + UBSan) and runs it for SECONDS (default 120) on a seed corpus: the ONNX conformance models
# (libonnx-testdata's and ONNX 1.23's for opsets 18-24),
# the models shipped in models/, the zoo models under 1 MB, tests/fuzz/regressions and the edge-case models of
# tests/fuzz/make_edge_models.py. Exit 0 when the run ends
# without a crash, timeout, leak or OOM; otherwise the input that did it is left in
# $FUZZ_DIR/artifacts (make it a regression test: tests/fuzz/regressions/README.md).
#
#   tools/fuzz.sh [SECONDS] [extra libFuzzer flags...]
#   FUZZ_DIR=~/fuzz tools/fuzz.sh 3600 -jobs=2 -workers=2   # longer, keeping the corpus it grows
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
shift || true
bazel build --config=fuzz //tests/fuzz:importer_fuzzer || exit 1
fuzzer="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz/importer_fuzzer"
dir=${FUZZ_DIR:-$(mktemp -d)}
mkdir -p "$dir/corpus" "$dir/seeds" "$dir/artifacts"
for f in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
  case_dir=$(dirname "$f")
  cp "$f" "$dir/seeds/$(basename "$(dirname "$case_dir")")_$(basename "$case_dir").onnx"
done
# ONNX 1.23's cases for opsets 18-24 (Attention, RotaryEmbedding, the random ops, ...).
if [[ -f tests/conformance/onnx_1_23_node.tar.xz ]]; then
  rm -rf "$dir/onnx_1_23" && mkdir -p "$dir/onnx_1_23" && tar xJf tests/conformance/onnx_1_23_node.tar.xz -C "$dir/onnx_1_23"
  for f in "$dir"/onnx_1_23/genall/*/model.onnx; do
    cp "$f" "$dir/seeds/onnx123_$(basename "$(dirname "$f")").onnx"
  done
fi
for m in tiny_cnn legacy_ops legacy_opset3 local_functions narrow_qdq ort_contrib_ops ort_quantized_cnn ort_bert_optimized sklearn_ml_ops ort_matmul_nbits ort_bert_quantized; do cp "models/$m/model.onnx" "$dir/seeds/$m.onnx"; done
zoo="$(bazel info bazel-bin 2>/dev/null)/models/zoo"
if [[ -d $zoo ]]; then
  find "$zoo" -name model.onnx -size -1M | while read -r f; do
    cp "$f" "$dir/seeds/zoo_$(basename "$(dirname "$f")").onnx"
  done
fi
cp tests/fuzz/regressions/*.onnx "$dir/seeds/" 2>/dev/null || true
# The ImageDecoder and onnxruntime-genai op cases (tests/*/cases).
for f in tests/*/cases/*/model.onnx; do
  case_dir=$(dirname "$f")
  cp "$f" "$dir/seeds/$(basename "$(dirname "$(dirname "$case_dir")")")_$(basename "$case_dir").onnx"
done
"$(command -v /usr/bin/python3 || command -v python3)" tests/fuzz/make_edge_models.py "$dir/seeds" || echo "note: no edge-case seeds (python3-onnx missing)"
echo "fuzzing for ${seconds}s: $fuzzer, corpus $dir/corpus, $(ls "$dir/seeds" | wc -l) seeds"
# -rss_limit_mb / -malloc_limit_mb: any input that makes one iteration take more memory than this
# is a finding (the harness caps tensors at 4 MiB); -timeout: likewise for a slow iteration.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$fuzzer" -max_total_time="$seconds" -timeout=30 \
  -rss_limit_mb=2560 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 -dict=tests/fuzz/onnx.dict \
  -artifact_prefix="$dir/artifacts/" "$@" "$dir/corpus" "$dir/seeds"
rc=$?
if ((rc != 0)); then
  echo "fuzz: FAILED (rc=$rc); inputs in $dir/artifacts: $(ls "$dir/artifacts")"
else
  echo "fuzz: no crash, timeout, leak or OOM in ${seconds}s"
fi
exit $rc
