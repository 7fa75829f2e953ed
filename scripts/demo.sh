#!/usr/bin/env bash
# The main job on the bundled example: build jinst, compile examples/hello,
# trace it with the agent (ranked profile, counts, folded stacks), dump one
# of its classes, round-trip its classes and the JDK's java.base, and end
# with a coverage report of the example (summary, HTML, JaCoCo XML).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
bash "$repo/scripts/setup.sh"
echo "== building jinst (Release) into build/"
bash "$repo/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Release
jinst=$build/bin/jinst

echo "== compiling examples/hello"
out=$build/examples/hello
rm -rf "$out" && mkdir -p "$out"
javac -d "$out" "$repo"/examples/hello/*.java

agent=$build/lib/libjinst.so
prof=$build/examples/trace
rm -rf "$prof" && mkdir -p "$prof"
echo "== java -agentpath:libjinst.so=trace=times,include=hello.** hello.Hello"
java -agentpath:"$agent"=trace=times,include=hello.**,format=profile+folded+counts,out="$prof"/hello,log="$prof"/agent.log \
	-cp "$out" hello.Hello
echo "== the ranked profile ($prof/hello.txt)"
cat "$prof/hello.txt"
echo "== exact call counts ($prof/hello.tsv, first 5 lines)"
head -n 5 "$prof/hello.tsv"
echo "== folded stacks for flamegraph.pl or speedscope ($prof/hello.folded, first 5 lines)"
head -n 5 "$prof/hello.folded"

echo "== jinst dump hello/Hello.class (first 40 lines)"
"$jinst" dump "$out/hello/Hello.class" | head -n 40 || true

echo "== jinst roundtrip on the example"
echo -n "default: " && "$jinst" roundtrip "$out"
echo -n "--deep:  " && "$jinst" roundtrip --deep "$out"

base=
bash "$repo/scripts/corpus.sh" >/dev/null 2>&1 || true
if [[ -d ${JINST_CORPUS:-/tmp/jinst-corpus}/jdk17/java.base ]]; then
	base=${JINST_CORPUS:-/tmp/jinst-corpus}/jdk17/java.base
else
	jhome=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
	base=$build/java.base
	[[ -d $base ]] || "$jhome/bin/jimage" extract --dir "$build/jimage" --include 'regex:/java.base/.*' "$jhome/lib/modules"
	[[ -d $base ]] || mv "$build/jimage/java.base" "$base"
fi
echo "== jinst roundtrip on the JDK's java.base ($base)"
echo -n "default: " && "$jinst" roundtrip "$base"
echo -n "--deep:  " && "$jinst" roundtrip --deep "$base"

cov=$build/examples/coverage
rm -rf "$cov" && mkdir -p "$cov"
echo "== java -agentpath:libjinst.so=coverage,include=hello.**,out=$cov/hello hello.Hello"
java -agentpath:"$agent"=coverage,include=hello.**,out="$cov"/hello,log="$cov"/agent.log -cp "$out" hello.Hello >/dev/null
echo "== jinst report $cov/hello.cov --classfiles $out --html $cov/html --xml $cov/hello.xml"
"$jinst" report "$cov/hello.cov" --classfiles "$out" --sourcefiles "$repo/examples/hello" --name hello \
	--html "$cov/html" --xml "$cov/hello.xml"
"$jinst" report "$cov/hello.cov" --classfiles "$out" --name hello
echo "HTML coverage report: $cov/html/index.html"
