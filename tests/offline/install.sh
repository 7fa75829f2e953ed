#!/usr/bin/env bash
# The installed package runs code instrumented ahead of time: cmake
# --install into a fresh prefix puts jinst-runtime.jar beside libjinst.so,
# and examples/offline/run.sh, with the installed jinst and that jar alone,
# prints fib's exact count.
#   install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
agent=$(find "$work/prefix" -name libjinst.so)
[[ -n $agent ]] || { echo "FAIL: no libjinst.so installed"; exit 1; }
lib=$(dirname "$agent")
[[ -f $lib/jinst-runtime.jar ]] || { echo "FAIL: no jinst-runtime.jar beside $agent: $(ls "$lib")"; exit 1; }
# The listing whole first: grep -q stopping early would fail unzip under pipefail.
listing=$(unzip -l "$lib/jinst-runtime.jar")
grep -q 'jinst/rt/Hooks.class' <<<"$listing" || { echo "FAIL: the jar lacks jinst/rt/Hooks"; exit 1; }
out=$(OUT=$work/example JINST=$work/prefix/bin/jinst JINST_AGENT=$agent JINST_RUNTIME_JAR= \
	bash "$src/examples/offline/run.sh" 2>&1)
echo "$out"
grep -qP '^hello/Hello\tfib\t\(I\)I\t21891$' <<<"$out" || { echo "FAIL: no exact count of fib"; exit 1; }
echo "installed: $lib/libjinst.so and $lib/jinst-runtime.jar"
