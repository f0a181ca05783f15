#!/usr/bin/env bash
# Downloads the Debian packages gpuolap builds against into .deps/debs, for a
# GPU machine that reaches no package registry (the device machine): they
# travel with the working tree and scripts/device/build.sh unpacks them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps/debs
cd .deps/debs
apt-get download nlohmann-json3-dev libcli11-dev libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 \
  libfmt-dev libfmt9 libxxhash-dev libxxhash0 libgtest-dev \
  libcpp-httplib-dev libcpp-httplib0.11 libpg-query-dev libssl-dev libssl3 zlib1g-dev zlib1g libbrotli-dev libbrotli1 \
  libboost1.74-dev 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
ls
