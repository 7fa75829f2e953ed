#!/usr/bin/env bash
# The harness in jar mode must see broken classes: the samples of
# tests/jvm/sample (compiled by the build), some broken by break_class.py,
# in the three layouts of a rewritten jar corpus.
#   negative_jars.sh JAVA_HOME HARNESS SAMPLE_CLASSES WORK_DIR
# Exit 77 (skipped) when the JDK is absent.
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
java_home=$1 harness=$2 classes=$3 work=$4
if [[ ! -x $java_home/bin/java ]]; then
	echo "no JDK at $java_home: skipped"
	exit 77
fi
[[ -f $classes/sample/Base.class ]] || { echo "FAIL: no sample classes in $classes"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
zipdir() { # DIR JAR
	python3 -c 'import os, sys, zipfile
src, dst = sys.argv[1:]
with zipfile.ZipFile(dst, "w") as z:
    for root, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, src))' "$1" "$2"
}

# The driver's usage: --help is status 0, a bad call status 2.
"$here/verify.sh" --help | grep -q '^usage: verify.sh' || fail "verify.sh --help"
"$here/verify.sh" --java "$java_home" --bogus x >/dev/null 2>&1; [[ $? == 2 ]] || fail "an unknown option is not status 2"
"$here/verify.sh" --java "$java_home" --harness "$harness" "$classes" >/dev/null 2>&1; [[ $? == 2 ]] || fail "jar mode without --original is not status 2"

rm -rf "$work"
mkdir -p "$work/original" "$work/classes" "$work/broken"
cp -r "$classes/sample" "$work/classes/"
# Gone is in no jar: a dependency missing from the corpus.
rm "$work/classes/sample/Gone.class"
zipdir "$work/classes" "$work/original/sample.jar"
cp -r "$work/classes/sample" "$work/broken/"
brk() { python3 "$here/break_class.py" "$1" "$work/classes/sample/$2.class" "$work/broken/sample/$2.class" ${3:+"$3"} || fail "break_class.py $1 $2"; }
brk strip-frames Branchy sign
brk wrong-load Locals inc
brk bad-modifiers Modifiers twice
brk future-version Later

mkdir -p "$work/as-jar" "$work/as-jar-folder/sample.jar" "$work/as-folder/sample"
zipdir "$work/broken" "$work/as-jar/sample.jar"
cp -r "$work/broken/sample" "$work/as-jar-folder/sample.jar/"
cp -r "$work/broken/sample" "$work/as-folder/sample/"
# And a tree that lacks a class of the original.
mkdir -p "$work/incomplete/sample"
cp -r "$work/classes/sample" "$work/incomplete/sample/"
rm "$work/incomplete/sample/sample/Fine.class"

run() { # NAME EXPECTED_STATUS TREE: the output in $work/NAME.out
	"$here/verify.sh" --java "$java_home" --harness "$harness" --original "$work/original" --show-missing --list-missing \
		"$3" >"$work/$1.out" 2>"$work/$1.err"
	local rc=$?
	echo "--- $1 (status $rc)"
	cat "$work/$1.out"
	[[ $rc == "$2" ]] || fail "$1: status $rc, expected $2"
}
expect() { grep -qE -- "$2" "$work/$1.out" || fail "$1: no line matches: $2"; }
expect_last() {
	local last
	last=$(tail -n 1 "$work/$1.out")
	[[ $last == "$2" ]] || fail "$1: summary is '$last', expected '$2'"
}
# The kinds and classes of the report, unit names left out.
kinds() { grep -vE '^[0-9]+ classes:|^missing-class ' "$work/$1.out" | sed -E 's/^(.*) [^ ]*!([^ !:]*):.*/\1 \2/' | sort; }

# The original corpus as its own rewritten tree: nothing rejected; the two
# classes that need Gone are missing dependencies, SigGone (Gone only in a
# descriptor) is verified all the same.
run original 0 "$work/original"
expect_last original "10 classes: 8 verified (1 with a missing descriptor type), 0 VerifyError, 0 ClassFormatError, 0 UnsupportedClassVersionError, 2 missing dependencies, 0 other, 0 not verified by HotSpot, 0 absent from the tree, 0 skipped"
expect original '^missing-class sample\.Gone \(needed by 3\)$'

want='ClassFormatError sample.Modifiers
UnsupportedClassVersionError sample.Later
VerifyError sample.Branchy
VerifyError sample.Locals
missing sample.ExtendsGone
missing sample.NeedsGone
other sample.SubOfBroken'
for layout in as-jar as-jar-folder as-folder; do
	run "$layout" 1 "$work/$layout"
	got=$(kinds "$layout")
	[[ $got == "$want" ]] || fail "$layout: reported
$got
expected
$want"
	expect "$layout" '^VerifyError [^ ]*!sample\.Branchy: Expecting a stackmap frame at branch target'
	expect "$layout" '^VerifyError [^ ]*!sample\.Locals: Bad local variable type'
	expect "$layout" '^ClassFormatError [^ ]*!sample\.Modifiers: .*illegal modifiers'
	expect "$layout" '^other [^ ]*!sample\.SubOfBroken: VerifyError in supertype sample/Branchy'
	expect "$layout" '^UnsupportedClassVersionError [^ ]*!sample\.Later: .*version 255\.0'
	expect_last "$layout" "10 classes: 3 verified (1 with a missing descriptor type), 2 VerifyError, 1 ClassFormatError, 1 UnsupportedClassVersionError, 2 missing dependencies, 1 other, 0 not verified by HotSpot, 0 absent from the tree, 0 skipped"
done

# A class the rewritten tree lacks is a failure, though all the others pass.
run incomplete 1 "$work/incomplete"
expect incomplete '^absent sample!sample\.Fine: '
expect_last incomplete "10 classes: 7 verified (1 with a missing descriptor type), 0 VerifyError, 0 ClassFormatError, 0 UnsupportedClassVersionError, 2 missing dependencies, 0 other, 0 not verified by HotSpot, 1 absent from the tree, 0 skipped"

((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
echo "all as expected"
