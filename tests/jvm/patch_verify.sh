#!/usr/bin/env bash
# The code patcher end to end: every method of every class of a corpus gets
# the tracing shape (an insertion outside the first instruction and inside
# every *return) through the code patcher, the code editor where the
# patcher declines, by tests/corpus/patch_check (which also compares the
# two method by method), and HotSpot verifies the result through verify.sh.
#   patch_verify.sh PATCH_CHECK JAVA_HOME HARNESS CORPUS_DIR WORK_DIR [OPTION...]
# OPTIONs go to patch_check (--handler: the trace pass's catch-all too).
# A JDK tree gets `iconst_0; pop` (its boot classes run at start-up and can
# reach no hook class); a jar corpus `sipush N; invokestatic
# jinst/rt/Hooks.enter/exit(I)V`. Exit 77 when the corpus or the JDK is
# absent. Fails when patcher and editor disagree, on any VerifyError,
# ClassFormatError or absent class.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
patch_check=$1 java_home=$2 harness=$3 corpus=$4 work=$5
shift 5
[[ -x $java_home/bin/java ]] || { echo "no JDK at $java_home: skipped"; exit 77; }
[[ -d $corpus ]] || { echo "corpus $corpus not present: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
mode=("$@")
[[ -d $corpus/java.base ]] && mode+=(--pop)
"$patch_check" "${mode[@]}" --out "$work/tree" "$corpus" >"$work/patch.out" 2>&1
rc=$?
tail -n 12 "$work/patch.out"
if [[ $rc != 0 ]]; then
	echo "FAIL: patch_check exited with $rc"
	exit 1
fi
"$here/verify.sh" --java "$java_home" --harness "$harness" --sample "${JINST_CORPUS_SAMPLE:-1}" \
	--original "$corpus" "$work/tree" >"$work/verify.out"
rc=$?
grep -vE '^(missing-class|not verified by HotSpot) ' "$work/verify.out" | tail -n 20
exit $rc
