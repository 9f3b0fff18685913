#!/usr/bin/env bash
# Installs onnxrun under PREFIX, built optimised with Bazel:
#   PREFIX/bin/onnxrun                          the command
#   PREFIX/lib/libonnxrun.so                    the C API (include/onnxrun/onnxrun_c.h)
#   PREFIX/include/onnxrun/onnxrun_c.h
#   PREFIX/lib/pkgconfig/onnxrun.pc             pkg-config: -lonnxrun, the include folder, an rpath
#   PREFIX/lib/python3/dist-packages/onnxrun.so the Python module (`import onnxrun`)
# Usage: tools/install.sh PREFIX   (then e.g. PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cmake -S examples/c_api ...)
set -euo pipefail
[[ $# == 1 ]] || { sed -n 2,9p "$0"; exit 2; }
prefix=$(realpath -m "$1")
cd "$(dirname "$0")/.."
bazel build -c opt //cli:onnxrun //runtime:libonnxrun.so //python:onnxrun.so
bin=$(bazel info -c opt bazel-bin)
install -d "$prefix/bin" "$prefix/lib/pkgconfig" "$prefix/include/onnxrun" "$prefix/lib/python3/dist-packages"
install -m 755 "$bin/cli/onnxrun" "$prefix/bin/onnxrun"
install -m 755 "$bin/runtime/libonnxrun.so" "$prefix/lib/libonnxrun.so"
install -m 644 include/onnxrun/onnxrun_c.h "$prefix/include/onnxrun/onnxrun_c.h"
install -m 755 "$bin/python/onnxrun.so" "$prefix/lib/python3/dist-packages/onnxrun.so"
version=$(sed -n 's/.*kOnnxrunVersion\[\] = "\(.*\)";/\1/p' runtime/version.h)
cat >"$prefix/lib/pkgconfig/onnxrun.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: onnxrun
Description: ONNX importer and executor for NVIDIA GPUs (cuDNN fused graphs) and the CPU; C API
Version: $version
Libs: -L\${libdir} -lonnxrun -Wl,-rpath,\${libdir}
Cflags: -I\${includedir}
EOF
echo "installed onnxrun in $prefix"
