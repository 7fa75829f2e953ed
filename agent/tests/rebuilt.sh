#!/usr/bin/env bash
# The classes the agent retransforms, and the bytes the VM rebuilds for them.
#   rebuilt.sh JAVA_HOME LIBJINST JINST REBUILT_CLASSES DUMP_JAR HUGE_CLASSES WORK
# REBUILT_CLASSES: tests/data/src/rebuilt compiled (jinstrebuilt.Branchy);
# DUMP_JAR: RebuiltDump as an agent jar; HUGE_CLASSES: tests/instrument's
# classes (jinsttrace.Huge has a method the hooks do not fit in).
#
# 1. For -Xshare:off and the default class-data sharing: the agent with
#    include=** on Branchy must leave no method alone that the same class
#    from the runtime image does not leave alone too (its log names each
#    method it leaves alone, and why); and the bytes the VM rebuilds for
#    every class loaded at start (RebuiltDump) through jinst instrument
#    (counts, the whole trace shape, coverage) must leave no method alone
#    that the class files of the runtime image (jrt:/) do not.
# 2. The agent on rebuilt bytes itself: Branchy on the boot class path,
#    its class files removed, then the agent attached: no class file to
#    read, so the VM's bytes are instrumented (JDK 17: without frames);
#    no method left alone, each call after the attach counted.
# 3. A method left alone is said and counted: Huge's huge(I)I.
# 4. A class a pass declines is said and counted, and the other pass still
#    instruments it: coverage and the jsr/ret of tests/data's Finally, which
#    trace counts.
# Under the sanitizers (1) runs with -Xshare:off alone (the agent's paths
# are the same; the sanitized JVMs cost most of the run).
# Exit 0 passed, 1 failed, 77 skipped (no such JDK; a sanitized build
# without its runtimes).
set -uo pipefail
home=$1 lib=$2 jinst=$3 classes=$4 dumpjar=$5 huge=$6 work=$7
source "${BASH_SOURCE%/*}/../../tests/lib.sh"
need_jdk "$home"
shares="off auto"
if sanitized; then
	shares=off
	javapreload=$JINST_PRELOAD
	# (the options to every command, the runtimes to java alone)
	export "${san_env[@]}"
fi
# Only java gets the sanitizer runtimes: jinst is built with them.
jv() {
	LD_PRELOAD=${javapreload:-} "$java" "$@"
}
workdir "$work"

# "CLASS METHODDESC" per method that jinst instrument left alone, from its
# --verbose notes ("note DIR/CLASS.class: left alone: PASS: METHODDESC CODE...;
# PASS: ..."), for the classes under DIR.
instrument_left_alone() {
	local dir=$1 out=$2 pass=$3
	"$jinst" instrument "$pass" --quiet --verbose "$dir" -o "$out.d" >"$out.log" 2>&1 || fail "jinst instrument $pass $dir: $(tail -1 "$out.log")"
	sed -n "s|^note $dir/\(.*\)\.class: left alone: \(.*\)|\1	\2|p" "$out.log" |
		awk -F'\t' '{ n = split($2, m, "; "); for (i = 1; i <= n; i++) { sub(/^[a-z]*: /, "", m[i]); sub(/ .*/, "", m[i]); print $1 " " m[i] } }' |
		sort -u >"$out"
	rm -rf "$out.d"
}

# What the agent's log says it left alone, as "CLASS METHODDESC".
agent_left_alone() {
	sed -n 's|^jinst: \([^ ]*\)\.\([^.( ]*(.*\) left alone: .*|\1 \2|p' "$1" | sort -u
}

# The agent's figure of methods left alone, from its summary.
summary_left_alone() {
	sed -n 's/^jinst: .* classes instrumented, .* left unchanged on error, \([0-9]*\) methods left alone,.*/\1/p' "$1"
}

for share in $shares; do
	# (1) the agent, everything included
	jv -Xshare:$share -agentpath:"$lib"=trace=counts,include=**,out=$work/agent-$share,log=$work/agent-$share.log \
		-cp "$classes" jinstrebuilt.Branchy >agent-$share.out 2>&1 || fail "$share: the program failed under the agent"
	grep -q "^checksum " agent-$share.out || fail "$share: the program printed no checksum"
	n=$(summary_left_alone agent-$share.log)
	[[ -n $n ]] || fail "$share: no summary with the methods left alone: $(tail -1 agent-$share.log)"
	agent_left_alone agent-$share.log >agent-$share.left
	[[ $(wc -l <agent-$share.left) == "${n:-x}" ]] || fail "$share: the summary says ${n:-nothing} methods left alone, the log names $(wc -l <agent-$share.left)"
	# The rebuilt bytes of what was loaded at start, and the image's files.
	jv -Xshare:$share -javaagent:"$dumpjar" -cp "$dumpjar" RebuiltDump "$work/dump-$share" >dump-$share.out 2>&1 ||
		fail "$share: RebuiltDump failed: $(tail -3 dump-$share.out)"
	captured=$(find dump-$share/rebuilt -name '*.class' | wc -l)
	[[ $captured -gt 200 ]] || fail "$share: only $captured classes rebuilt"
	for pass in --trace=counts --trace --coverage; do
		instrument_left_alone dump-$share/rebuilt rebuilt-$share$pass.left $pass
		instrument_left_alone dump-$share/image image-$share$pass.left $pass
		extra=$(comm -23 rebuilt-$share$pass.left image-$share$pass.left)
		[[ -z $extra ]] || fail "$share $pass: left alone in the rebuilt bytes only: $(echo "$extra" | head -5)"
		echo "-Xshare:$share $pass: $captured classes rebuilt, methods left alone: $(wc -l <rebuilt-$share$pass.left) of the rebuilt bytes, $(wc -l <image-$share$pass.left) of the image's"
	done
	# Each method the agent left alone, the image's class leaves alone too.
	while read -r cls method; do
		grep -qxF "$cls $method" image-$share--trace=counts.left ||
			fail "$share: the agent left $cls.$method alone, the image's class does not: $(grep -F "$cls.$method left alone" agent-$share.log | head -1)"
	done <agent-$share.left
	echo "-Xshare:$share: the agent: $(grep 'classes instrumented' agent-$share.log)"
