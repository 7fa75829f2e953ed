#!/usr/bin/env bash
# The agent in a real VM.
#   jvm.sh CASE JAVA_HOME LIBJINST FIXTURE PROGRAMS CHECKS SOURCE WORK
# CASE: help badopt boot runtime threads vthreads outputs unchanged jdk fixture compare attach offline javac
# coverage coverage_counts coverage_attach coverage_javac
# osgi strictloader jdkloader
# example_NAME (examples/NAME/run.sh against its README).
# Exit 0 passed, 1 failed, 77 skipped (no such JDK, a sanitized build
# without its runtimes, or what a case needs is not installed).
set -uo pipefail
case=$1 home=$2 lib=$3 fixture=$4 programs=$5 checks=$6 src=$7 work=$8
source "${BASH_SOURCE%/*}/../../tests/lib.sh"
need_jdk "$home"
# (every command: the sanitizer runtimes and their options)
sanitized && export LD_PRELOAD=$JINST_PRELOAD "${san_env[@]}"
workdir "$work"
progs=(Recursion Threads Exceptions Constructors Interfaces Lambdas StaticInit Synchronized Concurrency)
expected=$src/tests/jvm/programs/expected_counts.tsv

# Whether the agent that wrote log instrumented anything; a failure when not.
instrumented() {
	! grep -q "^jinst: 0 classes instrumented" "$1" || {
		fail "$1: the agent instrumented nothing"
		return 1
	}
}
# A profile's total, and the sum of folded stacks, in ms (%.3f).
profile_total() {
	sed -n '1s/.*(total = \([0-9.]*\)).*/\1/p' "$1"
}
folded_total() {
	awk '!/^#/ { s += $NF } END { printf "%.3f", s / 1e6 }' "$1"
}

case $case in
help)
	"$java" -agentpath:"$lib"=help -version >out.txt 2>err.txt
	rc=$?
	[[ $rc == 0 ]] || fail "help exited $rc"
	for o in help trace=MODE include= exclude= format= out=PATH log=PATH maxevents= tick=USEC leaves= foldmin= dump stop \
		counts times events profile folded chrome html; do
		grep -q -- "$o" out.txt || fail "help does not mention $o"
	done
	grep -q "^trace (on by default): " out.txt || fail "help has no heading for the trace module"
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
	# An unknown option's message names the core's options and each module's.
	"$java" -agentpath:"$lib"=frobnicate -version >out.txt 2>err.txt
	grep -q "^jinst: unknown option 'frobnicate' (options: help, include=GLOBS.*; trace: trace=MODE, " err.txt ||
		fail "the unknown option's message does not list the options: $(head -1 err.txt)"
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
	# Its own class is not traced: its enter/exit calls are the only ones;
	# the clock is stopped (tick=0) and it calls Hooks.sample by hand.
	"$java" -agentpath:"$lib"=trace=times,tick=0,exclude=jinstcheck.**,out="$work"/t,log="$work"/t.log -cp "$checks" jinstcheck.RuntimeCheck times ||
		fail "times"
	"$java" -agentpath:"$lib"=trace=events,exclude=jinstcheck.**,maxevents=100,out="$work"/e,log="$work"/e.log -cp "$checks" \
		jinstcheck.RuntimeCheck events 100 || fail "events"
	"$java" -agentpath:"$lib"=coverage,exclude=jinstcheck.**,out="$work"/c,log="$work"/c.log -cp "$checks" \
		jinstcheck.CoverageCheck || fail "coverage"
	;;
threads)
	# Exact counts from every thread (jinstcheck.ThreadCounts, whose call
	# counts are known): 32 platform threads of a pool, which take the hooks'
	# path by thread id (Hooks.BY_TID), and on JDK 21 on 10000 virtual
	# threads that park half-way and may come back on another carrier; in
	# both modes (times pushes and pops on each thread's own stack).
	runs=("pool 32 320 1000")
	if "$java" -cp "$checks" jinstcheck.ThreadCounts virtual 0 1 1 >/dev/null 2>&1; then
		runs+=("virtual 0 10000 10")
	else
		echo "no virtual threads on $home: 32 platform threads only"
	fi
	for run in "${runs[@]}"; do
		set -- $run
		tasks=$3 steps=$4
		"$java" -cp "$checks" jinstcheck.ThreadCounts $run >plain.txt 2>&1 || fail "$run untraced: $(tail -3 plain.txt)"
		for mode in counts times; do
			name=$1-$mode
			timeout -k 10 120 "$java" -agentpath:"$lib"=trace=$mode,include=jinstcheck.ThreadCounts*,format=counts,out="$work/$name",log="$work/$name.log" \
				-cp "$checks" jinstcheck.ThreadCounts $run >out.txt 2>&1 || fail "$run $mode: the program failed: $(tail -3 out.txt)"
			cmp -s plain.txt out.txt || fail "$run $mode: output differs: $(diff plain.txt out.txt | head -5)"
			got=$(awk -F'\t' '$1 == "jinstcheck/ThreadCounts" && $2 ~ /^(task|step|leaf|fib)$/ { print $2 "=" $4 }' $name.tsv | sort | paste -sd' ')
			want="fib=$((177 * tasks)) leaf=$((2 * tasks * steps)) step=$((tasks * steps)) task=$tasks"
			[[ $got == "$want" ]] || fail "$run $mode: counts $got, not $want"
			echo "$run, $mode: $want"
		done
	done
	# Rows before the first hook (Hooks.prepareAll, Hooks.threadStart): the
	# main thread, alive when the hooks are engaged, and a thread started
	# after own their rows before they run any traced method. A thread that
	# got its row from its first hook took the hooks' slow branch, and one
	# taking in the hook's profile has C2 compile the slow call into every
	# site (docs/tracing-threads.md, "Rows before the first hook").
	for mode in counts times; do
		timeout -k 10 120 "$java" -agentpath:"$lib"=trace=$mode,include=jinstcheck.RowsWork,format=counts,out="$work/rows-$mode",log="$work/rows-$mode.log" \
			-cp "$checks" jinstcheck.Rows $mode 1000 >out.txt 2>&1 || fail "rows, $mode: the program failed: $(tail -3 out.txt)"
		want="grid yes"
		[[ $mode == counts ]] || want="grid yes, stacks yes"
		for who in main started; do
			grep -qx "$who: $want" out.txt || fail "rows, $mode: $(grep "^$who:" out.txt || tail -3 out.txt), not \"$who: $want\""
		done
		steps=$(awk -F'\t' '$1 == "jinstcheck/RowsWork" && $2 == "step" { print $4 }' rows-$mode.tsv)
		[[ $steps == 2000 ]] || fail "rows, $mode: step counted ${steps:-no} times, not 2000"
		echo "rows, $mode: main and a started thread own their rows before their first hook; step 2000"
	done
	;;
