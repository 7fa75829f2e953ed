#!/usr/bin/env bash
# The harness in --patch-module mode must see broken JDK classes: real
# classes of JAVA_HOME's own image, broken by break_class.py, patched into
# java.base (boot loader) and java.sql (platform loader).
#   negative_jdk.sh JAVA_HOME HARNESS WORK_DIR
# Exit 77 (skipped) when the JDK is absent.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
java_home=$1 harness=$2 work=$3
if [[ ! -x $java_home/bin/java || ! -x $java_home/bin/jimage ]]; then
	echo "no JDK with jimage at $java_home: skipped"
	exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run NAME EXPECTED_STATUS TREE [verify.sh options]: the output in $work/NAME.out
run() {
	local name=$1 want=$2 tree=$3
	shift 3
	"$here/verify.sh" --java "$java_home" --harness "$harness" "$@" "$tree" >"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	echo "--- $name (status $rc)"
	cat "$work/$name.out"
	[[ $rc == "$want" ]] || fail "$name: status $rc, expected $want"
}
expect() { # NAME REGEX: a line of NAME's output matches
	grep -qE -- "$2" "$work/$1.out" || fail "$1: no line matches: $2"
}
expect_last() { # NAME TEXT: the summary line is exactly TEXT
	local last
	last=$(tail -n 1 "$work/$1.out")
	[[ $last == "$2" ]] || fail "$1: summary is '$last', expected '$2'"
}

rm -rf "$work"
mkdir -p "$work/image"
"$java_home/bin/jimage" extract --dir "$work/image" \
	--include 'regex:/java\.base/java/util/(ArrayList|Stack|concurrent/Exchanger)\.class|/java\.sql/java/sql/Timestamp\.class' \
	"$java_home/lib/modules" || { echo "FAIL: jimage extract"; exit 1; }
mkdir -p "$work/good" "$work/broken" "$work/startup"
cp -r "$work/image/." "$work/good/"
cp -r "$work/image/." "$work/broken/"
brk() { python3 "$here/break_class.py" "$1" "$work/image/$2" "$3/$2" || fail "break_class.py $1 $2"; }
# Exchanger, Stack and Timestamp are not used before the harness starts.
brk strip-frames java.base/java/util/concurrent/Exchanger.class "$work/broken"
brk bad-modifiers java.base/java/util/Stack.class "$work/broken"
brk strip-frames java.sql/java/sql/Timestamp.class "$work/broken"
# ArrayList is: the JVM itself must refuse to start.
mkdir -p "$work/startup/java.base/java/util"
brk strip-frames java.base/java/util/ArrayList.class "$work/startup"

# The unbroken copies, patched in, all pass (and all the original's
# classes are there).
run good 0 "$work/good" --original "$work/image"
expect_last good "4 classes: 4 verified, 0 VerifyError, 0 ClassFormatError, 0 UnsupportedClassVersionError, 0 missing dependencies, 0 other, 0 not verified by HotSpot, 0 absent from the tree, 0 skipped"

# Each broken one is reported, by kind; the intact ArrayList is verified.
run broken 1 "$work/broken"
expect broken '^VerifyError java\.base!java\.util\.concurrent\.Exchanger: Expecting a stackmap frame'
expect broken '^ClassFormatError java\.base!java\.util\.Stack: .*illegal modifiers'
expect broken '^VerifyError java\.sql!java\.sql\.Timestamp: Expecting a stackmap frame'
expect_last broken "4 classes: 1 verified, 2 VerifyError, 1 ClassFormatError, 0 UnsupportedClassVersionError, 0 missing dependencies, 0 other, 0 not verified by HotSpot, 0 absent from the tree, 0 skipped"

# Control: with verification of boot classes turned back off, HotSpot
# neither checks the format of Stack nor verifies Exchanger, and the harness
# says so (from HotSpot's log) instead of calling them verified; the
# platform class is still verified. This is what -Xverify:all buys.
run control 1 "$work/broken" --jvm-opt -XX:+UnlockDiagnosticVMOptions --jvm-opt -XX:-BytecodeVerificationLocal
expect control '^not verified by HotSpot java\.base!java\.util\.concurrent\.Exchanger:'
expect control '^not verified by HotSpot java\.base!java\.util\.Stack:'
expect control '^VerifyError java\.sql!java\.sql\.Timestamp:'

# Checked against the original, a tree without Stack fails for that.
mkdir -p "$work/incomplete"
cp -r "$work/image/." "$work/incomplete/"
rm "$work/incomplete/java.base/java/util/Stack.class"
run incomplete 1 "$work/incomplete" --original "$work/image"
expect incomplete '^absent java\.base!java\.util\.Stack: '
expect_last incomplete "4 classes: 3 verified, 0 VerifyError, 0 ClassFormatError, 0 UnsupportedClassVersionError, 0 missing dependencies, 0 other, 0 not verified by HotSpot, 1 absent from the tree, 0 skipped"

# A broken class the JVM needs to start: reported as a start-up failure.
run startup 1 "$work/startup"
expect startup '^startup VerifyError java/util/ArrayList: Expecting a stackmap frame'

((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
echo "all as expected"
