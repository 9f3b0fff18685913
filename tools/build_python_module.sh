#!/usr/bin/env bash
# Builds the Python module outside Bazel, for any CPython with pybind11 (the module uses the C API
# only): links the given libonnxrun.so and installs onnxrun<EXT_SUFFIX> into OUT_DIR.
#   tools/build_python_module.sh LIBONNXRUN_SO OUT_DIR [PYTHON]
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n 2,4p "$0"; exit 2; }
lib=$(realpath "$1"); out=$2; py=${3:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
read -r py_include ext < <("$py" -c 'import sysconfig as s; print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"))')
pybind_include=$("$py" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || echo /usr/include)
g++ -O2 -std=c++17 -shared -fPIC -fvisibility=hidden -I"$repo/include" -I"$repo" -I"$pybind_include" -I"$py_include" \
  "$repo/python/onnxrun_module.cc" "$repo/python/device_array.cc" "$lib" -Wl,-rpath,"$(dirname "$lib")" \
  -o "$out/onnxrun$ext"
echo "built $out/onnxrun$ext"