vthreads)
	# Virtual threads (JDK 21 on): the VM posts no ThreadEnd for them, and
	# each one's records must still go (before, 100000 of them took 3 GB).
	# 50000 threads, each with its own stack and counts, in a heap that
	# holds them alive (about 1.5 KB each) but not dead and kept (30 KB
	# each before); then 200000 with the JDK traced, each keeping counts of
	# more methods (a few KB), in a larger heap: those ran the hooks in a
	# JNI thread being attached, which crashed JDK 25 before Thread's
	# nested classes were left alone.
	"$home/bin/javac" -d vt "$src/agent/tests/java21/jinsttest/VThreads.java" 2>javac.txt || {
		cat javac.txt
		echo "SKIP: $home cannot compile virtual threads (before JDK 21)"
		exit 77
	}
	k=0
	for run in "counts include=jinsttest.** 256m 50000" "times include=jinsttest.** 256m 50000" \
		"counts include=** 2g 200000" "times include=** 2g 200000"; do
		set -- $run
		k=$((k + 1))
		name=run$k n=$4
		timeout -k 10 120 "$java" -Xmx$3 -cp vt jinsttest.VThreads $n >plain.txt 2>&1 || fail "the program fails untraced: $(tail -3 plain.txt)"
		timeout -k 10 120 "$java" -Xmx$3 -agentpath:"$lib"=trace=$1,$2,format=counts,out="$work/$name",log="$work/$name.log" \
			-cp vt jinsttest.VThreads $n >out.txt 2>&1 || fail "$run: the program failed: $(tail -3 out.txt)"
		cmp -s plain.txt out.txt || fail "$run: output differs: $(diff plain.txt out.txt | head -5)"
		c=$name.tsv
		[[ $(awk -F'\t' '$1 == "jinsttest/VThreads" && $2 == "mid" { print $4 }' $c) == "$n" &&
			$(awk -F'\t' '$1 == "jinsttest/VThreads" && $2 == "work" { print $4 }' $c) == "$((10 * n))" ]] ||
			fail "$run: mid and work not counted $n and $((10 * n)) times: $(grep VThreads $c)"
		echo "$1 $2, $n threads (-Xmx$3): exact counts, $(wc -l <$c) methods"
	done
	# On JDK 19 on, the bridge counts a virtual thread in its carrier's
	# row (agent/runtime.c, carrier_bridge): rows owned by carrier threads,
	# and the counts exact across their parks (-Xcheck:jni: carrier0).
	"$home/bin/javac" -d vt "$src/agent/tests/java21/jinsttest/Carriers.java" 2>javac.txt || fail "Carriers: $(cat javac.txt)"
	n=2000
	timeout -k 10 120 "$java" -Xcheck:jni -agentpath:"$lib"=trace=counts,include=jinsttest.Carriers*,out="$work/carriers",log="$work/carriers.log" \
		-cp vt jinsttest.Carriers $n >out.txt 2>&1 || fail "Carriers: the program failed: $(tail -3 out.txt)"
	grep -q "^rows of carriers: [1-9]" out.txt || fail "Carriers: no carrier thread owns a row: $(tail -3 out.txt)"
	[[ $(awk -F'\t' '$1 == "jinsttest/Carriers" && $2 == "step" { print $4 }' carriers.tsv) == "$((1000 * n))" ]] ||
		fail "Carriers: step not counted $((1000 * n)) times: $(grep step carriers.tsv)"
	grep -q "WARNING" out.txt && fail "Carriers: -Xcheck:jni: $(grep -m 3 WARNING out.txt)"
	echo "Carriers, $n virtual threads: $(grep '^rows of carriers' out.txt), exact counts"
	! ls hs_err_pid*.log 2>/dev/null | grep . || fail "the VM crashed"
	;;
outputs)
	for mode in counts times events; do
		# -Xcheck:jni: the agent's JNI use (defining, snapshots, dump) is checked too;
		# times: 300 ms of fib first, time for the clock to find its stacks
		args=
		[[ $mode != times ]] || args=300
		"$java" -Xcheck:jni -agentpath:"$lib"=trace=$mode,include=jinsttest.**,out="$work"/$mode,log="$work"/$mode.log \
			-cp "$programs" jinsttest.Recursion $args >out.txt 2>&1 || fail "$mode: the program failed"
		! grep -E "JNI|FATAL" out.txt || fail "$mode: -Xcheck:jni complains"
		cat $mode.log
	done
	[[ -f counts.tsv ]] || fail "counts.tsv not written"
	# An output that cannot be written is refused at start, not found at exit
	# (attach_cli.sh out_start has the rest).
	! "$java" -agentpath:"$lib"=out="$work"/no/such/dir/x -cp "$programs" jinsttest.Recursion >nodir.txt 2>&1 ||
		fail "an unwritable out= did not stop the VM at start"
	grep -q "^jinst: out=.*/no/such/dir/x: the outputs cannot be written in .*/no/such/dir: No such file or directory" \
		nodir.txt || fail "no line for the unwritable output: $(head -1 nodir.txt)"
	[[ -f times.txt && -f times.folded ]] || fail "times.txt or times.folded not written"
	[[ -f events.json ]] || fail "events.json not written"
	head -1 times.txt | grep -q "^WALL TIME (ms) BEGIN (total = [0-9.]*) clock wall, unit ms" || fail "times.txt has no header with its clock"
	head -1 times.folded | grep -qx "# jinst folded stacks: clock wall, unit ns .*" || fail "times.folded does not name its clock"
	grep -q '"otherData":{"tool":"jinst","clock":"wall","unit":"us"' events.json || fail "events.json does not name its clock"
	python3 -m json.tool events.json >/dev/null || fail "events.json does not parse"
	awk -F'\t' 'NF != 4 || $4 !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' counts.tsv || fail "counts.tsv is not class/method/descriptor/count"
	awk 'NR > 1 && (NF < 2 || $NF !~ /^[0-9]+$/) { bad = 1 } END { exit bad }' times.folded || fail "times.folded is not 'stack N'"
	if instrumented counts.log; then
		grep -qxF "$(grep '^jinsttest/Recursion	fib' "$expected")" counts.tsv || fail "counts.tsv: fib not counted 21891 times"
		grep -q " jinsttest/Recursion.fib(I)I$" times.txt || fail "times.txt has no fib"
		grep -q "^jinsttest/Recursion.main;jinsttest/Recursion.fib;jinsttest/Recursion.fib[; ]" times.folded ||
			fail "times.folded has no main;fib;fib stack"
		# One time, two views: the stacks add up to the profile's total,
		# which is main's inclusive time (the one thread, main under all).
		total=$(profile_total times.txt)
		main=$(awk '$NF ~ /Recursion.main\(/ { print $6 }' times.txt)
		folded=$(folded_total times.folded)
		echo "times: total $total ms, main $main ms, folded stacks $folded ms"
		[[ -n $total && $total == "$main" && $total == "$folded" ]] || fail "the profile's total, main and the stacks differ"
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
	fi
	;;
