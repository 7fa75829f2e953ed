#!/usr/bin/env bash
# Runs every test: a normal build, an ASan + UBSan build, and each libFuzzer
# target for a bounded time. Ends with "N passed, N failed".
# The heaviest corpus checks take a sample (1 class, module or jar in
# JINST_CORPUS_SAMPLE: 4 in the normal build, 16 under the sanitizers; see
# tests/jvm/README.md); scripts/test-full.sh runs them over every class.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
fuzz_seconds=${JINST_FUZZ_SECONDS:-30}
sample=${JINST_CORPUS_SAMPLE:-4} sample_sanitized=${JINST_CORPUS_SAMPLE:-16}
passed=0 failed=0

count_ctest() { # log
	local line p t
	line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$1" | tail -n 1)
	[[ -n $line ]] || { failed=$((failed + 1)); return; }
	t=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
	p=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
	passed=$((passed + t - p))
	failed=$((failed + p))
}

run_suite() { # name build_dir corpus_sample cmake_args...
	local name=$1 dir=$2 sample=$3
	shift 3
	echo "== $name: build in $dir"
	if ! bash scripts/build.sh "$dir" "$@"; then
		echo "== $name: BUILD FAILED"
		failed=$((failed + 1))
		return
	fi
	echo "== $name: ctest (corpus sample 1 in $sample)"
	(cd "$dir" && JINST_CORPUS_SAMPLE=$sample ctest --output-on-failure -j "$(nproc)") 2>&1 | tee "$dir/ctest.log" | grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|Failed|\*\*\*' || true
	count_ctest "$dir/ctest.log"
}

bash scripts/setup.sh || exit 1
echo "== corpora"
bash scripts/corpus.sh || echo "corpus: not built, corpus tests will be skipped"

start=$SECONDS
run_suite "default" build "$sample"
# The sanitized build at -O1, as AddressSanitizer's authors advise: its
# checks are the same, and its suite took 820 s here against 975 s at -O0.
run_suite "asan+ubsan" build-asan "$sample_sanitized" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" \
	-DJINST_ENABLE_ASAN=ON -DJINST_ENABLE_UBSAN=ON

# One fuzzer per core at a time (each is one process); each prints its
# report when it ends, and a failure its stack and the input itself, so a
# run on a machine that is gone can still be reproduced:
#   base64 -d >crash <<'.' ... .   then   build-fuzz/bin/NAME crash
fuzz_one() { # bin scratch: exit status 0 passed
	local bin=$1 scratch=$2 name
	name=$(basename "$bin")
	if (cd "$scratch" && "$repo/$bin" -max_total_time="$fuzz_seconds" -print_final_stats=0 "$scratch" \
		"$repo/tests/fuzz/corpus/$name" >"$scratch.log" 2>&1); then
		echo "fuzz $name: ok ($(grep -Eo 'Done [0-9]+ runs' "$scratch.log" | tail -n 1))"
		return 0
	fi
	echo "fuzz $name: FAILED"
	grep -m 1 -A 30 -E '==[0-9]+==ERROR|check failed|runtime error' "$scratch.log" || tail -n 40 "$scratch.log"
	for crash in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-*; do
		[[ -f $crash ]] || continue
		echo "input $(basename "$crash") ($(stat -c %s "$crash") bytes), base64:"
		base64 -w 76 "$crash" | head -n 400
	done
	return 1
}

echo "== fuzzers (${fuzz_seconds}s each, $(nproc) at a time)"
# The fuzzers alone (tests/fuzz/fuzz_NAME.c): the rest of a clang build
# would be a third build of every test binary, which nothing here runs.
fuzzers=()
for f in tests/fuzz/fuzz_*.c; do
	[[ $f == */fuzz_replay.c ]] || fuzzers+=("$(basename "$f" .c)")
done
if cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DJINST_BUILD_FUZZERS=ON >/dev/null &&
	cmake --build build-fuzz -j "$(nproc)" --target "${fuzzers[@]}" >/dev/null; then
	fuzz_out=$(mktemp -d)
	running=0 i=0
	for name in "${fuzzers[@]}"; do
		bin=build-fuzz/bin/$name
		i=$((i + 1))
		scratch=$(mktemp -d)
		(fuzz_one "$bin" "$scratch" >"$fuzz_out/$i.out" 2>&1; echo $? >"$fuzz_out/$i.rc"; rm -rf "$scratch" "$scratch.log") &
		running=$((running + 1))
		if ((running >= $(nproc))); then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
	for ((k = 1; k <= i; k++)); do
		cat "$fuzz_out/$k.out"
		if [[ $(cat "$fuzz_out/$k.rc" 2>/dev/null) == 0 ]]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	done
	rm -rf "$fuzz_out"
else
	echo "fuzz: BUILD FAILED"
	failed=$((failed + 1))
fi
echo "== done in $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
((failed == 0))
