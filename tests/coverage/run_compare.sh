#!/usr/bin/env bash
# The coverage core against JaCoCo 0.8.6: probe counts and analyses of
# jinst (cov_dump) and JaCoCo (peer/CovPeer.java) over javac- and
# ecj-compiled fixtures and a deterministic sample of Debian's jars, first
# without filters (must agree exactly), then with them (figures, and the
# minimums of issue 14). Exit 77 (skip) without JaCoCo or a JDK.
#
#   run_compare.sh COV_DUMP SRC_DIR WORK_DIR
set -euo pipefail
dump=$1 src=$2 work=$3
share=/usr/share/java
cp="$share/org.jacoco.core.jar:$share/asm.jar:$share/asm-commons.jar:$share/asm-tree.jar"
for j in org.jacoco.core asm asm-tree; do
	[[ -f $share/$j.jar ]] || { echo "skip: $share/$j.jar missing (scripts/setup.sh)"; exit 77; }
done
command -v javac >/dev/null || { echo "skip: no javac"; exit 77; }
rm -rf "$work" && mkdir -p "$work"/peer "$work"/fx/javac "$work"/fx/nodebug "$work"/fx/ecj "$work"/fx/ecj14 "$work"/jars
javac -nowarn -d "$work/peer" -cp "$cp" "$src/peer/CovPeer.java"
fx=("$src/fixtures/Flow.java" "$src/fixtures/Shapes.java" "$src/fixtures/Modern.java")
# JaCoCo 0.8.6 reads class files up to Java 16.
javac -nowarn --release 16 -d "$work/fx/javac" "${fx[@]}"
javac -nowarn -g:none --release 16 -d "$work/fx/nodebug" "${fx[@]}"
if [[ -f $share/ecj.jar ]]; then
	ecj=(java -cp "$share/ecj.jar" org.eclipse.jdt.internal.compiler.batch.Main -nowarn)
	"${ecj[@]}" -11 -d "$work/fx/ecj" "$src/fixtures/Flow.java"
	"${ecj[@]}" -1.4 -d "$work/fx/ecj14" "$src/fixtures/Old.java"
fi
find "$work/fx" -name '*.class' | LC_ALL=C sort > "$work/list"
# Every k-th class of each jar, k chosen for about 100 classes a jar.
for j in commons-lang3 rhino xalan2 guava h2; do
	[[ -f $share/$j.jar ]] || continue
	mkdir -p "$work/jars/$j"
	unzip -Z1 "$share/$j.jar" | grep '\.class$' | grep -v 'module-info\.class$' | LC_ALL=C sort > "$work/all"
	n=$(wc -l < "$work/all")
	k=$(( n / 100 > 1 ? n / 100 : 1 ))
	awk -v k="$k" 'NR % k == 0' "$work/all" > "$work/some"
	(cd "$work/jars/$j" && xargs -a "$work/some" unzip -qo "$share/$j.jar")
	sed "s|^|$work/jars/$j/|" "$work/some" >> "$work/list"
	echo "$j: $n classes, every $k-th"
done
rc=0
java -cp "$cp:$work/peer" CovPeer "$work/list" "$work/jacoco-core.txt" "$work/jacoco-filters.txt"
"$dump" "$work/list" > "$work/jinst-core.txt"
"$dump" --filters "$work/list" > "$work/jinst-filters.txt"
echo "== without filters"
python3 "$src/compare.py" "$work/jinst-core.txt" "$work/jacoco-core.txt" \
	--min-probes 100 --min-lines 100 --min-classes 100 || rc=1
echo "== with filters"
python3 "$src/compare.py" "$work/jinst-filters.txt" "$work/jacoco-filters.txt" \
	--min-probes 100 --min-lines 99.9 --min-classes 99.5 || rc=1
# Hit counts of 1 for the executed probes must give the booleans' counters.
"$dump" --counts "$work/list" > "$work/jinst-counts.txt"
if ! cmp -s "$work/jinst-core.txt" "$work/jinst-counts.txt"; then
	echo "hit counts give other counters than booleans"
	rc=1
fi
exit $rc
