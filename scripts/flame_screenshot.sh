#!/usr/bin/env bash
# Makes docs/flame-javac.png, the picture of the flame graph (format=html)
# the docs show: javac compiling a few files under the agent, the page
# opened in headless Chromium with a search, through the test that checks
# the page (agent/tests/flame/flame_check.py --screenshot).
#   scripts/flame_screenshot.sh [BUILD_DIR [JAVA_HOME]]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
home=${2:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
python3 "$repo/agent/tests/flame/flame_check.py" "$home" "$build/lib/libjinst.so" "$build/bin/test_trace_flame" \
	"$repo/tests/jvm/programs/jinsttest" "$build/flame-screenshot" --screenshot "$repo/docs/flame-javac.png"
