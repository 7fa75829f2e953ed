#!/usr/bin/env bash
# Runs a folder of test classes edited by edit_check (probes, hooks, timed
# hooks) under -Xverify:all and compares their output with the original's
# (label `jvm`).
#   edit_run.sh EDIT_CHECK JAVAC JAVA CLASSES_DIR MAIN_CLASS MIN_PROBES
set -euo pipefail
check=$1 javac=$2 java=$3 classes=$4 main=$5 min_probes=$6
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$javac" -d "$tmp/hooks" "$here/jinstedit/Calls.java" "$here/jinstedit/Probe.java"
"$java" -Xverify:all -cp "$classes" $main >"$tmp/expected"
fail=0
for mode in probe hooks times edges; do
	flag=; [[ $mode != probe ]] && flag=--$mode
	"$check" $flag --out "$tmp/$mode" "$classes" | tail -n 1
	if ! "$java" -Xverify:all -cp "$tmp/$mode:$tmp/hooks" $main >"$tmp/got.$mode" 2>"$tmp/err.$mode"; then
		echo "FAIL $mode: the edited program failed"; cat "$tmp/err.$mode"; fail=1; continue
	fi
	if ! diff -u "$tmp/expected" "$tmp/got.$mode"; then
		echo "FAIL $mode: output differs"; fail=1
	fi
	cat "$tmp/err.$mode"
done
# Every entry met an exit, normal or exceptional; the probes ran; the
# timed local always held the entry's time.
for mode in hooks times; do
	read -r _ _ enters _ exits _ thrown _ bad < <(grep '^hooks:' "$tmp/err.$mode")
	if [[ -z ${enters:-} || $enters -eq 0 || $enters -ne $((exits + thrown)) || $thrown -eq 0 || $bad -ne 0 ]]; then
		echo "FAIL $mode: enter ${enters:-?} != exit ${exits:-?} + exitThrow ${thrown:-?} (or none thrown, or $bad bad times)"
		fail=1
	fi
done
probes=$(sed -n 's/^probes: //p' "$tmp/err.probe")
if [[ -z $probes || $probes -lt $min_probes ]]; then
	echo "FAIL probe: ${probes:-no} probes ran"; fail=1
fi
[[ $fail == 0 ]] && echo "edited programs verified and ran as the original"
exit $fail