jdkloader)
	# Without include=, the JDK is left alone whatever its package names:
	# org/xml/sax and org/w3c/dom come from the boot loader. With
	# include=**, they are instrumented like any class.
	"$java" -cp "$checks" jinstcheck.JdkXml >plain.txt 2>&1 || fail "JdkXml fails without the agent"
	"$java" -agentpath:"$lib"=trace=counts,coverage,out="$work"/d,log="$work"/d.log -cp "$checks" jinstcheck.JdkXml \
		>agent.txt 2>&1 || fail "JdkXml fails with the agent"
	cmp -s plain.txt agent.txt || fail "output differs: $(diff plain.txt agent.txt | head -3)"
	grep -q "^jinstcheck/JdkXml" d.tsv || fail "JdkXml itself not counted"
	! grep -E "^(org/xml|org/w3c|com/sun|java|jdk|sun)/" d.tsv | head -3 | grep . || fail "JDK classes counted by default"
	"$java" -agentpath:"$lib"=trace=counts,include=org.xml.**,out="$work"/i,log="$work"/i.log -cp "$checks" jinstcheck.JdkXml \
		>/dev/null 2>&1 || fail "JdkXml fails with include=org.xml.**"
	grep -q "^org/xml/sax/helpers/AttributesImpl" i.tsv || fail "include=org.xml.**: AttributesImpl not counted"
	echo "jdkloader: $(grep -c . d.tsv) methods counted by default, none of the JDK; $(grep -c '^org/xml/' i.tsv) of org/xml with include="
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
	for p in "${progs[@]}"; do
		"$java" -Xverify:all -cp "$programs" jinsttest.$p >plain.txt 2>&1
		for mode in counts times events; do
			# (small timelines: with the JDK traced they reach 100 MB)
			max=
			[[ $mode != events ]] || max=maxevents=2000,
			"$java" -Xverify:all -agentpath:"$lib"=trace=$mode,include=**,${max}out="$work"/out,log="$work"/$p-$mode.log \
				-cp "$programs" jinsttest.$p >agent.txt 2>&1 || fail "$p fails with trace=$mode,include=**"
			cmp -s plain.txt agent.txt || fail "$p: output differs with trace=$mode,include=**: $(diff plain.txt agent.txt | head -5)"
			instrumented $p-$mode.log
		done
		echo "$p: $(grep -h 'classes instrumented' $p-counts.log)"
	done
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
	for p in "${progs[@]}"; do
		"$java" -agentpath:"$fixture"=out="$work"/$p.ref.tsv,include=jinsttest/ -cp "$programs" jinsttest.$p >/dev/null 2>&1 ||
			fail "$p fails under the fixture"
		"$java" -Xverify:all -agentpath:"$lib"=trace=counts,include=jinsttest.**,out="$work"/$p,log="$work"/$p.log \
			-cp "$programs" jinsttest.$p >/dev/null 2>&1 || fail "$p fails under the agent"
		instrumented $p.log || continue
		if cmp -s $p.ref.tsv $p.tsv; then
			echo "$p: the agent's counts equal MethodEntry's ($(wc -l <$p.tsv) methods)"
		else
			fail "$p: counts differ from MethodEntry's:"
			diff $p.ref.tsv $p.tsv | head -20
		fi
		# trace=times counts the same, leaves counted and the rest timed;
		# with leaves=time every entry has its exit, normal or
		# exceptional: the profile's completed calls equal the counts.
		"$java" -Xverify:all -agentpath:"$lib"=trace=times,format=counts+profile,include=jinsttest.**,out="$work"/$p-l,log="$work"/$p-l.log \
			-cp "$programs" jinsttest.$p >/dev/null 2>&1 || fail "$p fails under trace=times"
		cmp -s $p.ref.tsv $p-l.tsv || fail "$p: trace=times counts differ from MethodEntry's: $(diff $p.ref.tsv $p-l.tsv | head -5)"
		if [[ $p == Interfaces ]]; then
			# Rect.area() (return w * h) is a leaf: counted, marked -;
			# Shape.describe() calls and is timed.
			grep -qE '^ +[0-9]+ +- +- +22 +- +-  jinsttest/Interfaces\$Rect\.area\(\)D$' $p-l.txt ||
				fail "$p: Rect.area() is not a counted leaf: $(grep -F 'Rect.area' $p-l.txt)"
			grep -qE '^ +[0-9]+ +[0-9.]+% +[0-9.]+% +4 .* jinsttest/Interfaces\$Shape\.describe\(\)' $p-l.txt ||
				fail "$p: Shape.describe() is not timed: $(grep -F 'describe' $p-l.txt)"
		fi
		"$java" -Xverify:all -agentpath:"$lib"=trace=times,leaves=time,format=counts+profile,include=jinsttest.**,out="$work"/$p-t,log="$work"/$p-t.log \
			-cp "$programs" jinsttest.$p >/dev/null 2>&1 || fail "$p fails under trace=times,leaves=time"
		cmp -s $p.ref.tsv $p-t.tsv || fail "$p: trace=times,leaves=time counts differ from MethodEntry's: $(diff $p.ref.tsv $p-t.tsv | head -5)"
		! grep -q "not timed" $p-t.txt || fail "$p: trace=times,leaves=time left methods untimed"
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
	;;
attach)
	jcmd=$home/bin/jcmd
	# sleeper: starts the program to attach to (pid), until it runs
	sleeper() {
		rm -f "$work"/stop
		"$java" -cp "$checks" jinstcheck.Sleeper "$work"/stop >sleeper.txt 2>&1 &
		pid=$!
		for _ in $(seq 100); do
			grep -q running sleeper.txt && break
			sleep 0.1
		done
	}
	sleeper
	load() {
		# quoted: jcmd would cut "a=b,c=d" at its first '='
		"$jcmd" $pid JVMTI.agent_load "$lib" "\"$1\"" >jcmd.txt 2>&1
		cat jcmd.txt
	}
	# The code the VM runs for Sleeper's methods now, in the VM's own
	# words (GetBytecodes, through the witness agent built next to the
	# fixture), into $1.
	witness=$(dirname "$fixture")/libjinst_bytecodes.so
	bytecodes() {
		"$jcmd" $pid JVMTI.agent_load "$witness" "\"class=jinstcheck/Sleeper,out=$work/$1\"" >witness.txt 2>&1
		grep -q "return code: 0" witness.txt && [[ -s $1 ]] || fail "no bytecodes in $1: $(cat witness.txt)"
	}
	bytecodes before.txt
	# A refused load makes HotSpot unload the library, and JDK 17's
	# os::dll_unload then reads the library's name after dlclose freed it:
	# harmless, but ASan aborts the VM on it. Sanitized builds skip refusals.
	if [[ -z ${LD_PRELOAD:-} ]]; then
		# The VM's stdout and stderr are the program's (sleeper.txt): a
		# refused load puts its reason there and one line naming where the
		# options are listed, never the usage.
		said() { grep -c "^jinst: " sleeper.txt; }
		load bogus
		grep -q "return code: 0" jcmd.txt && fail "a bad option was accepted"
		[[ $(said) == 2 ]] || fail "bogus: not its reason and one line: $(grep "^jinst: " sleeper.txt)"
		load help
		grep -q "return code: 0" jcmd.txt && fail "help was accepted in a running VM"
		[[ $(said) == 3 ]] || fail "help: not one line: $(grep "^jinst: " sleeper.txt)"
		grep -q "^jinst: help is not printed into a running program's output: jinst attach $pid help" sleeper.txt ||
			fail "help did not say where the options are listed"
		! grep -qE "Options \(defaults|Usage:|OPTION" sleeper.txt || fail "the usage went into the program's output"
		load "dump"
		grep -q "return code: 0" jcmd.txt && fail "dump accepted before tracing"
	fi
	load "trace=counts,include=jinstcheck.**,out=$work/att,log=$work/att.log"
	grep -q "return code: 0" jcmd.txt || fail "trace=counts not loaded"
	sleep 0.3
	bytecodes during.txt
	load "trace=times"
	grep -q "return code: 0" jcmd.txt && fail "a second trace= was accepted"
	load dump
	grep -q "return code: 0" jcmd.txt || fail "dump failed"
	[[ -f att.tsv ]] || fail "dump wrote no att.tsv"
	rm -f att.tsv
	load stop
	grep -q "return code: 0" jcmd.txt || fail "stop failed"
	[[ -f att.tsv ]] || fail "stop wrote no att.tsv"
	bytecodes after.txt
	# A session after stop writes its messages where its own log= says,
	# and one that cannot be opened refuses the load, as at a first attach.
	load "trace=counts,include=jinstcheck.**,out=$work/att2,log=$work/att2.log"
	grep -q "return code: 0" jcmd.txt || fail "session 2 not loaded"
	load stop
	grep -q "^jinst: starting again after stop: session 2" att2.log || fail "session 2 did not log to its log="
	grep -q "^jinst: stop: " att2.log || fail "session 2's stop not in its log="
	! grep -q "session 2" att.log || fail "session 2 logged to session 1's log="
	if [[ -z ${LD_PRELOAD:-} ]]; then
		load "trace=counts,include=jinstcheck.**,out=$work/att3,log=$work/no-such-folder/att3.log"
		grep -q "return code: 0" jcmd.txt && fail "a log= that cannot be opened was accepted after stop"
		grep -q "^jinst: log=$work/no-such-folder/att3.log: No such file or directory" sleeper.txt ||
			fail "the log= refused after stop was not said"
	fi
	touch "$work"/stop
	wait $pid || fail "the program failed"
	cat sleeper.txt att.log att2.log
	grep -q "ticked" sleeper.txt || fail "the program did not run on"
	grep -q "^jinst: start: " att.log || fail "no start line in the log"
	grep -q "^jinst: stop: " att.log || fail "no stop line in the log"
	if instrumented att.log; then
		grep -qE "^jinstcheck/Sleeper	tick	\(\)V	[1-9]" att.tsv || fail "tick() not counted"
		grep -q "^jinst: start: [1-9]" att.log || fail "no class retransformed at start"
		grep -q "^jinst: stop: [1-9]" att.log || fail "no class retransformed at stop"
		grep -q "^jinst: stop: [1-9][0-9]* classes given back their original bytes" att.log ||
			fail "no class given back its original bytes at stop"
		# The VM's word: tick() ran other code while tracing, and every
		# method runs its original code again after stop.
		[[ $(grep "^tick	" before.txt) != "$(grep "^tick	" during.txt)" ]] ||
			fail "tick() ran its original code while tracing: $(grep "^tick	" during.txt)"
		cmp -s before.txt after.txt || fail "the code after stop is not the original: $(diff before.txt after.txt | head -6)"
		echo "Sleeper's $(wc -l <before.txt) methods: instrumented while tracing, their original bytecode again after stop"
	fi
	# trace=times through jcmd: the clock thread runs while tracing, and
	# stops at stop; the profile has the time of the naps.
	sleeper
	load "trace=times,include=jinstcheck.**,out=$work/tim,log=$work/tim.log"
	grep -q "return code: 0" jcmd.txt || fail "trace=times not loaded"
	sleep 0.5
	"$jcmd" $pid Thread.print >threads.txt 2>&1
	grep -q '"jinst clock"' threads.txt || fail "no clock thread while tracing times"
	load stop
	grep -q "return code: 0" jcmd.txt || fail "stop (times) failed"
	sleep 0.2
	"$jcmd" $pid Thread.print >threads.txt 2>&1
	! grep -q '"jinst clock"' threads.txt || fail "the clock thread runs on after stop"
	touch "$work"/stop
	wait $pid || fail "the program failed (times)"
	cat tim.log
	if instrumented tim.log; then
		# nap: hundreds of 2 ms sleeps in half a second, most of the time
		awk '$NF ~ /Sleeper.nap\(\)V$/ && $5 + 0 >= 100 { ok = 1 } END { exit !ok }' tim.txt ||
			fail "tim.txt: nap() not timed at 100 ms or more: $(grep nap tim.txt)"
		grep -q " jinstcheck/Sleeper.tick()V$" tim.txt || fail "tim.txt: tick() not counted"
	fi
	;;
