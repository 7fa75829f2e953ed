#!/usr/bin/env bash
# The classes test_infer rewrites, run by the JVM with every class verified.
#   jvm_infer.sh TEST_INFER CLASSES_DIR JAVA
# infer/Jsr (version 49, subroutines inlined; once more with its frames
# recomputed and claiming version 51, for the type checker) and infer/Gen
# (version 52, written by ASM without frames; its frames recomputed, its dead
# code patched) and Fin (ecj's Java 1.4 finally blocks, inlined, with frames,
# claiming version 51) must verify and print what the originals print. Exit 77 (skipped) without a java.
set -uo pipefail
test_infer=$1 classes=$2 java=${3:-java}
if ! command -v "$java" >/dev/null 2>&1; then
	echo "no java: skipped"
	exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/infer" "$out/v51/infer"
"$test_infer" "$classes" "$out" >/dev/null || { echo "test_infer failed"; exit 1; }
fail=0
run() {
	local cp=$1 cls=$2 expect=$3 got
	got=$("$java" -Xverify:all -cp "$cp" "$cls" 2>&1)
	if [[ $got == "$expect" ]]; then
		echo "ok   $cls"
	else
		echo "FAIL $cls: expected $(tr '\n' ' ' <<<"$expect"), got:"
		echo "$got" | head -20
		fail=1
	fi
}
run "$out" infer.Jsr $'1\n6\n10211213'
run "$out/v51" infer.Jsr $'1\n6\n10211213'
run "$out" infer.Gen 6
# ecj's jsr code (version 48), inlined with frames and claiming version 51.
expect=$("$java" -cp "$classes/../jsr" Fin 2>&1)
if [[ -z $expect ]]; then echo "FAIL the original Fin prints nothing"; fail=1; fi
run "$out/v51" Fin "$expect"
exit $fail
