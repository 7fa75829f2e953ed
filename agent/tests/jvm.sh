#!/usr/bin/env bash
# The agent in a real VM.
#   jvm.sh CASE JAVA_HOME LIBJINST FIXTURE PROGRAMS CHECKS SOURCE WORK
# CASE: help badopt boot runtime outputs unchanged jdk fixture compare attach.
# Exit 0 passed, 1 failed, 77 skipped (no such JDK, a sanitized build, or,
# for the cases that need it, no instrumentation pass in this build yet).
set -uo pipefail
case=$1 home=$2 lib=$3 fixture=$4 programs=$5 checks=$6 src=$7 work=$8
java=$home/bin/java
if [[ ! -x $java ]]; then
	echo "SKIP: no JDK at $home"
	exit 77
fi
if [[ ${JINST_SANITIZED:-OFF} == ON ]]; then
	if [[ -z ${JINST_PRELOAD:-} ]]; then
		echo "SKIP: a sanitized libjinst.so needs its sanitizer runtimes, which were not found"
		exit 77
	fi
	# The JVM handles SIGSEGV itself (implicit null checks) and never frees
	# much at exit: let it.
	export LD_PRELOAD=$JINST_PRELOAD
	export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
progs=(Recursion Threads Exceptions Constructors Interfaces Lambdas StaticInit Synchronized)
expected=$src/tests/jvm/programs/expected_counts.tsv
"$java" -version 2>&1 | head -1

# Whether the agent that wrote log instrumented anything: the pass may not
# be in this build yet.
instrumented() {
	! grep -q "no instrumentation pass" "$1" && ! grep -q "^jinst: 0 classes instrumented" "$1"
}

case $case in
help)
	"$java" -agentpath:"$lib"=help -version >out.txt 2>err.txt
	rc=$?
	[[ $rc == 0 ]] || fail "help exited $rc"
	for o in help trace=MODE include= exclude= format= out=PATH log=PATH maxevents= dump stop counts times events profile folded chrome; do
		grep -q -- "$o" out.txt || fail "help does not mention $o"
	done
	! grep -q "version" err.txt || fail "the VM ran after help: $(cat err.txt)"
	cat out.txt
	;;
badopt)
	for opt in trace=bogus frobnicate trace=counts,format=chrome maxevents=1 dump "include=a++b"; do
		"$java" -agentpath:"$lib"="$opt" -cp "$programs" jinsttest.Recursion >out.txt 2>err.txt
		rc=$?
		[[ $rc != 0 ]] || fail "$opt: the VM started (exit 0)"
		! grep -q "fib" out.txt || fail "$opt: the program ran"
		grep -q "^jinst: " err.txt || fail "$opt: no message"
		grep -q "OPTION" err.txt || fail "$opt: no usage"
		echo "$opt -> $(head -1 err.txt)"
	done
	;;
boot)
	"$java" -agentpath:"$lib"=trace=counts,out="$work"/c,log="$work"/c.log -cp "$checks" jinstcheck.BootCheck "$work"/c.tsv ||
		fail "counts: BootCheck"
	"$java" -agentpath:"$lib"=trace=times,out="$work"/t,log="$work"/t.log -cp "$checks" jinstcheck.BootCheck \
		"$work"/t.txt "$work"/t.folded || fail "times: BootCheck"
	"$java" -agentpath:"$lib"=trace=events,out="$work"/e,log="$work"/e.log -cp "$checks" jinstcheck.BootCheck "$work"/e.json ||
		fail "events: BootCheck"
	python3 -m json.tool e.json >/dev/null || fail "e.json does not parse"
	;;
runtime)
	# Its own class is not traced: its enter/exit calls are the only ones.
	"$java" -agentpath:"$lib"=trace=times,exclude=jinstcheck.**,out="$work"/t,log="$work"/t.log -cp "$checks" jinstcheck.RuntimeCheck times ||
		fail "times"
	"$java" -agentpath:"$lib"=trace=events,exclude=jinstcheck.**,maxevents=100,out="$work"/e,log="$work"/e.log -cp "$checks" \
		jinstcheck.RuntimeCheck events 100 || fail "events"
	;;
