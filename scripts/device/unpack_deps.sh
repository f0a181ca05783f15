#!/usr/bin/env bash
# Unpacks the carried Debian packages (.deps/debs, from fetch_deps.sh) into
# .deps/root, where the build finds them and the built programs load them.
# The carried .deps replaces the unpacked one at every device call, so every
# call that builds or runs gpuolap unpacks first.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps/root
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps/root; done
