#!/usr/bin/env bash
# javac itself, edited: the jdk.compiler and java.compiler modules of the
# jdk17 corpus get a probe before every instruction (edit_check default) or
# the tracing hooks (--hooks, --times) or branch-edge trampolines (--edges), are patched into a JDK 17 run under
# -Xverify:all, and compile the editor's cases, which must then print what
# the committed classes print (labels corpus, jvm).
# JAVA must be the JDK the corpus was extracted from (VERSION: 17, 25).
#   edit_javac.sh EDIT_CHECK JAVAC JAVA VERSION CORPUS_DIR SRC_DIR CLASSES_DIR
set -euo pipefail
check=$1 javac=$2 java=$3 version=$4 corpus=$5 src=$6 classes=$7
if [[ ! -d $corpus/jdk.compiler ]]; then
	echo "corpus $corpus not present: skipped"
	exit 77
fi
if [[ ! -x $java ]] || ! "$java" -version 2>&1 | grep -q "\"$version"; then
	echo "$java is not JDK $version, the corpus's: skipped"
	exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Hooks without state: they run inside javac.
mkdir -p "$tmp/hsrc/jinstedit"
printf 'package jinstedit;\npublic final class Calls { public static void enter(int i) {} public static void exit(int i) {} public static void exitThrow(int i) {} public static void exit(int i, long t) {} public static void exitThrow(int i, long t) {} }\n' >"$tmp/hsrc/jinstedit/Calls.java"
printf 'package jinstedit;\npublic final class Probe { public static void probe(int i) {} }\n' >"$tmp/hsrc/jinstedit/Probe.java"
"$javac" -d "$tmp/hooks" "$tmp/hsrc/jinstedit/Calls.java" "$tmp/hsrc/jinstedit/Probe.java"
"$java" -cp "$classes" jinstedit.EditCases >"$tmp/expected"
fail=0
for mode in probe hooks times edges; do
	flag=; [[ $mode != probe ]] && flag=--$mode
	for m in jdk.compiler java.compiler; do
		"$check" $flag --out "$tmp/$mode/$m" "$corpus/$m" | tail -n 1 || true  # methods too large are reported, skipped
		rm -f "$tmp/$mode/$m/module-info.class"
	done
	if ! "$java" -Xverify:all -Xshare:off -Xlog:class+load=info \
		--patch-module jdk.compiler="$tmp/$mode/jdk.compiler" --patch-module java.compiler="$tmp/$mode/java.compiler" \
		--add-reads jdk.compiler=ALL-UNNAMED --add-reads java.compiler=ALL-UNNAMED -Xbootclasspath/a:"$tmp/hooks" \
		-m jdk.compiler/com.sun.tools.javac.Main -d "$tmp/out.$mode" "$src"/jinstedit/*.java >"$tmp/log.$mode" 2>&1; then
		echo "FAIL $mode: edited javac failed"; grep -v 'class,load' "$tmp/log.$mode" | head -20; fail=1; continue
	fi
	patched=$(grep -c "source: file:$tmp/$mode/" "$tmp/log.$mode" || true)
	echo "$mode: $patched edited classes of javac loaded, verified and run"
	if [[ $patched -lt 500 ]]; then echo "FAIL $mode: the patch did not take"; fail=1; fi
	if ! "$java" -cp "$tmp/out.$mode" jinstedit.EditCases | diff -u "$tmp/expected" -; then
		echo "FAIL $mode: what the edited javac compiled prints something else"; fail=1
	fi
done
exit $fail