outputs)
	for mode in counts times events; do
		# -Xcheck:jni: the agent's JNI use (defining, snapshots, dump) is checked too
		"$java" -Xcheck:jni -agentpath:"$lib"=trace=$mode,include=jinsttest.**,out="$work"/$mode,log="$work"/$mode.log \
			-cp "$programs" jinsttest.Recursion >out.txt 2>&1 || fail "$mode: the program failed"
		! grep -E "JNI|FATAL" out.txt || fail "$mode: -Xcheck:jni complains"
		cat $mode.log
	done
	[[ -f counts.tsv ]] || fail "counts.tsv not written"
	# An output that cannot be written costs the program nothing; the log says why.
	"$java" -agentpath:"$lib"=out="$work"/no/such/dir/x,log="$work"/nodir.log -cp "$programs" jinsttest.Recursion >/dev/null ||
		fail "an unwritable out= made the program fail"
	grep -q "x.tsv not written: No such file or directory" nodir.log || fail "no log line for the unwritable output"
	[[ -f times.txt && -f times.folded ]] || fail "times.txt or times.folded not written"
	[[ -f events.json ]] || fail "events.json not written"
	head -1 times.txt | grep -q "^CPU TIME (ms) BEGIN" || fail "times.txt has no header"
	python3 -m json.tool events.json >/dev/null || fail "events.json does not parse"
	awk -F'\t' 'NF != 4 || $4 !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' counts.tsv || fail "counts.tsv is not class/method/descriptor/count"
	awk 'NF < 2 || $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' times.folded || fail "times.folded is not 'stack N'"
	if instrumented counts.log; then
		grep -qxF "$(grep '^jinsttest/Recursion	fib' "$expected")" counts.tsv || fail "counts.tsv: fib not counted 21891 times"
		grep -q " jinsttest/Recursion.fib(I)I$" times.txt || fail "times.txt has no fib"
		grep -q "^jinsttest/Recursion.main;jinsttest/Recursion.fib;jinsttest/Recursion.fib " times.folded ||
			fail "times.folded has no main;fib;fib stack"
		python3 - events.json <<'PY' || fail "events.json: B/E not balanced per thread"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
stacks = {}
for e in ev:
    if e["ph"] == "B":
        stacks.setdefault(e["tid"], []).append(e["name"])
    elif e["ph"] == "E":
        s = stacks.get(e["tid"], [])
        assert s and s.pop() == e["name"], e
assert all(not s for s in stacks.values())
assert any(e.get("name") == "jinsttest/Recursion.fib" for e in ev)
PY
	else
		echo "(no instrumentation pass: the files are checked for their form only)"
	fi
	;;
unchanged)
	for p in "${progs[@]}"; do
		"$java" -Xverify:all -cp "$programs" jinsttest.$p >plain.txt 2>&1 || fail "$p fails without the agent"
		for mode in counts times events; do
			"$java" -Xverify:all -agentpath:"$lib"=trace=$mode,include=jinsttest.**,out="$work"/$p-$mode,log="$work"/$p-$mode.log \
				-cp "$programs" jinsttest.$p >agent.txt 2>&1 || fail "$p fails with trace=$mode"
			cmp -s plain.txt agent.txt || fail "$p: output differs with trace=$mode: $(diff plain.txt agent.txt | head -5)"
			grep "left unchanged" $p-$mode.log | head -3
		done
		echo "$p: same output without and with the agent (counts, times, events)"
	done
	;;
jdk)
	# Every class the agent may touch, the JDK's included, in every mode.
	any=0
	for p in "${progs[@]}"; do
		"$java" -Xverify:all -cp "$programs" jinsttest.$p >plain.txt 2>&1
		for mode in counts times events; do
			# (small timelines: with the JDK traced they reach 100 MB)
			"$java" -Xverify:all -agentpath:"$lib"=trace=$mode,include=**,maxevents=2000,out="$work"/out,log="$work"/$p-$mode.log \
				-cp "$programs" jinsttest.$p >agent.txt 2>&1 || fail "$p fails with trace=$mode,include=**"
			cmp -s plain.txt agent.txt || fail "$p: output differs with trace=$mode,include=**: $(diff plain.txt agent.txt | head -5)"
			instrumented $p-$mode.log && any=1
		done
		echo "$p: $(grep -h 'classes instrumented' $p-counts.log)"
	done
	if [[ $any == 0 && $fails == 0 ]]; then
		echo "SKIP: this build's agent instruments nothing (no instrumentation pass yet)"
		exit 77
	fi
	;;
fixture)
	for p in "${progs[@]}"; do
		"$java" -cp "$programs" jinsttest.$p >plain.txt 2>&1
		"$java" -agentpath:"$fixture"=out="$work"/$p.tsv,include=jinsttest/ -cp "$programs" jinsttest.$p >fix.txt 2>&1 ||
			fail "$p fails under the fixture"
		cmp -s plain.txt fix.txt || fail "$p: output differs under the fixture"
		[[ -s $p.tsv ]] || { fail "$p: no counts"; continue; }
		awk -F'\t' 'NF != 4 || $4 !~ /^[1-9][0-9]*$/ || $1 !~ /^jinsttest\// { bad = 1 } END { exit bad }' $p.tsv ||
			fail "$p.tsv: a malformed line"
		LC_ALL=C sort -c $p.tsv 2>/dev/null || fail "$p.tsv is not sorted"
		while IFS= read -r line; do
			grep -qxF "$line" $p.tsv || fail "$p: expected '$line', got '$(grep -F "$(cut -f1-3 <<<"$line")" $p.tsv)'"
		done < <(grep "^jinsttest/$p[	\$]" "$expected")
		echo "$p: $(wc -l <$p.tsv) methods, $(awk -F'\t' '{ s += $4 } END { print s }' $p.tsv) entries"
	done
	;;
