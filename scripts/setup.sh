#!/usr/bin/env bash
# Installs what gpuolap needs from Debian packages: with no argument, what
# building and testing need; with `build`, only what building the gpuolap
# command needs (scripts/demo.sh: a first run should not wait for the test
# and fuzzing tools).
# The CUDA toolkit is optional and not installed here: where nvcc is on PATH
# (or in /usr/local/cuda/bin) the build uses it. clang and its runtime
# (libclang-rt-14-dev: libFuzzer, the sanitizers) build the fuzzing
# harnesses of scripts/fuzz.sh.
set -euo pipefail

mode="${1:-all}"
case "$mode" in
  all | build) ;;
  *) echo "setup.sh: unknown mode '$mode' (expected: build, or nothing for build and test)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcli11-dev libtbb-dev libfmt-dev libxxhash-dev
  libboost-dev zlib1g-dev libbrotli-dev libpg-query-dev
)
if [ "$mode" = all ]; then
  packages+=(libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev python3-pip clang libclang-rt-14-dev)
  # The pivot page's browser tests (tests/server/pivot): headless Chromium.
  packages+=(chromium chromium-driver)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "$mode" = build ] && exit 0

# DuckDB, the outside oracle of the SQL tests (tests/sql/differential_duckdb.py),
# from PyPI: Debian 12 has no package of it. Debian's pip refuses to install
# beside the system's Python packages unless told to.
if ! python3 -c 'import duckdb' 2>/dev/null; then
  echo "setup: pip install duckdb" >&2
  python3 -m pip install --quiet --break-system-packages duckdb
fi
# Selenium drives Chromium in the pivot page's tests; pytest runs them.
for pair in selenium:selenium pytest:pytest; do
  if ! python3 -c "import ${pair%%:*}" 2>/dev/null; then
    echo "setup: pip install ${pair#*:}" >&2
    python3 -m pip install --quiet --break-system-packages "${pair#*:}"
  fi
done
