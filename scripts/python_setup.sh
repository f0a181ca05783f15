#!/usr/bin/env bash
# Installs the Python module gpuolap and what its tests need:
#   bash scripts/python_setup.sh
# pip installs scikit-build-core and pybind11 (the build), pyarrow, pandas
# and pytest where missing, then `pip install .` builds the extension
# (only the libraries it links; with CUDA where nvcc is found, as on CI, so
# that the CUDA build of the module is compiled and its gpu engines say why
# they cannot run without a GPU) in build-python/, which is kept, so
# that a later install compiles only what changed (and ccache, where
# installed, serves the rest). Debian's pip refuses to install beside the
# system's Python packages unless told to.
set -euo pipefail
cd "$(dirname "$0")/.."
pip=(python3 -m pip install --quiet --break-system-packages)
missing=()
for pair in scikit_build_core:scikit-build-core pybind11:pybind11 pyarrow:pyarrow pandas:pandas pytest:pytest; do
  python3 -c "import ${pair%%:*}" 2>/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "python_setup: pip install ${missing[*]}" >&2
  "${pip[@]}" "${missing[@]}"
fi
# Without build isolation: the build uses the scikit-build-core and pybind11
# installed above instead of fetching them again into a throwaway environment.
echo "python_setup: pip install . (the gpuolap module)" >&2
start=$(date +%s)
"${pip[@]}" --no-build-isolation .
echo "python_setup: gpuolap module installed in $(( $(date +%s) - start )) s" >&2
