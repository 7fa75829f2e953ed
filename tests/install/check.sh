#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds examples/list_methods
# against it twice: with find_package(jinst) and with pkg-config.
#   check.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >/dev/null
class=$src/tests/data/classes/main/jinsttest/Features.class
want='guarded(I)I'

cmake -S "$src/examples/list_methods" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
out=$("$work/cmake/list_methods" "$class")
grep -q "$want" <<<"$out" || { echo "find_package build does not list $want:"; echo "$out"; exit 1; }

export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name jinst.pc)")
cc "$src/examples/list_methods/list_methods.c" $(pkg-config --cflags --libs jinst) -o "$work/list_methods_pc"
out=$("$work/list_methods_pc" "$class")
grep -q "$want" <<<"$out" || { echo "pkg-config build does not list $want:"; echo "$out"; exit 1; }
echo "install: find_package and pkg-config builds list $want"
