#!/usr/bin/env bash
# "Insert everywhere", end to end: every method of every class of a
# corpus edited through the code editor with a stack-neutral insertion before
# every instruction (kept and derived frames only, no hierarchy), written out
# by tests/corpus/edit_check, then verified by HotSpot through verify.sh.
#   edit_verify.sh EDIT_CHECK JAVA_HOME HARNESS CORPUS_DIR WORK_DIR
# A JDK tree gets `iconst_0; pop` (its boot classes run at start-up and can
# reach no probe class); a jar corpus `sipush N; invokestatic jinstedit/Probe.probe(I)V`.
# Exit 77 when the corpus or the JDK is absent. Fails when any method fails
# to edit (other than ETOOLARGE: code that would pass 65,535 bytes is
# refused by design), on any VerifyError, ClassFormatError or absent class.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
edit_check=$1 java_home=$2 harness=$3 corpus=$4 work=$5
[[ -x $java_home/bin/java ]] || { echo "no JDK at $java_home: skipped"; exit 77; }
[[ -d $corpus ]] || { echo "corpus $corpus not present: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
mode=()
[[ -d $corpus/java.base ]] && mode=(--pop)
"$edit_check" "${mode[@]}" --out "$work/tree" "$corpus" >"$work/edit.out" 2>&1
tail -n 12 "$work/edit.out"
summary=$(tail -n 1 "$work/edit.out")
if [[ ! $summary =~ ,\ 0\ failed\; || ! $summary =~ ^[0-9]+\ classes.*0\ not\ written ]]; then
	echo "FAIL: the editor failed on some methods or classes"
	exit 1
fi
"$here/verify.sh" --java "$java_home" --harness "$harness" --sample "${JINST_CORPUS_SAMPLE:-1}" \
	--original "$corpus" "$work/tree" >"$work/verify.out"
rc=$?
grep -vE '^(missing-class|not verified by HotSpot) ' "$work/verify.out" | tail -n 20
exit $rc