done

# (2) the agent attached to Branchy on the boot class path, its files gone
jcmd=$home/bin/jcmd
cp -r "$classes" boot
LD_PRELOAD=${javapreload:-} "$java" -Xshare:off -Xbootclasspath/a:"$work/boot" jinstrebuilt.Branchy "$work/stop" \
	>branchy.out 2>&1 &
pid=$!
for _ in $(seq 200); do
	grep -q running branchy.out && break
	sleep 0.1
done
grep -q running branchy.out || fail "Branchy did not start: $(cat branchy.out)"
rm -rf boot
LD_PRELOAD= "$jcmd" $pid JVMTI.agent_load "$lib" "\"trace=counts,include=jinstrebuilt.**,out=$work/att,log=$work/att.log\"" >jcmd.txt 2>&1
grep -q "return code: 0" jcmd.txt || fail "the agent was not loaded: $(cat jcmd.txt)"
touch stop
wait $pid || fail "Branchy failed: $(cat branchy.out)"
cat att.log
grep -q "^jinst: no class file found for 3 of 3 classes" att.log || fail "the class files were read: the VM's bytes were not instrumented"
grep -q "^jinst: start: 3 loaded classes retransformed, 0 failed" att.log || fail "Branchy's three classes not retransformed"
grep -q "^jinst: 3 classes instrumented, 0 left unchanged on error, 0 methods left alone," att.log ||
	fail "the rebuilt classes: $(grep 'classes instrumented' att.log)"
! grep -q "left alone:" att.log || fail "methods left alone: $(grep 'left alone:' att.log | head -3)"
# After the attach, run() ran Branchy.ROUNDS (3) times, and once each
# call of its work.
for m in "jinstrebuilt/Branchy	run	()J" "jinstrebuilt/Branchy	canEncode	(C)Z" "jinstrebuilt/Branchy	max	(II)I" \
	"jinstrebuilt/Branchy	loop	(I)I" "jinstrebuilt/Branchy	table	(I)Ljava/lang/String;" "jinstrebuilt/Branchy	lookup	(I)I" \
	"jinstrebuilt/Branchy	words	(Ljava/lang/String;)I" "jinstrebuilt/Branchy	parse	(Ljava/lang/String;)I" \
	"jinstrebuilt/Branchy	wide	(JD)J" "jinstrebuilt/Branchy	locked	(Ljava/lang/Object;)I" \
	"jinstrebuilt/Branchy	<init>	(I)V" "jinstrebuilt/Branchy	scaled	(I)I" "jinstrebuilt/Branchy\$Sub	<init>	(I)V" \
	"jinstrebuilt/Branchy\$Base	<init>	(Ljava/lang/String;)V"; do
	grep -qxF "$m	3" att.tsv || fail "not counted 3 times: $m ($(grep -F "$m" att.tsv))"
done
[[ $(wc -l <att.tsv) == 14 ]] || fail "att.tsv: $(wc -l <att.tsv) methods counted, 14 expected"

# (3) a method left alone is named, with why, and counted
jv -agentpath:"$lib"=trace=counts,include=jinsttrace.Huge,out=$work/huge,log=$work/huge.log -cp "$huge" jinsttrace.Main \
	>huge.out 2>&1 || fail "jinsttrace.Main failed under the agent"
grep -q "^jinst: jinsttrace/Huge.huge(I)I left alone: ETOOLARGE" huge.log || fail "huge(I)I: no line: $(cat huge.log)"
grep -q "^jinst: 1 classes instrumented, 0 left unchanged on error, 1 methods left alone," huge.log ||
	fail "huge(I)I not counted: $(grep 'classes instrumented' huge.log)"

# (4) a class coverage declines (jsr/ret) is named, with why, and counted
jsr=$(cd "${BASH_SOURCE%/*}/../../tests/data/classes/jsr" && pwd)
jv -agentpath:"$lib"=coverage,trace=counts,include=jinstjsr.**,out=$work/jsr,log=$work/jsr.log -cp "$jsr" \
	jinstjsr.Finally 50 >jsr.out 2>&1 || fail "jinstjsr.Finally failed under the agent: $(cat jsr.out)"
grep -q "^jinst: jinstjsr/Finally left alone by coverage: EUNSUPPORTED.*jsr/ret" jsr.log ||
	fail "Finally: no line for coverage: $(cat jsr.log)"
grep -q "^jinst: 1 classes instrumented, 0 left unchanged on error, 0 methods left alone, 1 classes left alone by a pass," jsr.log ||
	fail "Finally's coverage not counted: $(grep 'classes instrumented' jsr.log)"
grep -q "^jinstjsr/Finally	main	" jsr.tsv || fail "Finally not traced: $(cat jsr.tsv)"

verdict rebuilt
