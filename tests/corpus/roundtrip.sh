#!/usr/bin/env bash
# jinst roundtrip over one corpus of ../shared/corpus.sh.
#   roundtrip.sh JINST CORPUS_DIR [--deep]
# JINST_CORPUS_SAMPLE=N takes 1 module or jar in N.
# Exit 77 (skipped) when the corpus is not there; fails when it holds no
# class, when any class differs or is rejected.
set -uo pipefail
jinst=$1 dir=$2
shift 2
if [[ ! -d $dir ]]; then
	echo "corpus $dir not present: skipped"
	exit 77
fi
# JINST_CORPUS_SAMPLE=N (scripts/test.sh): 1 module or jar in N, in name order.
inputs=("$dir")
sample=${JINST_CORPUS_SAMPLE:-1}
if [[ $sample =~ ^[1-9][0-9]*$ ]] && ((sample > 1)); then
	mapfile -t all < <(find "$dir" -mindepth 1 -maxdepth 1 -not -name '.*' | LC_ALL=C sort)
	inputs=()
	for i in "${!all[@]}"; do
		((i % sample == 0)) && inputs+=("${all[i]}")
	done
	echo "sample: ${#inputs[@]} of ${#all[@]} modules or jars (1 in $sample, JINST_CORPUS_SAMPLE)"
fi
out=$("$jinst" roundtrip --quiet "$@" "${inputs[@]}")
rc=$?
echo "$out" | tail -n 20
last=$(tail -n 1 <<<"$out")
if [[ $last == "files could not be read"* ]]; then last=$(tail -n 2 <<<"$out" | head -n 1); fi
classes=${last%% classes:*}
if [[ ! $classes =~ ^[0-9]+$ || $classes == 0 ]]; then
	echo "no class found in $dir"
	exit 1
fi
exit $rc