osgi | strictloader)
	# Loaders that hand only java.* to their parent, with every class
	# traced: injected code must reach the hooks through a java.* name
	# (java/lang/$JinstHooks, docs/ARCHITECTURE.md, "How injected code reaches the runtime"). osgi: a bundle
	# under Apache Felix (Debian's libfelix-framework-java, which
	# scripts/setup.sh installs), no boot delegation configured; Felix 4
	# opens java.security to make its boot delegation loader, as it does
	# on JDK 8. strictloader: jinstcheck.StrictLoader, which also writes
	# the names it was asked for.
	if [[ $case == osgi ]]; then
		felix=${JINST_FELIX_JAR:-/usr/share/java/org.apache.felix.framework.jar}
		if [[ ! -f $felix ]]; then
			echo "SKIP: no Apache Felix at $felix (apt-get install libfelix-framework-java, or scripts/setup.sh)"
			exit 77
		fi
		o=$src/agent/tests/osgi
		"$home/bin/javac" --release 11 -cp "$felix" -d launcher "$o/jinstosgi/Launcher.java" &&
			"$home/bin/javac" --release 11 -cp "$felix" -d bundle "$o"/jinstosgi/bundle/*.java &&
			"$home/bin/jar" cfm bundle.jar "$o/MANIFEST.MF" -C bundle jinstosgi || { echo "FAIL: cannot build the bundle"; exit 1; }
		program=(--add-opens java.base/java.security=ALL-UNNAMED -cp "$felix:launcher" jinstosgi.Launcher cache bundle.jar)
		expect=$o/expected_counts.tsv
	else
		"$home/bin/javac" --release 11 -d strict "$src/agent/tests/strict/strictload/Main.java" || { echo "FAIL: javac"; exit 1; }
		program=(-cp "$checks" jinstcheck.StrictLoader strict names.txt)
		expect=$src/agent/tests/strict/expected_counts.tsv
	fi
	"$java" "${program[@]}" >plain.txt 2>plain.err || fail "the program fails untraced: $(tail -3 plain.err)"
	for run in "counts include=**" "times include=**" "counts include=jinstosgi.**,include=strictload.**"; do
		set -- $run
		name=$1-${2//[^a-z]/}
		rm -f names.txt
		"$java" -agentpath:"$lib"=trace=$1,$2,format=counts,out="$work/$name",log="$work/$name.log" "${program[@]}" \
			>out.txt 2>err.txt || fail "$run: the program failed: $(tail -3 err.txt)"
		cmp -s plain.txt out.txt || fail "$run: output differs: $(diff plain.txt out.txt | head -5)"
		cmp -s plain.err err.txt || fail "$run: stderr differs: $(diff plain.err err.txt | head -5)"
		! grep -h "NoClassDefFoundError\|IllegalAccessError\|ClassNotFoundException" out.txt err.txt | head -3 | grep . ||
			fail "$run: a class not found"
		while IFS= read -r line; do
			grep -qxF "$line" $name.tsv ||
				fail "$run: expected '$line', got '$(grep -F "$(cut -f1-3 <<<"$line")" $name.tsv)'"
		done <"$expect"
		echo "$run: $(grep -h 'classes instrumented' $name.log)"
		# The loader was asked for no name of jinst's runtime, and for no
		# name outside java.* and its package at all.
		if [[ $case == strictloader ]]; then
			! grep -v '^java\.\|^strictload\.' names.txt | grep . || fail "$run: the loader was asked for other names"
			echo "$run: the loader was asked for $(paste -sd' ' names.txt)"
		fi
	done
	cat plain.txt
	;;
javac)
	# javac compiling ~400 of the JDK's own sources (scripts/javac_workload.sh)
	# with every class traced, the JDK's included, under -Xverify:all: the
	# same class files, exit code and diagnostics as untraced, in time.
	# JINST_JAVAC_PACKAGES (a/b c/d) compiles fewer. A sampled run
	# (JINST_CORPUS_SAMPLE above 1, as CI's) compiles five packages beside
	# java.util, 126 of the 404 files (java.util itself, 121 more, took
	# the test from 88 to 145 s a JDK there); scripts/test-full.sh compiles
	# them all.
	if [[ -z ${JINST_JAVAC_PACKAGES:-} && ${JINST_CORPUS_SAMPLE:-1} != 1 ]]; then
		export JINST_JAVAC_PACKAGES="java/util/function java/util/stream java/util/regex java/util/zip java/math"
	fi
	part=all
	[[ -z ${JINST_JAVAC_PACKAGES:-} ]] || part=$(echo "$JINST_JAVAC_PACKAGES" | tr ' /' '+-')
	wl=${JINST_CORPUS:-/tmp/jinst-corpus}/javac/$(basename "$(readlink -f "$home")")-$part
	if ! bash "$src/scripts/javac_workload.sh" "$wl" "$home" >wl.txt 2>&1; then
		cat wl.txt
		echo "SKIP: no javac workload for $home (sources neither in the JDK nor fetchable)"
		exit 77
	fi
	cat wl.txt
	files=$(wc -l <"$wl/files.txt")
	# run NAME [JVM flags...]: javac on the workload into NAME/, timed, with
	# a deadline so that a deadlock fails instead of hanging.
	run() {
		local name=$1 t0 t1
		shift
		mkdir -p "$name"
		t0=$(date +%s%N)
		timeout -k 10 "${JINST_JAVAC_TIMEOUT:-600}" "$home/bin/javac" -J-Xverify:all "$@" @"$wl/javac.args" \
			-d "$name/classes" >"$name/stdout.txt" 2>"$name/stderr.txt"
		echo $? >"$name/rc"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >"$name/ms"
		echo "$name: exit $(cat "$name/rc"), $(($(cat "$name/ms") / 1000)).$(($(cat "$name/ms") % 1000 / 100)) s," \
			"$(find "$name/classes" -name '*.class' 2>/dev/null | wc -l) class files"
	}
	run plain
	[[ $(cat plain/rc) == 0 ]] || fail "javac fails untraced: $(head -5 plain/stderr.txt)"
	for mode in counts times; do
		fmt=counts
		[[ $mode == times ]] && fmt=counts+profile+folded
		run $mode -J-agentpath:"$lib=trace=$mode,include=**,format=$fmt,out=$work/$mode/trace,log=$work/$mode/agent.log"
		[[ $(cat $mode/rc) != 124 && $(cat $mode/rc) != 137 ]] || fail "$mode: javac did not finish in ${JINST_JAVAC_TIMEOUT:-600} s"
		[[ $(cat $mode/rc) == $(cat plain/rc) ]] || fail "$mode: exit $(cat $mode/rc), untraced $(cat plain/rc)"
		cmp -s plain/stdout.txt $mode/stdout.txt || fail "$mode: stdout differs: $(diff plain/stdout.txt $mode/stdout.txt | head -5)"
		cmp -s plain/stderr.txt $mode/stderr.txt || fail "$mode: diagnostics differ: $(diff plain/stderr.txt $mode/stderr.txt | head -5)"
		diff -r plain/classes $mode/classes >$mode/classes.diff 2>&1 || fail "$mode: class files differ: $(head -5 $mode/classes.diff)"
		! grep -hE "VerifyError|NoClassDefFoundError|StackOverflowError|LinkageError|ClassCircularityError|ExceptionInInitializerError|OutOfMemoryError|hs_err" \
			$mode/stdout.txt $mode/stderr.txt $mode/agent.log | head -5 | grep . || fail "$mode: a VM error was reported"
		cat $mode/agent.log
		# Every failure the agent logs: per class, per batch, per output.
		! grep -E "left unchanged:|failed:|cannot|could not|not written| [1-9][0-9]* failed,| [1-9][0-9]* left unchanged on error" \
			$mode/agent.log | head -5 | grep . || fail "$mode: the agent logged a failure"
		grep -q "^jinst: [1-9][0-9]* classes instrumented" $mode/agent.log || fail "$mode: no class instrumented"
		c=$mode/trace.tsv
		[[ -s $c ]] || { fail "$mode: no counts"; continue; }
		# javac's own work, counted exactly: one parse per file, one class
		# file written per class file on disk, one compile.
		grep -qP "^com/sun/tools/javac/parser/JavacParser\tparseCompilationUnit\t\(\)Lcom/sun/tools/javac/tree/JCTree\\\$JCCompilationUnit;\t$files\$" $c ||
			fail "$mode: JavacParser.parseCompilationUnit not counted $files times: $(grep -P 'JavacParser\tparseCompilationUnit' $c)"
		n=$(find plain/classes -name '*.class' | wc -l)
		grep -qP "^com/sun/tools/javac/jvm/ClassWriter\twriteClass\t.*\t$n\$" $c ||
			fail "$mode: ClassWriter.writeClass not counted $n times: $(grep -P 'ClassWriter\twriteClass\t' $c)"
		grep -qP "^com/sun/tools/javac/main/JavaCompiler\tcompile\t.*\t1\$" $c || fail "$mode: JavaCompiler.compile not counted once"
		# and the JDK's, broadly: thousands of javac and java.util methods,
		# some called millions of times.
		jc=$(grep -c "^com/sun/tools/javac/" $c)
		ju=$(grep -c "^java/util/" $c)
		big=$(awk -F'\t' -v n=$((1000 * files)) '$1 ~ /^java\/util\// && $4 >= n' $c | wc -l)
		echo "$mode: $(wc -l <$c) methods counted, $jc of com/sun/tools/javac, $ju of java/util ($big of them >= $((1000 * files)) calls)," \
			"$(awk -F'\t' '{ s += $4 } END { printf "%.0f", s }' $c) calls"
		((jc >= 2000)) || fail "$mode: only $jc com/sun/tools/javac methods counted"
		((ju >= 300 && big >= 1)) || fail "$mode: only $ju java/util methods counted, $big with $((1000 * files)) calls"
		echo "$mode: $(awk '{ printf "%.1f", $1 / 1000 }' $mode/ms) s traced vs $(awk '{ printf "%.1f", $1 / 1000 }' plain/ms) s untraced"
	done
	# trace=times: a ranked profile and folded stacks rooted in javac's main.
	# (javac's other counts vary a little from run to run: 536 of 9400
	# lines differed between a trace=counts and a trace=times run.)
	if [[ -s times/trace.txt && -s times/trace.folded ]]; then
		head -12 times/trace.txt
		grep -q " com/sun/tools/javac/main/Main.compile(" times/trace.txt || fail "times: no Main.compile in the profile"
		grep -q "^com/sun/tools/javac/Main.main;com/sun/tools/javac/Main.compile;" times/trace.folded ||
			fail "times: no folded stack from javac's main"
		# Each method's self time within its inclusive time; the stacks
		# add up to the profile's total (one time, two views).
		awk '$1 ~ /^[0-9]+$/ && $5 != "-" && $5 > $6 { print; bad = 1 } END { exit bad }' times/trace.txt ||
			fail "times: a method whose self time exceeds its inclusive time"
		total=$(profile_total times/trace.txt)
		folded=$(folded_total times/trace.folded)
		echo "times: total $total ms, folded stacks $folded ms"
		awk -v a="$total" -v b="$folded" 'BEGIN { exit !(a - b < 0.002 && b - a < 0.002) }' ||
			fail "times: the folded stacks hold $folded ms, the profile $total"
	else
		fail "times: no profile or folded stacks"
	fi
	echo "times: $(wc -l <times/trace.folded) folded stacks, $(($(stat -c %s times/trace.folded) / 1000000)) MB," \
		"the deepest $(awk -F';' 'NF > d { d = NF } END { print d }' times/trace.folded) frames"
	# (gigabytes: not kept)
	rm -f times/trace.folded
	;;
example_*)
	# examples/NAME/run.sh prints and writes what examples/NAME/README.md says.
	name=${case#example_}
	readme=$src/examples/$name/README.md
	out=$work/out
	JAVA_HOME=$home JINST_AGENT=$lib OUT=$out bash "$src/examples/$name/run.sh" >run.txt 2>&1 || fail "run.sh failed"
	cat run.txt
	# block N: the README's Nth ``` block
	block() {
		awk -v n="$1" '/^```/ { k++; next } k == 2 * n - 1' "$readme"
	}
	case $name in
	counts)
		cmp -s <(block 1) "$out/hello.tsv" || fail "hello.tsv is not the README's: $(diff <(block 1) "$out/hello.tsv" | head -5)"
		grep -qxF "$(block 2)" run.txt || fail "the program did not print the README's line"
		;;
	profile)
		# The README's sample: the same methods with the same calls; the
		# times vary, the invariants it lists hold.
		python3 - "$out/profile.txt" <(block 1) <<'PY' || fail "profile.txt is not as the README says"
import sys
def parse(path):
    lines = open(path).read().splitlines()
    total = float(lines[0].split("total = ")[1].split(")")[0])
    first = [i for i, l in enumerate(lines) if l.split()[:1] == ["rank"]][0] + 1
    rows = [l.split() for l in lines[first:-1]]
    return total, rows
total, rows = parse(sys.argv[1])
_, sample = parse(sys.argv[2])
calls = {r[6]: int(r[3]) for r in rows}
assert calls == {r[6]: int(r[3]) for r in sample}, (calls, sample)
assert rows[0][6] == "profile/Profile.isPrime(I)Z" and rows[0][4] == rows[0][5], rows[0]
main = [r for r in rows if r[6].startswith("profile/Profile.main(")][0]
assert float(main[5]) == total, (main, total)
assert rows[-1][2] == "100.00%", rows[-1]
ms = [r for r in rows if r[6].startswith("profile/Profile.mergeSort(")][0]
assert float(ms[5]) < total, ms
print("profile: as the README says;", len(rows), "methods, isPrime first")
PY
		;;
	flamegraph)
		f=$out/profile.folded
		[[ -s $f ]] || fail "no profile.folded"
		! grep -v -e "^profile/Profile.main[; ]" -e "^# jinst folded stacks: clock wall, unit ns" "$f" | grep . ||
			fail "a stack that does not start at main"
		[[ $(sort -k2,2nr "$f" | head -1 | cut -d' ' -f1) == "profile/Profile.main;profile/Profile.countPrimes;profile/Profile.isPrime" ]] ||
			fail "the heaviest stack is not main;countPrimes;isPrime"
		depth=$(awk -F';' '{ print NF }' "$f" | sort -n | tail -1)
		most=$(sed -n 's/.*the deepest can have \([0-9]*\) frames.*/\1/p' "$readme")
		[[ -n $most ]] && ((depth > 3 && depth <= most)) || fail "the deepest stack has $depth frames, not 4 to the README's $most"
		grep -q "the deepest stack: $depth frames" run.txt || fail "run.sh did not print the depth"
		grep -q '<script id="data" type="application/json">{"title":' "$out/profile.html" || fail "no flame graph page"
		grep -q "flamegraph.pl --countname ns" run.txt || [[ -s $out/profile.svg ]] || fail "neither an svg nor how to draw one"
		;;
	attach)
		[[ $(grep -c "^return code: 0" run.txt) == 3 ]] || fail "not three jcmd loads returning 0"
		n1=$(awk -F'\t' '$1 == "attach/Server" && $2 == "handle" { print $4 }' "$out/dump.tsv")
		n2=$(awk -F'\t' '$1 == "attach/Server" && $2 == "handle" { print $4 }' "$out/server.tsv")
		m=$(sed -n 's/^stopped after \([0-9]*\) requests$/\1/p' "$out/server.txt")
		echo "handle(): $n1 at dump, $n2 at stop, $m requests in all"
		[[ -n $n1 && -n $n2 && -n $m ]] && ((n1 > 0 && n2 > n1 && m > n2)) || fail "the counts do not grow as the README says"
		! grep -q "main" "$out/server.tsv" || fail "main was counted"
		cmp -s <(block 2 | sed "s|OUT|$out|") "$out/agent.log" ||
			fail "the log is not the README's: $(diff <(block 2 | sed "s|OUT|$out|") "$out/agent.log")"
		;;
	coverage)
		# The README's two summaries, the reports it names, the XML
		# valid against JaCoCo's DTD when Debian's JaCoCo is there.
		holds() { python3 -c 'import sys; sys.exit(sys.argv[2] + "\n" not in open(sys.argv[1]).read())' run.txt "$1"; }
		holds "$(block 1)" || fail "the launch summary is not the README's"
		holds "$(block 2)" || fail "the attached summary is not the README's"
		[[ $(grep -c "^return code: 0" run.txt) == 3 ]] || fail "not three jcmd loads returning 0"
		for f in html/index.html attach-html/index.html launch.xml attach.xml; do
			[[ -s $out/$f ]] || fail "no $f"
		done
		grep -q '<counter type="LINE" missed="13" covered="23"/>' "$out/launch.xml" || fail "launch.xml's line totals"
		grep -qF "HTML report: $out/html/index.html" run.txt || fail "run.sh did not name the HTML report"
		grep -q "^jinst: stop: 1 classes given back their original bytes" "$out/attach.log" || fail "stop did not restore"
		dtd=/usr/share/java/org.jacoco.report.jar
		if [[ -f $dtd ]] && command -v xmllint >/dev/null; then
			python3 "$src/tests/coverage/compare_xml.py" --validate "$out/launch.xml" "$out/attach.xml" ||
				fail "the XML is not valid against JaCoCo's DTD"
		fi
		;;
	esac
	;;
