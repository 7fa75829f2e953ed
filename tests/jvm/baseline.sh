#!/usr/bin/env bash
# An original corpus checked as if it were the rewritten one: HotSpot must
# reject none of its classes.
#   baseline.sh JAVA_HOME HARNESS CORPUS_DIR [ORIGINAL_DIR]
# (ORIGINAL_DIR: the same corpus, for the completeness check)
# Exit 77 (skipped) when the JDK or the corpus is absent; fails when the
# tree holds no class, or on any VerifyError or ClassFormatError.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
java_home=$1 harness=$2 dir=$3 original=${4:-}
if [[ ! -x $java_home/bin/java ]]; then
	echo "no JDK at $java_home: skipped"
	exit 77
fi
if [[ ! -d $dir ]]; then
	echo "corpus $dir not present: skipped"
	exit 77
fi
args=(--java "$java_home" --harness "$harness" --sample "${JINST_CORPUS_SAMPLE:-1}" --list-missing)
[[ -n $original ]] && args+=(--original "$original")
out=$("$here/verify.sh" "${args[@]}" "$dir")
rc=$?
echo "$out" | grep -v '^missing-class' | tail -n 40
echo "$out" | grep '^missing-class' | head -n 10
last=$(tail -n 1 <<<"$out")
if [[ ! $last =~ ^([0-9]+)\ classes:\ ([0-9]+)\ verified ]] || ((BASH_REMATCH[2] == 0)); then
	echo "FAIL: no class verified in $dir"
	exit 1
fi
if [[ $rc != 0 || ! $last =~ \ 0\ VerifyError,\ 0\ ClassFormatError, ]]; then
	echo "FAIL: HotSpot rejected classes of $dir (status $rc)"
	exit 1
fi
exit 0
