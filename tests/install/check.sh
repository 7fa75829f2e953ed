#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds examples/list_methods
# against it twice: with find_package(jinst) and with pkg-config.
#   check.sh BUILD_DIR SOURCE_DIR WORK_DIR [CC [FLAGS]]
# CC and FLAGS (sanitizer options) are the build's own, so the program links
# with a library built with them.
set -euo pipefail
build=$1 src=$2 work=$3 cc=${4:-cc} flags=${5:-}
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >/dev/null
class=$src/tests/data/classes/main/jinsttest/Features.class
want='guarded(I)I'

cmake -S "$src/examples/list_methods" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$work/cmake" >/dev/null
out=$("$work/cmake/list_methods" "$class")
grep -q "$want" <<<"$out" || { echo "find_package build does not list $want:"; echo "$out"; exit 1; }

export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name jinst.pc)")
# shellcheck disable=SC2086 # flags and pkg-config output are word lists
"$cc" $flags "$src/examples/list_methods/list_methods.c" $(pkg-config --cflags --libs jinst) -o "$work/list_methods_pc"
out=$("$work/list_methods_pc" "$class")
grep -q "$want" <<<"$out" || { echo "pkg-config build does not list $want:"; echo "$out"; exit 1; }
echo "install: find_package and pkg-config builds list $want"
