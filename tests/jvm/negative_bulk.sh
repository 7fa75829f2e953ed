#!/usr/bin/env bash
# At scale: every method of a whole real jar (guava.jar) and of a whole JDK
# module (jdk.compiler) loses its StackMapTable; every class that had one
# (version 51 or later) must be reported as rejected by HotSpot, none may
# pass as verified.
#   negative_bulk.sh JAVA_HOME HARNESS JDK_TREE JARS_DIR WORK_DIR
# JDK_TREE: the corpus tree extracted from JAVA_HOME (jimage layout).
# Exit 77 (skipped) when the JDK or the corpus is absent.
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
java_home=$1 harness=$2 jdk_tree=$3 jars=$4 work=$5
if [[ ! -x $java_home/bin/java ]]; then
	echo "no JDK at $java_home: skipped"
	exit 77
fi
if [[ ! -d $jdk_tree/jdk.compiler || ! -f $jars/guava.jar ]]; then
	echo "corpus ($jdk_tree/jdk.compiler, $jars/guava.jar) not present: skipped"
	exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NAME ORIGINAL_DIR TREE: TREE/* were made by strip-all, the names
# of the stripped classes are in $work/NAME.stripped.
check() {
	local name=$1 original=$2 tree=$3
	"$here/verify.sh" --java "$java_home" --harness "$harness" --original "$original" "$tree" \
		>"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	local n
	n=$(wc -l <"$work/$name.stripped")
	echo "--- $name: $n classes stripped of their frames (status $rc)"
	tail -n 1 "$work/$name.out"
	[[ $rc == 1 ]] || fail "$name: status $rc, expected 1"
	((n > 100)) || fail "$name: only $n classes had frames"
	# Rejected: its own VerifyError, or one of a supertype.
	grep -E '^(VerifyError|other) ' "$work/$name.out" | sed -E 's/^[^ ]+ [^!]*!([^:]*):.*/\1/' | sort >"$work/$name.rejected"
	local passed
	passed=$(sort "$work/$name.stripped" | comm -23 - "$work/$name.rejected")
	[[ -z $passed ]] || fail "$name: stripped, yet not rejected: $(head -n 5 <<<"$passed")"
	local odd
	odd=$(grep -vE '^(VerifyError [^ ]+: |other [^ ]+: VerifyError in supertype |[0-9]+ classes: )' "$work/$name.out" | head -n 5)
	[[ -z $odd ]] || fail "$name: unexpected lines: $odd"
}

rm -rf "$work"
mkdir -p "$work/jar-original" "$work/jar-src" "$work/jar-tree" "$work/jdk-original" "$work/jdk-tree"
ln -s "$(cd "$jars" && pwd)/guava.jar" "$work/jar-original/guava.jar"
(cd "$work/jar-src" && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(".")' "$jars/guava.jar") ||
	{ echo "FAIL: cannot unpack guava.jar"; exit 1; }
python3 "$here/break_class.py" strip-all "$work/jar-src" "$work/jar-tree/guava.jar" >"$work/jar.stripped" ||
	{ echo "FAIL: strip-all guava.jar"; exit 1; }
check jar "$work/jar-original" "$work/jar-tree"

ln -s "$(cd "$jdk_tree" && pwd)/jdk.compiler" "$work/jdk-original/jdk.compiler"
python3 "$here/break_class.py" strip-all "$jdk_tree/jdk.compiler" "$work/jdk-tree/jdk.compiler" >"$work/jdk.stripped" ||
	{ echo "FAIL: strip-all jdk.compiler"; exit 1; }
check jdk "$work/jdk-original" "$work/jdk-tree"

((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
echo "all as expected"
