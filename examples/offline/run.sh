#!/usr/bin/env bash
# Offline instrumentation: the bundled example (examples/hello) packed as
# app.jar, instrumented ahead of time by `jinst instrument`, run without the
# agent with jinst-runtime.jar on the class path, and reported.
source "$(dirname "$0")/../common.sh"
jinst=${JINST:-$(dirname "$(dirname "$agent")")/bin/jinst}
runtime=${JINST_RUNTIME_JAR:-$(dirname "$agent")/jinst-runtime.jar}
[[ -f $runtime ]] || { echo "no $runtime: build jinst first (bash scripts/build.sh build)" >&2; exit 1; }
compile "$examples"/hello/Hello.java
(cd "$OUT"/classes && zip -qr "$OUT"/app.jar .)

echo "== jinst instrument --coverage --trace=counts $OUT/app.jar -o $OUT/out/app.jar"
mkdir -p "$OUT"/out
"$jinst" instrument --coverage --trace=counts "$OUT"/app.jar -o "$OUT"/out/app.jar
echo "== java -cp $OUT/out/app.jar:jinst-runtime.jar -Djinst.out=$OUT/app hello.Hello"
"$java" -cp "$OUT"/out/app.jar:"$runtime" -Djinst.out="$OUT"/app hello.Hello
echo "== $OUT/app.tsv: class, method, descriptor, calls (the most called)"
sort -t$'\t' -k4,4nr "$OUT"/app.tsv | awk 'NR <= 5'
# The coverage data the runtime wrote at exit is reported against the
# original jar: the instrumented classes carry the identity of the classes
# they came from.
if [[ -f $OUT/app.cov ]]; then
	echo "== jinst report $OUT/app.cov --classfiles $OUT/app.jar --html $OUT/site"
	"$jinst" report "$OUT"/app.cov --classfiles "$OUT"/app.jar --sourcefiles "$examples"/hello --name hello \
		--html "$OUT"/site
	"$jinst" report "$OUT"/app.cov --classfiles "$OUT"/app.jar --name hello
	echo "HTML report: $OUT/site/index.html"
else
	echo "== no $OUT/app.cov: the runtime wrote no coverage data"
	exit 1
fi
