#!/usr/bin/env bash
# Runs the CLI cases of cases.txt against a jinst binary.
#   run.sh JINST WORKDIR
set -u
jinst=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data/classes golden=$here/../golden in=$work/in outdir=$work/out
rm -rf "$in" "$outdir" && mkdir -p "$in" "$outdir"
python3 "$here/make_inputs.py" "$in" || exit 1
(cd "$data/main" && zip -qr "$in/data.jar" .) || exit 1
pass=0 fail=0
while IFS= read -r line; do
	[[ -z $line || $line == \#* ]] && continue
	IFS='|' read -r name status want args <<<"$line"
	name=$(echo $name) status=$(echo $status)
	want=$(sed 's/^ *//; s/ *$//' <<<"$want")
	args=${args//@DATA@/$data}
	args=${args//@IN@/$in}
	args=${args//@GOLDEN@/$golden}
	args=${args//@OUT@/$outdir}
	# shellcheck disable=SC2086
	out=$("$jinst" $args 2>&1)
	rc=$?
	if [[ $rc != "$status" ]]; then
		echo "FAIL $name: exit $rc, expected $status"; echo "$out" | head -5; fail=$((fail + 1))
	elif [[ $out != *"$want"* ]]; then
		echo "FAIL $name: output lacks '$want'"; echo "$out" | head -5; fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done <"$here/cases.txt"
echo "cli: $pass passed, $fail failed"
[[ $fail == 0 ]]
