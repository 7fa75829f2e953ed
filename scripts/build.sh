#!/usr/bin/env bash
# Configures and builds jinst.   build.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
cmake -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)" >/dev/null
