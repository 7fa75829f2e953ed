#!/usr/bin/env bash
# Runs the editor's cases edited by edit_check under -Xverify:all and
# compares their output with the original's (label `jvm`).
#   edit_run.sh EDIT_CHECK JAVAC JAVA CLASSES_DIR
set -euo pipefail
check=$1 javac=$2 java=$3 classes=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$javac" -d "$tmp/hooks" "$here/jinst/Hooks.java" "$here/jinst/Probe.java"
"$java" -Xverify:all -cp "$classes" jinstedit.EditCases >"$tmp/expected"
fail=0
for mode in probe hooks; do
	flag=; [[ $mode == hooks ]] && flag=--hooks
	"$check" $flag --out "$tmp/$mode" "$classes" | tail -n 1
	if ! "$java" -Xverify:all -cp "$tmp/$mode:$tmp/hooks" jinstedit.EditCases >"$tmp/got.$mode" 2>"$tmp/err.$mode"; then
		echo "FAIL $mode: the edited program failed"; cat "$tmp/err.$mode"; fail=1; continue
	fi
	if ! diff -u "$tmp/expected" "$tmp/got.$mode"; then
		echo "FAIL $mode: output differs"; fail=1
	fi
	cat "$tmp/err.$mode"
done
# Every entry met an exit, normal or exceptional; the probes ran.
read -r _ _ enters _ exits _ thrown < <(grep '^hooks:' "$tmp/err.hooks")
if [[ -z ${enters:-} || $enters -eq 0 || $enters -ne $((exits + thrown)) || $thrown -eq 0 ]]; then
	echo "FAIL hooks: enter ${enters:-?} != exit ${exits:-?} + exitThrow ${thrown:-?} (or none thrown)"; fail=1
fi
probes=$(sed -n 's/^probes: //p' "$tmp/err.probe")
if [[ -z $probes || $probes -lt 500 ]]; then  # ~300 probe sites, loops run some many times
	echo "FAIL probe: ${probes:-no} probes ran"; fail=1
fi
[[ $fail == 0 ]] && echo "edited programs verified and ran as the original"
exit $fail
