#!/usr/bin/env bash
# Jars instrumented by separate runs of `jinst instrument --trace` in one JVM
# (docs/ARCHITECTURE.md, "Method ids of separate runs").
#
#   run_runs.sh JAVA_HOME JINST RUNTIME_JAR AGENT WORK
#
# Run 1: alpha.jar (--trace: a class in the default package, an interface
# with a default and a static method, a multi-release class, a method left
# by a throw). Run 2: beta1.jar and beta2.jar together (--trace=counts; the
# package `shared` split between them). Java 8 bytecode, the versioned
# class 9. Both runs number their methods from 0: the ids of their tables
# overlap. Main (not instrumented) calls every method a known number of
# times (calls.tsv). Under -Xverify:all:
#   counts  jinst-runtime.jar alone, -Djinst.trace=counts
#   times   jinst-runtime.jar alone, -Djinst.trace=times
#   boot    jinst-runtime.jar on the boot class path (-Xbootclasspath/a)
#   split   Split: shared.Two defined again by a loader of its own
#   module  a modular jar on the module path, as instrument's note says
#   countsonly  -Djinst.trace=times on run 2's jars alone (--trace=counts)
#   agent   the agent too, every class selected: it traces Main and Helper
#           (agent-calls.tsv), leaves the runs' classes alone, reserves the
#           runs' ranges among its own ids and names them
#           (not in a sanitized build, whose agent the JVM cannot load)
# Each OUT.tsv must be exactly the expected counts: every method named,
# nothing left out.
set -euo pipefail
jdk=$1 jinst=$2 runtime=$3 agent=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
java=$jdk/bin/java
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -x $java ]] || { echo "no java at $java: skipped"; exit 77; }

