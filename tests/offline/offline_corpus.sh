#!/usr/bin/env bash
# `jinst instrument` over every jar of the corpus (../shared/corpus.sh),
# once per pass: every output class passes HotSpot's verification
# (tests/jvm/verify.sh, zero VerifyError and ClassFormatError), every
# non-class entry is the input's, byte for byte, with its metadata
# (offline_entries.py), every record of every entry is the input's but for
# CRC, sizes and offsets (zip_headers.py), no class fails, and a second run
# writes the same bytes.
#   offline_corpus.sh JINST JAVA_HOME HARNESS JARS_DIR WORK [PASS...]
# PASS: the instrument options of one run (default: --coverage,
# --coverage=counts, --trace=counts, --trace). JINST_CORPUS_SAMPLE=N has
# HotSpot check 1 class in N (default 1: every class; CI samples, see
# scripts/test.sh); instrumenting and the entry checks always take every
# jar. Exit 0 passed, 1 failed, 77 skipped (no corpus or no JDK).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jinst=$1 java_home=$2 harness=$3 jars=$4 work=$5
shift 5
passes=("$@")
((${#passes[@]})) || passes=(--coverage --coverage=counts --trace=counts --trace)
if [[ ! -x $java_home/bin/java ]]; then
	echo "no JDK at $java_home: skipped"
	exit 77
fi
if ! compgen -G "$jars/*.jar" >/dev/null; then
	echo "no jars in $jars (scripts/corpus.sh builds them): skipped"
	exit 77
fi
sample=${JINST_CORPUS_SAMPLE:-1}
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# instrument PASS OUT: one run over every jar; its summary on stdout.
instrument() {
	local start=$SECONDS rc
	"$jinst" instrument "$1" --quiet "$jars"/*.jar -o "$2" >"$2.out" 2>"$2.err"
	rc=$?
	echo "  instrument $1 (status $rc, $((SECONDS - start)) s): $(head -n 1 "$2.out")"
	[[ $rc == 0 ]] || { fail "$1: jinst instrument exited with $rc"; cat "$2.err"; return 1; }
	grep -q '^[0-9]* archives, .*; [1-9][0-9]* classes: [1-9][0-9]* instrumented, .* 0 failed' "$2.out" ||
		{ fail "$1: not every class instrumented or left as it was: $(head -n 1 "$2.out")"; head -n 20 "$2.err"; }
}

for pass in "${passes[@]}"; do
	name=${pass#--}
	name=${name//=/-}
	out=$work/$name
	mkdir -p "$out"
	echo "== $pass"
	instrument "$pass" "$out/tree" || continue
	python3 "$here/offline_entries.py" "$jars" "$out/tree" >"$out/entries.txt" ||
		fail "$pass: the outputs' entries differ from the inputs'"
	grep -m 20 '^DIFF' "$out/entries.txt"
	echo "  entries: $(tail -n 1 "$out/entries.txt")"
	# Every record of every entry the input's but for CRC, sizes, offsets.
	pairs=()
	for j in "$jars"/*.jar; do pairs+=("$j" "$out/tree/${j##*/}"); done
	python3 "$here/zip_headers.py" "${pairs[@]}" >"$out/headers.txt" ||
		fail "$pass: the outputs' records differ from the inputs'"
	grep -m 20 '^DIFF' "$out/headers.txt"
	echo "  records: $(tail -n 1 "$out/headers.txt")"
	# Determinism: the same inputs and options, the same bytes.
	instrument "$pass" "$out/again" || continue
	for j in "$out/tree"/*.jar; do
		cmp -s "$j" "$out/again/${j##*/}" || fail "$pass: ${j##*/} differs between two runs"
	done
	rm -rf "$out/again"
	"$here/../jvm/verify.sh" --java "$java_home" --harness "$harness" --sample "$sample" \
		--original "$jars" "$out/tree" >"$out/verify.txt" 2>"$out/verify.err"
	rc=$?
	grep -E '^(VerifyError|ClassFormatError|other|absent|startup|fatal) ' "$out/verify.txt" | head -n 20
	echo "  verify (1 in $sample): $(tail -n 1 "$out/verify.txt")"
	[[ $rc == 0 ]] || { fail "$pass: HotSpot rejected classes (verify.sh status $rc)"; tail -n 5 "$out/verify.err"; }
	# The trees are large (the whole corpus, instrumented): keep a failed one.
	((fails)) || rm -rf "$out/tree"
done
echo "offline corpus: ${#passes[@]} passes, $fails failures"
((fails == 0))