offline)
	# A class instrumented offline through the library (instrument_tree, as
	# the offline tool will), then loaded under the agent, is not
	# instrumented again: the VM runs the same bytecode with the agent as
	# without it (GetBytecodes, through the witness agent), and the agent
	# says why it left the class alone.
	tool=${JINST_INSTRUMENT_TREE:-} rtjar=${JINST_RUNTIME_JAR:-}
	[[ -x $tool && -f $rtjar ]] || { echo "SKIP: no instrument_tree or jinst-runtime.jar"; exit 77; }
	"$tool" offline "$checks" >offline.txt || fail "instrument_tree failed: $(cat offline.txt)"
	jcmd=$home/bin/jcmd
	witness=$(dirname "$fixture")/libjinst_bytecodes.so
	# run_witnessed OUT [JVM OPTION...]: Sleeper from the offline classes,
	# its methods' bytecode as the VM runs them written to OUT
	run_witnessed() {
		local out=$1 pid
		shift
		rm -f stop
		"$java" "$@" -cp "offline:$rtjar" jinstcheck.Sleeper "$work"/stop >"$out.run" 2>&1 &
		pid=$!
		for _ in $(seq 100); do
			grep -q running "$out.run" && break
			sleep 0.1
		done
		"$jcmd" $pid JVMTI.agent_load "$witness" "\"class=jinstcheck/Sleeper,out=$work/$out\"" >witness.txt 2>&1
		grep -q "return code: 0" witness.txt || fail "witness: $(cat witness.txt)"
		touch stop
		wait $pid || fail "the program failed: $(cat "$out.run")"
	}
	run_witnessed plain.txt
	run_witnessed agent.txt "-agentpath:$lib=trace=counts,include=jinstcheck.**,log=$work/agent.log"
	cat agent.log
	grep -qE "^tick	\(\)V	.*b8" plain.txt || fail "tick() was not instrumented offline: $(cat plain.txt)"
	cmp -s plain.txt agent.txt || fail "the agent changed the offline class: $(diff plain.txt agent.txt)"
	grep -q "^jinst: jinstcheck/Sleeper: already instrumented (it has the JinstInstrumented attribute)" agent.log ||
		fail "the agent does not say why it left Sleeper alone"
	grep -q "ticked" agent.txt.run || fail "the program did not run under the agent"
	;;