rm -rf "$work"
mkdir -p "$work"/{classes,alpha9,out}
cd "$work"
# One javac for the Java 8 classes, one for the versioned copy; the jars are
# zipped from them (jar and javac start a JVM each).
javac -nowarn --release 8 -d classes "$here"/alpha/Top.java "$here"/alpha/alpha/*.java "$here"/beta1/*/*.java \
	"$here"/beta2/shared/Two.java "$here"/main/*.java
javac -nowarn --release 9 -d alpha9 "$here"/alpha9/alpha/Ver.java
mkdir -p alpha/META-INF/versions/9/alpha beta1/shared beta2/shared main
mv classes/alpha classes/Top.class alpha/
mv alpha9/alpha/Ver.class alpha/META-INF/versions/9/alpha/
printf 'Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n' >alpha/META-INF/MANIFEST.MF
mv classes/beta beta1/ && mv classes/shared/One.class beta1/shared/ && mv classes/shared/Two.class beta2/shared/
mv classes/Main.class classes/Helper.class classes/Split*.class main/
for j in alpha beta1 beta2; do (cd $j && zip -qrX ../$j.jar $(ls -A | sort)); done

"$jinst" instrument --trace --quiet alpha.jar -o out/alpha.jar >/dev/null
"$jinst" instrument --trace=counts --quiet beta1.jar beta2.jar -o out/beta >/dev/null

# The two runs' tables: ids from 0 in both, two keys.
key() { unzip -p "$1" META-INF/jinst/methods.tsv | awk -F'\t' '$1 == "run" { print $2 }'; }
first() { unzip -p "$1" META-INF/jinst/methods.tsv | awk -F'\t' '$1 == "0" { print $2 }'; }
k1=$(key out/alpha.jar) k2=$(key out/beta/beta1.jar)
[[ -n $k1 && -n $k2 && $k1 != "$k2" ]] || fail "run keys '$k1' and '$k2'"
[[ $(key out/beta/beta2.jar) == "$k2" ]] || fail "the two jars of run 2 name two runs"
[[ -n $(first out/alpha.jar) && -n $(first out/beta/beta1.jar) ]] || fail "a table has no id 0"
# The run class beside every instrumented class's folder, the versioned too.
for e in '$JinstRun'"$k1".class alpha/'$JinstRun'"$k1".class META-INF/versions/9/alpha/'$JinstRun'"$k1".class; do
	unzip -l out/alpha.jar "$e" >/dev/null || fail "out/alpha.jar has no $e"
done
for j in beta1 beta2; do
	unzip -l out/beta/$j.jar "shared/\$JinstRun$k2.class" >/dev/null || fail "$j.jar has no shared/\$JinstRun$k2.class"
done

# --trace=times: the root's Ver.which is a leaf, counted only, the versioned
# copy's is not; the one id they share must be timed, whichever copy the
# instrumenter reaches last (-j 1: the entries' order, the versioned first).
"$jinst" instrument --trace=times --quiet -j 1 alpha.jar -o out/alpha-times.jar >/dev/null
row=$(unzip -p out/alpha-times.jar META-INF/jinst/methods.tsv | awk -F'\t' '$2 == "alpha/Ver" && $3 == "which"')
[[ $row == *$'\t'timed ]] || fail "times: Ver.which, timed in its versioned copy, is in the table as '$row'"

cp=out/alpha.jar:out/beta/beta1.jar:out/beta/beta2.jar:main:$runtime
plain=$("$java" -cp alpha.jar:beta1.jar:beta2.jar:main Main)
check() { # NAME EXPECTED: NAME.tsv, NAME.err
	local name=$1 want=$2
	LC_ALL=C sort "$want" | diff - "$name.tsv" >"$name.diff" || { cat "$name.diff" "$name.err" >&2; fail "$name: counts differ"; }
	if grep -q "left out\|not named\|Exception" "$name.err"; then cat "$name.err" >&2; fail "$name: $(head -1 "$name.err")"; fi
	echo "$name: $(wc -l <"$name.tsv") methods, every count exact"
}
for mode in counts times; do
	out=$("$java" -Xverify:all -Djinst.trace=$mode -Djinst.out="$work/$mode" -cp "$cp" Main 2>"$mode.err")
	[[ $out == "$plain" ]] || fail "$mode: printed '$out', not '$plain'"
	check $mode "$here/calls.tsv"
done
# jinst-runtime.jar on the boot class path, as a `java -jar` program runs:
# the bootstrap loader's copy without the agent engages as the class
# path's does, and hands out the ranges itself.
out=$("$java" -Xverify:all -Xbootclasspath/a:"$runtime" -Djinst.trace=counts -Djinst.out="$work/boot" \
	-cp "${cp%:"$runtime"}" Main 2>boot.err)
[[ $out == "$plain" ]] || fail "boot: printed '$out', not '$plain'"
[[ -f boot.tsv ]] || fail "boot: no boot.tsv: $(cat boot.err)"
if grep -v "^jinst: wrote " boot.err; then fail "boot: stderr: $(cat boot.err)"; fi
check boot "$here/calls.tsv"
# shared.Two defined again by a loader of its own (Split), as Jython
# defines what it compiles: the run's class its parent's, in a package of
# the same name but another loader, read all the same.
out=$("$java" -Xverify:all -Djinst.trace=counts -Djinst.out="$work/split" -cp "$cp" Split 2>split.err) ||
	fail "split: $(cat split.err)"
want=$("$java" -cp alpha.jar:beta1.jar:beta2.jar:main Split)
[[ $out == "$want" ]] || fail "split: printed '$out', not '$want'"
grep -qP '^shared/Two\ttwo\t\(\)I\t1$' split.tsv || fail "split: shared/Two.two not counted once: $(cat split.tsv split.err)"
# Times asked of code instrumented for counts alone (run 2's jars): said
# plainly, on stderr and in the profile; not said when a table has times.
"$java" -Djinst.trace=times -Djinst.out="$work/countsonly" -cp out/beta/beta1.jar:out/beta/beta2.jar:main:"$runtime" \
	Split >/dev/null 2>countsonly.err || fail "countsonly: $(cat countsonly.err)"
grep -q "^jinst: no times: the classes were instrumented for counts alone" countsonly.err ||
	fail "countsonly: stderr: $(cat countsonly.err)"
grep -q "^(no times: the classes were instrumented for counts alone" countsonly.txt ||
	fail "countsonly: the profile: $(cat countsonly.txt)"
if grep -q "counts alone" times.err times.txt; then fail "times: said to be counts alone"; fi

# A modular jar (modapp): instrument's note says how to run it on the
# module path; that very command, with the run's names, counts every call.
javac -nowarn --release 9 -d modapp "$here"/modapp/module-info.java "$here"/modapp/mod/M.java
(cd modapp && zip -qrX ../modapp.jar $(ls -A | sort))
"$jinst" instrument --trace=counts --quiet modapp.jar -o out/modapp.jar >/dev/null 2>modapp-instrument.err
cmd=$(sed -n 's/.*modapp.jar: it is the module modapp: .*: \(java -p .*\)$/\1/p' modapp-instrument.err)
[[ -n $cmd ]] || fail "module: no note of how to run it: $(cat modapp-instrument.err)"
read -ra words <<<"${cmd/java /}"
words=("${words[@]/#OUT/out/modapp.jar}")
words=("${words[@]/#PATH\/jinst-runtime.jar/$runtime}")
words=("${words[@]/#modapp\/CLASS/modapp/mod.M}")
out=$("$java" -Xverify:all -Djinst.out="$work/module" "${words[@]}" 2>module.err) || fail "module: $cmd: $(cat module.err)"
[[ $out == "module sum 12" ]] || fail "module: printed '$out'"
printf 'mod/M\tmain\t([Ljava/lang/String;)V\t1\nmod/M\ttwice\t(I)I\t3\n' | diff - module.tsv ||
	fail "module: counts differ: $(cat module.err)"
if [[ -n $agent && -f $agent && ${JINST_SANITIZED:-OFF} != ON ]]; then
	# Every class of the program selected: the agent must leave the runs'
	# classes alone (instrumented already), or it would count twice.
	out=$("$java" -Xverify:all -agentpath:"$agent"=trace=counts,include='*+alpha.**+beta.**+shared.**',out="$work/agent",log="$work/agent.log" \
		-cp "$cp" Main 2>agent.err)
	[[ $out == "$plain" ]] || fail "agent: printed '$out', not '$plain'"
	grep -q "alpha/\$JinstRun$k1: already instrumented" agent.log || fail "agent: the run's class not left alone"
	cat "$here/calls.tsv" "$here/agent-calls.tsv" >agent-want.tsv
	check agent agent-want.tsv
fi
echo "runs: ok ($plain)"