compare)
	any=0
	for p in "${progs[@]}"; do
		"$java" -agentpath:"$fixture"=out="$work"/$p.ref.tsv,include=jinsttest/ -cp "$programs" jinsttest.$p >/dev/null 2>&1 ||
			fail "$p fails under the fixture"
		"$java" -Xverify:all -agentpath:"$lib"=trace=counts,include=jinsttest.**,out="$work"/$p,log="$work"/$p.log \
			-cp "$programs" jinsttest.$p >/dev/null 2>&1 || fail "$p fails under the agent"
		if ! instrumented $p.log; then
			continue
		fi
		any=1
		if cmp -s $p.ref.tsv $p.tsv; then
			echo "$p: the agent's counts equal MethodEntry's ($(wc -l <$p.tsv) methods)"
		else
			fail "$p: counts differ from MethodEntry's:"
			diff $p.ref.tsv $p.tsv | head -20
		fi
		# trace=times counts the same, and every entry has its exit, normal
		# or exceptional: the profile's completed calls equal the counts.
		"$java" -Xverify:all -agentpath:"$lib"=trace=times,format=counts+profile,include=jinsttest.**,out="$work"/$p-t,log="$work"/$p-t.log \
			-cp "$programs" jinsttest.$p >/dev/null 2>&1 || fail "$p fails under trace=times"
		cmp -s $p.ref.tsv $p-t.tsv || fail "$p: trace=times counts differ from MethodEntry's: $(diff $p.ref.tsv $p-t.tsv | head -5)"
		python3 - $p-t.tsv $p-t.txt <<'PY' || fail "$p: completed calls differ from entries"
import sys
counts = {}
for line in open(sys.argv[1]):
    c, m, d, n = line.rstrip("\n").split("\t")
    counts[c + "." + m + d] = int(n)
calls = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 7 and f[0].isdigit():
        calls[f[6]] = int(f[3])
bad = {k: (counts.get(k), calls.get(k)) for k in set(counts) | set(calls) if counts.get(k) != calls.get(k)}
if bad:
    print("entries vs completed calls:", bad)
    sys.exit(1)
PY
	done
	if [[ $any == 0 && $fails == 0 ]]; then
		echo "SKIP: this build's agent instruments nothing (no instrumentation pass yet)"
		exit 77
	fi
	;;
attach)
	jcmd=$home/bin/jcmd
	"$java" -cp "$checks" jinstcheck.Sleeper "$work"/stop >sleeper.txt 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q running sleeper.txt && break
		sleep 0.1
	done
	load() {
		# quoted: jcmd would cut "a=b,c=d" at its first '='
		"$jcmd" $pid JVMTI.agent_load "$lib" "\"$1\"" >jcmd.txt 2>&1
		cat jcmd.txt
	}
	# A refused load makes HotSpot unload the library, and JDK 17's
	# os::dll_unload then reads the library's name after dlclose freed it:
	# harmless, but ASan aborts the VM on it. Sanitized builds skip refusals.
	if [[ -z ${LD_PRELOAD:-} ]]; then
		load bogus
		grep -q "return code: 0" jcmd.txt && fail "a bad option was accepted"
		load "dump"
		grep -q "return code: 0" jcmd.txt && fail "dump accepted before tracing"
	fi
	load "trace=counts,include=jinstcheck.**,out=$work/att,log=$work/att.log"
	grep -q "return code: 0" jcmd.txt || fail "trace=counts not loaded"
	sleep 0.3
	load "trace=times"
	grep -q "return code: 0" jcmd.txt && fail "a second trace= was accepted"
	load dump
	grep -q "return code: 0" jcmd.txt || fail "dump failed"
	[[ -f att.tsv ]] || fail "dump wrote no att.tsv"
	rm -f att.tsv
	load stop
	grep -q "return code: 0" jcmd.txt || fail "stop failed"
	[[ -f att.tsv ]] || fail "stop wrote no att.tsv"
	touch "$work"/stop
	wait $pid || fail "the program failed"
	cat sleeper.txt att.log
	grep -q "ticked" sleeper.txt || fail "the program did not run on"
	grep -q "^jinst: start: " att.log || fail "no start line in the log"
	grep -q "^jinst: stop: " att.log || fail "no stop line in the log"
	if instrumented att.log; then
		grep -qE "^jinstcheck/Sleeper	tick	\(\)V	[1-9]" att.tsv || fail "tick() not counted"
		grep -q "^jinst: start: [1-9]" att.log || fail "no class retransformed at start"
		grep -q "^jinst: stop: [1-9]" att.log || fail "no class retransformed at stop"
		grep -q "^jinst: stop: [1-9][0-9]* classes given back their original bytes" att.log ||
			fail "no class given back its original bytes at stop"
	fi
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
if ((fails)); then
	echo "$case: $fails failed"
	exit 1
fi
echo "$case: passed"
