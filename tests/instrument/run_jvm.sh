#!/bin/sh
# The JVM test: instrument the compiled test program offline, run it under
# -Xverify:all with the test-only Hooks, and compare the hooks' counts with
# expected.txt (every method listed has exactly those counts; every other
# method was never called). The program's own output must not change.
#   run_jvm.sh JAVA INSTRUMENT_TREE CLASSES HOOKS EXPECTED WORK [MAIN]
set -eu
java=$1 tool=$2 classes=$3 hooks=$4 expected=$5 work=$6 main=${7:-jinsttrace.Main}
rm -rf "$work"
mkdir -p "$work"
"$tool" "$work/out" "$classes" > "$work/figures.txt"
cat "$work/figures.txt"
grep -q '^classes [0-9]*: instrumented [1-9]' "$work/figures.txt"
"$java" -Xverify:all -cp "$classes:$hooks" "$main" > "$work/plain.txt" 2>&1
"$java" -Xverify:all -cp "$work/out:$hooks" "$main" > "$work/run.txt" 2> "$work/stderr.txt" || {
	echo "FAIL: the instrumented program failed"; cat "$work/run.txt" "$work/stderr.txt"; exit 1; }
if grep -v '^OpenJDK.*warning' "$work/stderr.txt" | grep -q .; then
	echo "FAIL: the instrumented program wrote to stderr"; cat "$work/stderr.txt"; exit 1
fi
grep -v '^COUNT ' "$work/run.txt" > "$work/program.txt" || true
grep -v '^OpenJDK.*warning' "$work/plain.txt" > "$work/plain2.txt" || true
if ! cmp -s "$work/program.txt" "$work/plain2.txt"; then
	echo "FAIL: output changed"; diff "$work/plain2.txt" "$work/program.txt"; exit 1
fi
# id -> class method descriptor, then the counts by name
awk -F'\t' 'FNR == NR { if (!/^#/) name[$1] = $2 "\t" $3 "\t" $4; next }
	index($0, "COUNT ") == 1 { split($0, f, " "); print name[f[2]] "\t" f[3] "\t" f[4] "\t" f[5] }' \
	"$work/out/META-INF/jinst/methods.tsv" "$work/run.txt" | LC_ALL=C sort > "$work/counts.txt"
grep -v '^#' "$expected" | LC_ALL=C sort > "$work/expected.txt"
if ! cmp -s "$work/counts.txt" "$work/expected.txt"; then
	echo "FAIL: counts differ (expected < > got)"; diff "$work/expected.txt" "$work/counts.txt"; exit 1
fi
echo "OK: $(wc -l < "$work/counts.txt") methods with the expected counts"
