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

# examples/custom_pass: a pass of its own with the trace pass over a jar,
# built against the installed jinst::instrument and with pkg-config
# jinst-instrument; HotSpot must verify every class it writes.
java_home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
mkdir -p "$work/jars" "$work/out"
(cd "$src/tests/data/classes/main" && "$java_home/bin/jar" cf "$work/jars/features.jar" .)
cmake -S "$src/examples/custom_pass" -B "$work/cp" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$work/cp" >/dev/null
# shellcheck disable=SC2086 # flags and pkg-config output are word lists
"$cc" $flags "$src/examples/custom_pass/custom_pass.c" "$src/examples/custom_pass/athrows.c" \
	$(pkg-config --cflags --libs jinst-instrument jinst-archive) -pthread -o "$work/custom_pass_pc"
"$work/custom_pass_pc" "$work/jars/features.jar" "$work/pc.jar" >/dev/null
"$work/cp/custom_pass" "$work/jars/features.jar" "$work/out/features.jar" | tee "$work/custom_pass.txt"
cmp -s "$work/pc.jar" "$work/out/features.jar" || { echo "the two builds of custom_pass wrote different jars"; exit 1; }
grep -qE '^[0-9]+ classes: [1-9][0-9]* instrumented, 0 left alone' "$work/custom_pass.txt" ||
	{ echo "custom_pass instrumented no class"; exit 1; }
grep -qE '^[1-9][0-9]* methods throw, [1-9][0-9]* athrow instructions' "$work/custom_pass.txt" ||
	{ echo "custom_pass found no athrow"; exit 1; }
# both passes' calls, in the VM's disassembler's words
(cd "$work" && mkdir -p x && cd x && "$java_home/bin/jar" xf ../out/features.jar)
"$java_home/bin/javap" -c -p -cp "$work/x" jinsttest.Features >"$work/javap.txt"
grep -q 'invokestatic .*Method jinst/rt/Hooks.called:(I)V' "$work/javap.txt" || { echo "no trace call"; exit 1; }
grep -q 'invokestatic .*Method Throws.thrown:(I)V' "$work/javap.txt" || { echo "no athrows call"; exit 1; }
bash "$src/tests/jvm/verify.sh" --java "$java_home" --original "$work/jars" "$work/out" | tee "$work/verify.txt"
grep -qE '^[1-9][0-9]* classes: [1-9][0-9]* verified, 0 VerifyError, 0 ClassFormatError' "$work/verify.txt" ||
	{ echo "HotSpot does not verify what custom_pass wrote"; exit 1; }
echo "install: custom_pass (find_package and pkg-config) instruments and HotSpot verifies"
