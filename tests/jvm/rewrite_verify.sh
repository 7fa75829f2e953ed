#!/usr/bin/env bash
# End to end: every class of a corpus rewritten by
# `jinst rewrite --frames=recompute` (each StackMapTable dropped and
# computed anew) or `--frames=keep` (every method through the code editor),
# then verified by HotSpot through verify.sh against the original corpus.
#   rewrite_verify.sh JINST JAVA_HOME HARNESS CORPUS_DIR WORK_DIR [keep|recompute]
# CORPUS_DIR: a jimage tree of JAVA_HOME's JDK, or a folder of jars.
# Exit 77 (skipped) when the corpus or the JDK is absent, or when this
# jinst has no `rewrite --frames=recompute`. Fails on any VerifyError,
# ClassFormatError or class missing from the output, and on any class the
# rewriter failed on for another reason than a class missing from the
# corpus (EHIERARCHY: those are written unchanged and counted apart).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jinst=$1 java_home=$2 harness=$3 corpus=$4 work=$5 mode=${6:-recompute}
if [[ ! -x $java_home/bin/java ]]; then
	echo "no JDK at $java_home: skipped"
	exit 77
fi
if [[ ! -d $corpus ]]; then
	echo "corpus $corpus not present: skipped"
	exit 77
fi
if ! "$jinst" rewrite --help 2>/dev/null | grep -q -- '--frames=recompute'; then
	echo "$jinst has no rewrite --frames=recompute: skipped"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
start=$SECONDS
if [[ -d $corpus/java.base ]]; then
	"$jinst" rewrite --frames="$mode" --quiet --jdk "$java_home" "$corpus" -o "$work/tree" >"$work/rewrite.out" 2>&1
else
	"$jinst" rewrite --frames="$mode" --quiet "$corpus"/*.jar -o "$work/tree" >"$work/rewrite.out" 2>&1
fi
rc=$?
echo "rewrite (status $rc, $((SECONDS - start)) s):"
# A class the rewriter fails on is copied unchanged with a warning:
#   jinst rewrite: warning: NAME: REASON (copied unchanged)
failed() { grep ': warning: .*(copied unchanged)$' "$work/rewrite.out"; }
failed | head -n 20
grep -E ' classes: |^[0-9]+ methods rewritten' "$work/rewrite.out"
if [[ ! -d $work/tree ]] || ! grep -qE '; [1-9][0-9]* classes: ' "$work/rewrite.out" ||
	! grep -qE '^[1-9][0-9]* methods rewritten' "$work/rewrite.out"; then
	echo "FAIL: the rewrite wrote nothing"
	exit 1
fi
if failed | grep -qv ': EHIERARCHY: '; then
	echo "FAIL: the rewrite failed on classes for other reasons than missing ones:"
	failed | grep -v ': EHIERARCHY: ' | head -n 20
	exit 1
fi
"$here/verify.sh" --java "$java_home" --harness "$harness" --sample "${JINST_CORPUS_SAMPLE:-1}" \
	--original "$corpus" "$work/tree" >"$work/verify.out"
rc=$?
grep -vE '^(missing-class|not verified by HotSpot) ' "$work/verify.out" | tail -n 40
exit $rc
