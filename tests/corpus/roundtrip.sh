#!/usr/bin/env bash
# jinst roundtrip over one corpus of ../shared/corpus.sh.
#   roundtrip.sh JINST CORPUS_DIR [--deep]
# Exit 77 (skipped) when the corpus is not there; fails when it holds no
# class, when any class differs or is rejected.
set -uo pipefail
jinst=$1 dir=$2
shift 2
if [[ ! -d $dir ]]; then
	echo "corpus $dir not present: skipped"
	exit 77
fi
out=$("$jinst" roundtrip --quiet "$@" "$dir")
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