coverage | coverage_counts)
	# The coverage fixture (agent/tests/cov) under -Xverify:all: what ran
	# has its probes set, what did not has them clear, per method through
	# the shared placement (cov_methods); counts are exact.
	cov=$(dirname "$programs")/cov
	cm=${JINST_COV_METHODS:?}
	n=5
	[[ $case == coverage_counts ]] && n=37
	"$java" -Xverify:all -cp "$cov" jinstcov.Cov $n >plain.txt 2>&1 || fail "the fixture fails: $(cat plain.txt)"
	# methods CLASS DATA NAME: the probe values of method NAME
	methods() {
		"$cm" "$cov/$1.class" "$2" >"$2.$(basename "$1").txt" || fail "$2: $(cat "$2.$(basename "$1").txt")"
		sed -n "s/^$3 [^:]*: *//p" "$2.$(basename "$1").txt"
	}
	# all V LIST: every value is V; some V LIST: one is
	all() { [[ -n $2 ]] && ! tr ' ' '\n' <<<"$2" | grep -vqx "$1"; }
	some() { tr ' ' '\n' <<<"$2" | grep -qx "$1"; }
	# Booleans go to the flat array (java.lang.$JinstProbes.P) while it has
	# room: the third run makes it 12 probes, so that Cov (more) asks by
	# class id and Cov$Other (fewer) takes the flat array.
	if [[ $case == coverage ]]; then
		runs=("coverage" "coverage,include=jinstcov.**,trace=counts" "coverage,session=small")
	else
		runs=("coverage=counts" "coverage=counts,include=jinstcov.**,trace=counts")
	fi
	for opts in "${runs[@]}"; do
		name=run${#opts}
		small=()
		[[ $opts == *session=small ]] && small=(-Djinst.flat=12)
		"$java" -Xverify:all "${small[@]}" -agentpath:"$lib=$opts,out=$work/$name,log=$work/$name.log" -cp "$cov" \
			jinstcov.Cov $n >out.txt 2>&1 || fail "$opts: the fixture failed: $(cat out.txt)"
		cmp -s plain.txt out.txt || fail "$opts: output differs: $(diff plain.txt out.txt | head -5)"
		cat $name.log
		written=$(grep "^jinst: wrote .*\.cov: " $name.log | tail -1)
		[[ $written =~ ^jinst:\ wrote\ $work/$name\.cov:\ 2\ classes,\ [1-9][0-9]*\ probes,\ [1-9][0-9]*\ hit ]] ||
			fail "$opts: the write line: $written"
		flat=$(sed -n "s/^jinst: wrote .*\.cov: .* hit (\([0-9]*\) of this session's probes in the flat array)$/\1/p" $name.log)
		if [[ $case == coverage_counts ]]; then
			[[ -z $flat && $written == *" hit" ]] || fail "$opts: counts in the flat array: $written"
		elif ((${#small[@]})); then
			[[ -n $flat ]] && ((flat > 0 && flat <= 12)) || fail "$opts: flat array of 12: $flat probes taken"
		else
			[[ -n $flat ]] && ((flat > 12)) || fail "$opts: both classes in the flat array expected: $flat probes"
		fi
		instrumented $name.log || continue
		! grep -E "left unchanged:|failed:|cannot|not written" $name.log | head -3 | grep . || fail "$opts: the agent logged a failure"
		[[ -s $name.cov ]] || { fail "$opts: no $name.cov"; continue; }
		# Only the fixture's classes (the JDK is excluded), each with the
		# identity and probe count of its class file; Unused never loaded.
		classes=$("$cm" "$cov/jinstcov/Cov.class" $name.cov | head -1)
		[[ $classes == "jinstcov/Cov "*" probes "* ]] || fail "$opts: Cov: $classes"
		loop=$(methods jinstcov/Cov $name.cov loop)
		never=$(methods jinstcov/Cov $name.cov never)
		branch=$(methods jinstcov/Cov $name.cov branch)
		sw=$(methods jinstcov/Cov $name.cov sw)
		other=$(methods 'jinstcov/Cov$Other' $name.cov '<init>')
		echo "$opts: loop: $loop; never: $never; branch: $branch; sw: $sw; Other.<init>: $other"
		all 0 "$never" || fail "$opts: never() has probes set: $never"
		some 0 "$branch" && ! all 0 "$branch" || fail "$opts: branch(1): one side only expected: $branch"
		[[ $(tr ' ' '\n' <<<"$sw" | grep -vcx 0) == 1 ]] || fail "$opts: sw(2): one case expected: $sw"
		some 0 "$other" && ! all 0 "$other" || fail "$opts: Other.<init>: one side of v > 0 expected: $other"
		if [[ $case == coverage ]]; then
			all 1 "$loop" || fail "$opts: loop(): not every probe set: $loop"
		else
			# the loop's body ran N times, its entry and exit once
			some $n "$loop" && all '[1-9][0-9]*' "$loop" || fail "$opts: loop($n): no probe counted $n: $loop"
			! tr ' ' '\n' <<<"$loop" | awk -v n=$n '$1 > n { bad = 1 } END { exit !bad }' || fail "$opts: loop: a count over $n: $loop"
		fi
		if [[ $opts == *trace=counts* ]]; then
			grep -qP "^jinstcov/Cov\tloop\t\(I\)I\t1$" $name.tsv || fail "$opts: trace: loop not counted once"
		fi
	done
	# The JDK stays out by default: the fixture's two classes, nothing else
	# (Cov$Unused is never loaded).
	listed=$("$cm" - run${#runs[0]}.cov | grep -v '^session ' | cut -d' ' -f1 | paste -sd' ')
	[[ $listed == 'jinstcov/Cov jinstcov/Cov$Other' ]] || fail "classes in the data: $listed"
	# append=y merges into the file there is (booleans or, counts add), with
	# a session each; append=n replaces it.
	"$java" -agentpath:"$lib=${runs[0]},out=$work/app,session=one" -cp "$cov" jinstcov.Cov $n >/dev/null 2>&1
	"$java" -agentpath:"$lib=${runs[0]},out=$work/app,session=two,append=y" -cp "$cov" jinstcov.Cov $n >/dev/null 2>&1
	sessions=$("$cm" - app.cov | sed -n 's/^session //p' | paste -sd' ')
	[[ $sessions == "one two" ]] || fail "append=y: sessions '$sessions'"
	loop=$(methods jinstcov/Cov app.cov loop)
	if [[ $case == coverage ]]; then
		all 1 "$loop" || fail "append=y: loop: $loop"
	else
		some $((2 * n)) "$loop" || fail "append=y: loop($n) twice: no probe counted $((2 * n)): $loop"
	fi
	"$java" -agentpath:"$lib=${runs[0]},out=$work/app,session=three" -cp "$cov" jinstcov.Cov $n >/dev/null 2>&1
	sessions=$("$cm" - app.cov | sed -n 's/^session //p' | paste -sd' ')
	[[ $sessions == "three" ]] || fail "append=n: sessions '$sessions'"
	echo "append: loop $loop"
	;;
coverage_attach)
	# Attach coverage to a running program, exercise code, dump: only what
	# ran after the attach is covered; reset; stop restores the original
	# bytecode (the VM's word, through the witness agent); attaching again
	# starts a new session.
	jcmd=$home/bin/jcmd
	cov=$(dirname "$programs")/cov
	cm=${JINST_COV_METHODS:?}
	witness=$(dirname "$fixture")/libjinst_bytecodes.so
	rm -f phase stop
	"$java" -Xverify:all -cp "$cov" jinstcov.Attach "$work" >prog.txt 2>&1 &
	pid=$!
	waitfor() {
		for _ in $(seq 200); do
			grep -q "$1" prog.txt && return 0
			sleep 0.05
		done
		fail "the program never printed '$1'"
	}
	waitfor "attach: phase early"
	# early() runs only before the attach
	echo idle >phase
	waitfor "attach: phase idle"
	load() {
		"$jcmd" $pid JVMTI.agent_load "$lib" "\"$1\"" >jcmd.txt 2>&1
		grep -q "return code: 0" jcmd.txt
	}
	bytecodes() {
		"$jcmd" $pid JVMTI.agent_load "$witness" "\"class=jinstcov/Attach,out=$work/$1\"" >witness.txt 2>&1
		grep -q "return code: 0" witness.txt && [[ -s $1 ]] || fail "no bytecodes in $1: $(cat witness.txt)"
	}
	values() { "$cm" "$cov/jinstcov/Attach.class" "$1" | sed -n "s/^$2 [^:]*: *//p"; }
	bytecodes before.txt
	load "coverage,include=jinstcov.**,out=$work/a,log=$work/a.log,session=first" || fail "coverage not loaded: $(cat jcmd.txt)"
	bytecodes during.txt
	echo late >phase
	waitfor "attach: phase late"
	sleep 0.2
	load dump || fail "dump failed"
	cp a.cov first.cov
	early=$(values first.cov early) late=$(values first.cov late) tick=$(values first.cov tick)
	echo "after attach: early $early, late $late, tick $tick"
	[[ -n $early && ! $early =~ 1 ]] || fail "early() ran only before the attach, yet: '$early'"
	[[ $late =~ ^1( 1)*$ ]] || fail "late() ran after the attach: '$late'"
	[[ $tick =~ ^1( 1)*$ ]] || fail "tick() ran after the attach: '$tick'"
	# reset: what ran before it is forgotten
	echo none >phase
	waitfor "attach: phase none"
	load reset || fail "reset failed: $(cat jcmd.txt)"
	sleep 0.2
	load dump || fail "dump after reset failed"
	late=$(values a.cov late) tick=$(values a.cov tick)
	echo "after reset: late $late, tick $tick"
	[[ -n $late && ! $late =~ 1 ]] || fail "late() did not run after the reset, yet: '$late'"
	[[ $tick =~ ^1( 1)*$ ]] || fail "tick() ran after the reset: '$tick'"
	load stop || fail "stop failed"
	bytecodes after.txt
	[[ $(grep "^tick	" before.txt) != "$(grep "^tick	" during.txt)" ]] || fail "tick() was not instrumented while attached"
	cmp -s before.txt after.txt || fail "the code after stop is not the original: $(diff before.txt after.txt | head -6)"
	# Again: a new session, with its own data.
	echo late >phase
	load "coverage,include=jinstcov.**,out=$work/b,log=$work/b.log,session=second" || fail "a second coverage session was refused: $(cat jcmd.txt; cat a.log)"
	sleep 0.2
	load stop || fail "the second stop failed"
	late=$(values b.cov late)
	[[ $late =~ ^1( 1)*$ ]] || fail "second session: late() not covered: '$late'"
	# What each session's file records, in the same words and figures:
	# the same classes and probes.
	recorded() { grep "^jinst: wrote .*\.cov: " "$1" | tail -1 | sed 's/^jinst: wrote [^:]*: //; s/, [0-9]* hit//'; }
	echo "session 1: $(recorded a.log); session 2: $(recorded b.log)"
	[[ $(recorded a.log) =~ ^[1-9][0-9]*\ class(es)?,\ [1-9][0-9]*\ probes ]] || fail "session 1's write line: $(recorded a.log)"
	[[ $(recorded a.log) == "$(recorded b.log)" ]] || fail "the sessions' write lines differ: $(recorded a.log); $(recorded b.log)"
	grep -q "starting again after stop" a.log b.log 2>/dev/null || fail "no new session in the log"
	bytecodes after2.txt
	cmp -s before.txt after2.txt || fail "the code after the second stop is not the original"
	# trace never ran here: it may start after coverage's stop; and again
	# after its own, alone and with coverage (both are restartable).
	load "trace=counts,include=jinstcov.**,out=$work/t,log=$work/t.log" || fail "trace after coverage refused: $(cat jcmd.txt)"
	sleep 0.1
	load stop || fail "trace's stop failed"
	grep -qP "^jinstcov/Attach\ttick\t\(\)V\t[1-9]" t.tsv || fail "trace after coverage: tick() not counted"
	load "trace=counts,include=jinstcov.**,out=$work/t2" || fail "trace refused after its stop: $(cat jcmd.txt)"
	sleep 0.1
	load stop || fail "trace's second stop failed"
	grep -qP "^jinstcov/Attach\ttick\t\(\)V\t[1-9]" t2.tsv || fail "trace's second session: tick() not counted"
	load "coverage,include=jinstcov.**,out=$work/c,trace=counts" || fail "coverage with trace refused: $(cat jcmd.txt)"
	sleep 0.1
	load stop || fail "coverage with trace: stop failed"
	[[ -s c.cov && -s c.tsv ]] || fail "coverage with trace: $(ls c.* 2>&1)"
	touch stop
	wait $pid || fail "the program failed"
	cat prog.txt a.log b.log 2>/dev/null
	grep -q "ticked" prog.txt || fail "the program did not run on"
	;;
coverage_javac)
	# javac compiling the test programs with coverage on every class, the
	# JDK's included, under -Xverify:all: the same class files and output
	# as a plain run, with javac's own classes covered; booleans, and
	# counts with trace=counts in the same transformation.
	srcs=("$src"/tests/jvm/programs/jinsttest/*.java)
	run() {
		local name=$1
		shift
		mkdir -p $name
		"$home/bin/javac" -J-Xverify:all "$@" --release 11 -d $name/classes "${srcs[@]}" >$name/out.txt 2>&1
		echo $? >$name/rc
	}
	run plain
	[[ $(cat plain/rc) == 0 ]] || fail "javac fails plain: $(head -5 plain/out.txt)"
	for opts in "coverage,include=**" "coverage=counts,trace=counts,include=**"; do
		name=$(tr -c 'a-z\n' '_' <<<"${opts%%,include*}")
		run $name -J-agentpath:"$lib=$opts,out=$work/$name/data,log=$work/$name/agent.log"
		[[ $(cat $name/rc) == 0 ]] || fail "$opts: javac failed: $(head -5 $name/out.txt)"
		cmp -s plain/out.txt $name/out.txt || fail "$opts: output differs: $(diff plain/out.txt $name/out.txt | head -5)"
		diff -r plain/classes $name/classes >$name/classes.diff 2>&1 || fail "$opts: class files differ: $(head -5 $name/classes.diff)"
		! grep -hE "VerifyError|NoClassDefFoundError|LinkageError|hs_err" $name/out.txt $name/agent.log | head -3 | grep . ||
			fail "$opts: a VM error was reported"
		! grep -E "left unchanged:|failed:|cannot|not written" $name/agent.log | head -3 | grep . || fail "$opts: the agent logged a failure"
		grep -q "^jinst: [1-9][0-9]* classes instrumented" $name/agent.log || fail "$opts: no class instrumented"
		grep -E "^jinst: wrote .*data.cov: [0-9]+ classes" $name/agent.log || fail "$opts: no data written"
		n=$(sed -n 's/^jinst: wrote .*data.cov: \([0-9]*\) classes.*/\1/p' $name/agent.log | tail -1)
		((${n:-0} > 1000)) || fail "$opts: only ${n:-0} classes in the data"
	done
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
verdict "$case"
