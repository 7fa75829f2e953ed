#!/usr/bin/env bash
# jinst attach|dump|stop, and the errors the agent reports where the user
# looks, in real VMs.
#   attach_cli.sh CASE JAVA_HOME LIBJINST JINST PROGRAMS CHECKS WORK
# CASE:
#   e2e      attach, dump, stop through jinst on a running program; attach
#            again after stop (coverage, which never ran there)
#   badopt   a bad option: the reason, exit 2, and the target untouched (no
#            attach socket, no attach file, no thread dump, no agent line)
#   errors   no such process, not a JVM (left alive: no signal sent), attach
#            disabled (on the command line, in an @argfile), a thread id,
#            a VM still starting, -Xrs, a listener that never comes (timeout)
#   dynamic  (JDK 21 on) -XX:-EnableDynamicAgentLoading: refused before
#            touching the VM, or the VM's refusal said as one
#   container  a VM in another mount namespace: libjinst.so copied into
#            its /tmp (root only)
#   jcmd     through jcmd, a refused load gives a non-zero return code
#   out      an unwritable out= refused at start (launch and attach), and
#            append=y over an output it cannot add to (a .cov of a newer
#            format or cut short, a folder); out=DIR/ writes jinst-PID.*
#            into DIR
#   dropped  trace=events beyond maxevents: the number dropped, on the
#            console and in the output
#   formats  one write's formats agree: the calls of a method that runs on
#            meanwhile are the same in OUT.tsv, .txt and .html, at each
#            dump and at stop
#   foreign  HPROF's, JaCoCo's and async-profiler's names get their
#            suggestion, from the VM and from jinst attach
#   installed  cmake --install; the installed jinst loads the installed
#            libjinst.so
# Exit 0 passed, 1 failed, 77 skipped (no such JDK, or a sanitized build
# without its runtimes).
set -uo pipefail
case=$1 home=$2 lib=$3 jinst=$4 programs=$5 checks=$6 work=$7
source "${BASH_SOURCE%/*}/../../tests/lib.sh"
need_jdk "$home"
# (java alone: the sanitizer runtimes and their options)
java_env=(env)
sanitized && java_env=(env LD_PRELOAD="$JINST_PRELOAD" "${san_env[@]}")
# A refused load makes HotSpot unload the library, and JDK 17's
# os::dll_unload then reads its name after dlclose freed it: harmless, but
# ASan aborts the VM on it (jvm.sh attach). Sanitized builds skip refusals
# that reach a VM.
refusals=yes
[[ ${JINST_SANITIZED:-OFF} != ON ]] || refusals=
workdir "$work"

# sleeper NAME [JVM ARGS...]: starts the program to attach to (pid), its
# stdout and stderr in NAME.out and NAME.err, until it runs; $spin, when
# set, is its second argument.
sleeper() {
	local name=$1
	shift
	rm -f "$work/stop-$name"
	"${java_env[@]}" "$java" "$@" -cp "$checks" jinstcheck.Sleeper "$work/stop-$name" ${spin:+"$spin"} >"$name.out" 2>"$name.err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q running "$name.out" && break
		sleep 0.1
	done
}
# finish NAME: ends the sleeper and waits for it
finish() {
	touch "$work/stop-$1"
	wait "$pid" || fail "$1: the program failed"
}
# att WHAT ARGS...: jinst WHAT ARGS, its exit status in rc, its output in jinst.txt
att() {
	"$jinst" "$@" >jinst.txt 2>&1
	rc=$?
	echo "\$ jinst $* -> $rc"
	cat jinst.txt
}
# untouched NAME: the target never started its attach listener nor got a signal
untouched() {
	[[ ! -e /proc/$pid/root/tmp/.java_pid$pid ]] || fail "$1: the attach listener was started"
	[[ ! -e /proc/$pid/cwd/.attach_pid$pid ]] || fail "$1: an attach file was left"
	! grep -q "Full thread dump" "$1.out" || fail "$1: the target got SIGQUIT (a thread dump)"
	! grep -q "^jinst" "$1.err" || fail "$1: the agent ran in the target: $(cat "$1.err")"
}

case $case in
e2e)
	sleeper e2e
	if [[ -n $refusals ]]; then
		att dump "$pid"
		[[ $rc == 1 ]] || fail "dump before any attach exited $rc"
		grep -q "^jinst dump: process $pid has no jinst session, nothing to dump: start one with jinst attach $pid OPTIONS (nothing was loaded into it)" jinst.txt ||
			fail "dump before any attach: not said that no session runs"
		# asked through agentProperties: no agent loaded (JDK 21 on would warn)
		! grep -q -e "^jinst" -e "loaded dynamically" e2e.err || fail "dump before any attach loaded the agent: $(cat e2e.err)"
	fi
	att attach "$pid" "trace=counts,include=jinstcheck.**,out=$work/att"
	[[ $rc == 0 ]] || fail "attach exited $rc"
	grep -q "^jinst: recording trace, include=jinstcheck.\*\*; outputs $work/att.\* replaced" jinst.txt ||
		fail "attach did not print the agent's first line"
	grep -q "^jinst attach: process $pid: done (return code 0)" jinst.txt || fail "attach printed no status"
	sleep 0.3
	att dump "$pid"
	[[ $rc == 0 && -f att.tsv ]] || fail "dump exited $rc, att.tsv: $(ls att.* 2>&1)"
	grep -q "^jinst: wrote $work/att.tsv" jinst.txt || fail "dump did not print the agent's line"
	first=$(awk '$2 == "tick" { print $4 }' att.tsv)
	# reset: trace cannot forget its counts, and says so (refused)
	if [[ -n $refusals ]]; then
		att attach "$pid" reset
		[[ $rc == 1 ]] || fail "reset of trace alone exited $rc"
		grep -q "^jinst: reset: nothing reset: trace cannot forget what it recorded" jinst.txt ||
			fail "reset of trace alone: not said that nothing was reset"
	fi
	sleep 0.3
	att stop "$pid"
	[[ $rc == 0 ]] || fail "stop exited $rc"
	grep -q "^jinst: stop: [1-9][0-9]* classes given back their original bytes" jinst.txt ||
		fail "stop did not print the agent's lines"
	second=$(awk '$2 == "tick" { print $4 }' att.tsv)
	echo "tick(): $first at dump, $second at stop"
	[[ $first -gt 0 && $second -gt $first ]] || fail "tick() not counted, or not counted on: $first, $second"
	if [[ -n $refusals ]]; then
		att dump "$pid"
		[[ $rc == 1 ]] || fail "dump after stop exited $rc"
		grep -q "^jinst: the jinst session of this VM (session 1, trace) was stopped, nothing to dump: start a new one with jinst attach $pid OPTIONS" jinst.txt ||
			fail "the agent's refusal did not reach the terminal"
		grep -q "refused (return code -1); its reason is above" jinst.txt || fail "no status for the refusal"
	fi
	# A new session after stop: coverage never ran in this VM.
	att attach "$pid" "coverage,include=jinstcheck.**,out=$work/cov"
	[[ $rc == 0 ]] || fail "attach (coverage) after stop exited $rc"
	att reset "$pid"
	[[ $rc == 0 ]] && grep -q "^jinst: reset: coverage from zero$" jinst.txt || fail "jinst reset of coverage: exit $rc"
	grep -q "^jinst reset: process $pid: done (return code 0)" jinst.txt || fail "jinst reset printed no status"
	# messages of a session that is not tracing speak of what it records
	if [[ -n $refusals ]]; then
		att attach "$pid" "coverage,include=jinstcheck.**,out=$work/cov"
		[[ $rc == 1 ]] || fail "a second attach (coverage) exited $rc"
		grep -q "^jinst: a jinst session (session 2, coverage) runs in this VM already; a new one can start after jinst stop $pid" jinst.txt ||
			fail "a second attach: not said which session runs"
	fi
	att stop "$pid"
	[[ $rc == 0 && -s cov.cov ]] || fail "stop (coverage) exited $rc, cov.cov: $(ls cov.* 2>&1)"
	# its summary: no figure of trace's, which is off
	grep -q "^jinst: [1-9][0-9]* classes instrumented, .* loaded from inside the hook$" jinst.txt ||
		fail "coverage alone: the summary is not the core's alone: $(grep 'classes instrumented' jinst.txt)"
	finish e2e
	grep -q "ticked" e2e.out || fail "the program did not run on"
	;;
badopt)
	sleeper badopt
	for opt in trace=bogus frobnicate file=x trace=counts,format=chrome maxevents=1 include=a++b; do
		att attach "$pid" "$opt"
		[[ $rc == 2 ]] || fail "$opt: exit $rc, not 2"
		grep -q "^jinst attach: .*${opt%%[=,]*}" jinst.txt || fail "$opt: the reason does not name the option"
		grep -q "nothing was sent to process $pid" jinst.txt || fail "$opt: not said that nothing was sent"
	done
	att attach "$pid" help
	[[ $rc == 0 ]] && grep -q "maxevents=N" jinst.txt || fail "help: exit $rc, or no options listed"
	att dump "$pid" extra
	[[ $rc == 2 ]] || fail "dump with options: exit $rc, not 2"
	sleep 0.3
	untouched badopt
	finish badopt
	echo "$(grep -c . badopt.err) lines on the target's stderr; no listener, no attach file, no thread dump"
	;;
errors)
	"$java" -version 2>/dev/null &
	gone=$!
	wait $gone
	att attach $gone
	[[ $rc == 1 ]] && grep -q "no such process: $gone" jinst.txt || fail "no such process: exit $rc"
	sleep 30 &
	other=$!
	att attach $other trace=counts
	[[ $rc == 1 ]] && grep -q "process $other is not a HotSpot JVM" jinst.txt || fail "not a JVM: exit $rc"
	sleep 0.2
	kill -0 $other 2>/dev/null || fail "the process that is not a JVM got a signal and ended"
	kill $other
	sleeper errors -XX:+DisableAttachMechanism
	att attach "$pid" trace=counts
	[[ $rc == 1 ]] && grep -q "attach is disabled in process $pid" jinst.txt || fail "disabled: exit $rc"
	untouched errors
	finish errors
	# the flag in an @argfile (the launcher's, relative to the VM's working
	# folder), after a comment that says otherwise
	printf '# -XX:-DisableAttachMechanism\n-Xmx256m "-XX:+DisableAttachMechanism"\n' >disable.args
	sleeper argfile @disable.args
	att attach "$pid" trace=counts
	[[ $rc == 1 ]] && grep -q "attach is disabled in process $pid" jinst.txt || fail "disabled in an argfile: exit $rc"
	untouched argfile
	finish argfile
	# a thread's id: /proc has it, a signal to it reaches the process
	sleeper thread
	tid=$(ls /proc/$pid/task | grep -vx "$pid" | head -1)
	att attach "$tid" trace=counts
	[[ $rc == 1 ]] && grep -q "^jinst attach: $tid is a thread of process $pid (java), not a process: jinst attach $pid$" jinst.txt ||
		fail "a thread id: exit $rc"
	untouched thread
	finish thread
	# a VM paused at its start (before it takes SIGQUIT, which would end
	# it): said, no signal sent; attached once it runs
	rm -f paused
	"${java_env[@]}" "$java" -XX:+UnlockDiagnosticVMOptions -XX:+PauseAtStartup -XX:PauseAtStartupFile="$work/paused" \
		-cp "$checks" jinstcheck.Sleeper "$work/stop-starting" >starting.out 2>starting.err &
	pid=$!
	for _ in $(seq 100); do
		[[ -e paused ]] && break
		sleep 0.1
	done
	att attach "$pid" trace=counts
	[[ $rc == 1 ]] && grep -q "process $pid is still starting .*: try again in a moment" jinst.txt ||
		fail "a VM still starting: exit $rc"
	kill -0 "$pid" 2>/dev/null || fail "the VM still starting ended"
	rm -f paused
	for _ in $(seq 100); do
		grep -q running starting.out && break
		sleep 0.1
	done
	att attach "$pid" "trace=counts,out=$work/starting"
	[[ $rc == 0 ]] || fail "the VM once started: exit $rc"
	att stop "$pid"
	finish starting
	# -Xrs: SIGQUIT would end the VM, but its listener starts with it;
	# attached without a signal
	sleeper rs -Xrs
	att attach "$pid" "trace=counts,out=$work/rs"
	[[ $rc == 0 ]] || fail "-Xrs: exit $rc"
	att stop "$pid"
	finish rs
	[[ -s rs.tsv ]] || fail "-Xrs: no rs.tsv"
	# another user's VM: refused; as root, attached as its user
	if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
		sleeper owner
		setpriv --reuid=65534 --regid=65534 --clear-groups "$jinst" attach "$pid" trace=counts >jinst.txt 2>&1
		rc=$?
		cat jinst.txt
		[[ $rc == 1 ]] && grep -q "process $pid belongs to uid 0, not to you (uid 65534)" jinst.txt ||
			fail "another user's VM: exit $rc"
		untouched owner
		finish owner
		mkdir -p nobody && chmod 777 nobody
		rm -f "$work/stop-nobody"
		setpriv --reuid=65534 --regid=65534 --clear-groups "${java_env[@]}" "$java" -cp "$checks" jinstcheck.Sleeper \
			"$work/stop-nobody" >nobody.out 2>nobody.err &
		pid=$!
		for _ in $(seq 100); do
			grep -q running nobody.out && break
			sleep 0.1
		done
		# (a process that changed its uid is not dumpable: LeakSanitizer
		# cannot stop its threads at exit, and fails)
		ASAN_OPTIONS=detect_leaks=0 att attach "$pid" "trace=counts,out=$work/nobody/n"
		[[ $rc == 0 ]] || fail "root attaching to a VM of uid 65534: exit $rc"
		ASAN_OPTIONS=detect_leaks=0 att stop "$pid"
		finish nobody
		[[ -s nobody/n.tsv ]] || fail "root attaching to a VM of uid 65534: no n.tsv"
	fi
	# a flag the tool cannot see (in a file): no listener comes
	echo "-XX:+DisableAttachMechanism" >flags.txt
	sleeper timeout -XX:VMOptionsFile=flags.txt
	att attach --timeout 1 "$pid" trace=counts
	[[ $rc == 1 ]] && grep -q "timeout: process $pid did not answer in 1 s" jinst.txt || fail "timeout: exit $rc"
	[[ ! -e /proc/$pid/cwd/.attach_pid$pid ]] || fail "timeout: the attach file was left"
	finish timeout
	;;
jcmd)
	[[ -n $refusals ]] || {
		echo "SKIP: a sanitized VM aborts on the refusal (see above)"
		exit 77
	}
	sleeper jcmd
	for opt in frobnicate "trace=counts,out=$work/no/such/x"; do
		"$home/bin/jcmd" "$pid" JVMTI.agent_load "$lib" "\"$opt\"" >jcmd.txt 2>&1
		jrc=$?
		echo "jcmd ... '$opt' -> exit $jrc: $(tr '\n' ' ' <jcmd.txt)"
		grep -q "return code: -1" jcmd.txt || fail "$opt: jcmd did not get -1"
	done
	grep -q "unknown option 'frobnicate'" jcmd.err || fail "the refusal is not on the target's stderr"
	grep -q "out=$work/no/such/x: the outputs cannot be written" jcmd.err || fail "no out= refusal on the target"
	finish jcmd
	;;
out)
	# at launch: the program never runs
	for bad in "$work/no/such/x:No such file or directory" "$work/afile/x:not a folder"; do
		touch afile
		"${java_env[@]}" "$java" -agentpath:"$lib"=out="${bad%%:*}" -cp "$programs" jinsttest.Recursion >launch.txt 2>&1
		lrc=$?
		[[ $lrc != 0 ]] || fail "${bad%%:*}: the VM started"
		! grep -q "fib" launch.txt || fail "${bad%%:*}: the program ran"
		grep -q "^jinst: out=${bad%%:*}: the outputs cannot be written in .*: ${bad#*:}" launch.txt ||
			fail "${bad%%:*}: no reason: $(head -1 launch.txt)"
	done
	# append=y over a file of earlier sessions that cannot be added to: a
	# .cov jinst merge refuses (a newer format version, cut short) and a
	# trace output that is a folder; refused at start, the file kept
	cov=$(dirname "$programs")/cov
	"${java_env[@]}" "$java" -agentpath:"$lib"=coverage,out="$work/good" -cp "$cov" jinstcov.Cov 3 >/dev/null 2>&1 ||
		fail "coverage: the program failed"
	cp good.cov newer.cov
	printf '\x00\x02' | dd of=newer.cov bs=1 seek=8 conv=notrunc 2>/dev/null
	head -c 40 good.cov >short.cov
	mkdir -p folder.tsv
	for bad in "newer:coverage:newer.cov cannot be merged into: .*format version 2" \
		"short:coverage:short.cov cannot be merged into: .*truncated" "folder:trace=counts:folder.tsv cannot be appended to: not a file"; do
		IFS=: read -r name opts want <<<"$bad"
		[[ -d $name.tsv ]] || cp $name.cov $name.before
		"${java_env[@]}" "$java" -agentpath:"$lib"=$opts,append=y,out="$work/$name" -cp "$cov" jinstcov.Cov 3 >launch.txt 2>&1
		lrc=$?
		[[ $lrc != 0 ]] || fail "append=y over $name: the VM started"
		grep -q "^jinst: append=y: $work/$want" launch.txt || fail "append=y over $name: no reason: $(head -1 launch.txt)"
		[[ -d $name.tsv ]] || cmp -s $name.cov $name.before || fail "append=y over $name: $name.cov changed"
	done
	"$jinst" merge -o merged.cov newer.cov >merge.txt 2>&1 && fail "jinst merge took newer.cov"
	# out=DIR/ and an existing DIR: jinst-PID.tsv inside
	mkdir -p d1 d2
	"${java_env[@]}" "$java" -agentpath:"$lib"=include=jinsttest.**,out="$work/d1/" -cp "$programs" jinsttest.Recursion >/dev/null 2>&1 ||
		fail "out=d1/: the program failed"
	"${java_env[@]}" "$java" -agentpath:"$lib"=include=jinsttest.**,out="$work/d2" -cp "$programs" jinsttest.Recursion >/dev/null 2>&1 ||
		fail "out=d2: the program failed"
	ls -A d1 d2
	ls d1 | grep -qE "^jinst-[0-9]+\.tsv$" && [[ $(ls -A d1 | wc -l) == 1 ]] || fail "out=d1/: $(ls -A d1)"
	ls d2 | grep -qE "^jinst-[0-9]+\.tsv$" && [[ $(ls -A d2 | wc -l) == 1 ]] || fail "out=d2: $(ls -A d2)"
	# at attach: refused, and a good attach then works
	[[ -n $refusals ]] || exit $((fails > 0))
	sleeper out
	att attach "$pid" "trace=counts,include=jinstcheck.**,out=$work/no/such/x"
	[[ $rc == 1 ]] || fail "attach with an unwritable out=: exit $rc"
	grep -q "^jinst: out=$work/no/such/x: the outputs cannot be written" jinst.txt || fail "attach: no reason printed"
	att attach "$pid" "coverage,append=y,out=$work/newer"
	[[ $rc == 1 ]] || fail "attach with append=y over newer.cov: exit $rc"
	grep -q "^jinst: append=y: $work/newer.cov cannot be merged into" jinst.txt || fail "attach: no reason for newer.cov"
	cmp -s newer.cov newer.before || fail "attach: newer.cov changed"
	att attach "$pid" "trace=counts,include=jinstcheck.**,out=$work/d1/"
	[[ $rc == 0 ]] || fail "attach after the refusal: exit $rc"
	att stop "$pid"
	# a relative out= is the VM's working folder's, and said whole
	att attach "$pid" "trace=counts,include=jinstcheck.**,out=rel"
	att stop "$pid"
	grep -q "^jinst: wrote $work/rel.tsv" jinst.txt || fail "stop with out=rel: not said whole: $(grep wrote jinst.txt)"
	finish out
	[[ $(ls d1 | wc -l) == 2 ]] || fail "attach out=d1/: $(ls d1)"
	;;
dropped)
	"${java_env[@]}" "$java" -agentpath:"$lib"=trace=events,maxevents=100,out="$work"/e -cp "$programs" jinsttest.Recursion \
		>/dev/null 2>err.txt || fail "the program failed"
	cat err.txt
	line=$(grep "^jinst: $work/e.json: [0-9]* calls dropped in 1 threads, 100 events kept: each thread keeps its first calls" err.txt)
	[[ -n $line ]] || fail "no line for the dropped events"
	said=$(sed 's/^jinst: .*e.json: \([0-9]*\) calls dropped.*/\1/' <<<"$line")
	python3 - e.json "$said" <<'PY' || fail "e.json does not say what was dropped"
import json, sys
d = json.load(open(sys.argv[1]))
said = int(sys.argv[2])
other = d["otherData"]
assert other["dropped"] == said > 0, (other, said)
assert "first calls" in other["kept"] and "maxevents" in other["kept"], other
threads = [e for e in d["traceEvents"] if e.get("name") == "thread_name"]
assert sum(e["args"]["dropped"] for e in threads) == said, threads
events = [e for e in d["traceEvents"] if e["ph"] in "BE"]
assert len(events) == 100, len(events)
print("dropped %d, kept %d events" % (said, len(events)))
PY
	"${java_env[@]}" "$java" -agentpath:"$lib"=trace=events,out="$work"/f -cp "$programs" jinsttest.Recursion >/dev/null 2>err2.txt
	! grep -q "calls dropped" err2.txt || fail "a line for dropped events when none were"
	# 2000 threads end while main runs: ended threads keep those created
	# first, main's among them, whatever order they end in; the line names
	# the bound reached, and a larger maxevents= keeps them all.
	for m in 100 100000 1000000; do
		"${java_env[@]}" "$java" -agentpath:"$lib"=trace=events,include=jinsttest.**,maxevents=$m,out="$work"/t$m \
			-cp "$programs" jinsttest.ThreadAfterThread >/dev/null 2>err$m.txt || fail "ThreadAfterThread failed"
		cat err$m.txt
		python3 - t$m.json err$m.txt $m <<'PY' || fail "maxevents=$m: the ended threads' timelines"
import json, re, sys
d = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
m = int(sys.argv[3])
begins = {}
for e in d["traceEvents"]:
    if e["ph"] == "B":
        begins.setdefault(e["name"], set()).add(e["tid"])
names = {e["tid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "thread_name"}
assert "jinsttest/ThreadAfterThread.main" in begins, "main's timeline was dropped"
workers = sorted(int(names[t][1:]) for t in begins.get("jinsttest/ThreadAfterThread.task", ()))
cap_threads, cap_events = max(1024, m // 100), 10 * m
# the threads created first: t0, t1, ... with none missing
assert workers == list(range(len(workers))), workers[:5]
line = re.search(r"calls dropped with the timelines of (\d+) ended threads not kept: .* reached ([^;]*);", err)
if m >= 1000000:
    assert len(workers) == 2000 and "calls dropped" not in err, (len(workers), err)
else:
    assert line, err
    assert int(line.group(1)) == 2000 + 1 - len(workers) - 1, (line.group(1), len(workers))
    reached = line.group(2)
    assert ("%d timelines" % cap_threads in reached) == (m == 100000), reached
    assert ("%d events" % cap_events in reached) == (m == 100), reached
    assert len(workers) + 1 <= cap_threads, len(workers)
    # calls, kept or dropped, each once: per thread its Runnable's <init>
    # (on main), run, task, 10 steps; and main
    kept = sum(1 for e in d["traceEvents"] if e["ph"] == "B")
    dropped = d["otherData"]["dropped"]
    assert kept + dropped == 2000 * 13 + 1, (kept, dropped)
print("maxevents=%d: main and %d workers kept" % (m, len(workers)))
PY
	done
	;;
formats)
	spin=spin sleeper formats
	att attach "$pid" "trace=times,include=jinstcheck.**,format=counts+profile+html,out=$work/f"
	[[ $rc == 0 ]] || fail "attach exited $rc"
	# calls of busy(): counts (column 4), profile (the count column), html
	# (the calls of its frame)
	agree() {
		python3 - "$1" <<'PY' || fail "$1: the formats of one write disagree"
import json, re, sys
tsv = [l.split("\t") for l in open("f.tsv") if l.startswith("jinstcheck/Sleeper\tbusy\t")]
txt = [l.split() for l in open("f.txt") if l.rstrip().endswith("jinstcheck/Sleeper.busy(I)I")]
page = open("f.html").read()
names = json.loads(re.search(r'"names":(\[.*?\])', page).group(1))
calls = json.loads(re.search(r'"calls":(\[.*?\])', page).group(1))
counts = (int(tsv[0][3]), int(txt[0][3]), calls[names.index("jinstcheck/Sleeper.busy")])
print(sys.argv[1], "busy():", counts)
assert counts[0] > 0 and len(set(counts)) == 1, counts
PY
	}
	sleep 0.5
	for i in 1 2 3; do
		att dump "$pid"
		[[ $rc == 0 ]] || fail "dump exited $rc"
		agree "dump $i"
		sleep 0.2
	done
	att stop "$pid"
	[[ $rc == 0 ]] || fail "stop exited $rc"
	agree stop
	finish formats
	;;
dynamic)
	# JDK 21 on: -XX:-EnableDynamicAgentLoading, where the tool reads it
	# (command line, an argfile, JAVA_TOOL_OPTIONS): refused, the VM
	# untouched; in a file it cannot read: the VM's refusal, said as such
	echo "-XX:-EnableDynamicAgentLoading" >dyn.args
	for how in cmdline argfile env; do
		case $how in
		cmdline) sleeper $how -XX:-EnableDynamicAgentLoading ;;
		argfile) sleeper $how @dyn.args ;;
		env) JAVA_TOOL_OPTIONS=-XX:-EnableDynamicAgentLoading sleeper $how ;;
		esac
		att attach "$pid" trace=counts
		[[ $rc == 1 ]] && grep -q "process $pid runs with -XX:-EnableDynamicAgentLoading: .*-XX:+EnableDynamicAgentLoading" jinst.txt ||
			fail "$how: exit $rc"
		untouched $how
		finish $how
	done
	sleeper file -XX:VMOptionsFile=dyn.args
	att attach "$pid" trace=counts
	[[ $rc == 1 ]] && grep -q "^jinst attach: process $pid did not load the agent: Dynamic agent loading is not enabled" jinst.txt ||
		fail "the VM's refusal: exit $rc"
	! grep -q "loaded the agent" jinst.txt || fail "the VM's refusal said the agent was loaded"
	finish file
	;;
container)
	# a VM in another mount namespace, where libjinst.so's folder is another
	# (a tmpfs over it): a copy in the VM's /tmp, loaded from there; the
	# next such VM loads the same copy
	[[ $(id -u) == 0 ]] && unshare -m --propagation private true 2>/dev/null || {
		echo "SKIP: needs root and unshare -m"
		exit 77
	}
	libdir=$(dirname "$lib")
	for name in ns ns2; do
		rm -f "$work/stop-$name"
		unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$libdir" \
			"${java_env[@]}" "$java" -cp "$checks" jinstcheck.Sleeper "$work/stop-$name" >$name.out 2>$name.err &
		pid=$!
		for _ in $(seq 100); do
			grep -q running $name.out && break
			sleep 0.1
		done
		[[ ! -e /proc/$pid/root$lib ]] || fail "$name: the VM sees $lib: not another mount namespace"
		att attach --agent "$lib" "$pid" "trace=counts,include=jinstcheck.**,out=$work/$name"
		[[ $rc == 0 ]] || fail "$name: attach into the namespace: exit $rc"
		copy=$(sed -n 's/.*loading its copy there, \(\/tmp\/jinst-[0-9a-f]*\.so\)$/\1/p' jinst.txt)
		[[ -n $copy ]] && cmp -s "/proc/$pid/root$copy" "$lib" || fail "$name: no copy of libjinst.so in the VM's /tmp: '$copy'"
		grep -q "$copy" /proc/$pid/maps || fail "$name: the VM did not map $copy"
		inode=$(stat -c %i "/proc/$pid/root$copy")
		[[ $name == ns ]] && first=$inode
		[[ $inode == "$first" ]] || fail "$name: the copy was made again"
		att dump "$pid"
		[[ $rc == 0 ]] && ! grep -q "asking that one" jinst.txt || fail "$name: dump through the copy: exit $rc"
		att stop "$pid"
		[[ $rc == 0 ]] || fail "$name: stop: exit $rc"
		finish $name
		[[ -s $name.tsv ]] || fail "$name: no output: $(ls $name*)"
	done
	rm -f "$copy"
	;;
foreign)
	for pair in "cpu=times:trace=times" "file=x:out=PATH" "destfile=x.exec:coverage,out=PATH" \
		"includes=a.*:include=GLOBS" "excludes=a.*:exclude=GLOBS" "event=cpu:trace=times" "interval=10000:tick=USEC" \
		"heap=sites:alloc" "event=alloc:alloc" "event=lock:monitor"; do
		opt=${pair%%:*} want=${pair#*:}
		"${java_env[@]}" "$java" -agentpath:"$lib"="$opt" -version >vm.txt 2>&1
		grep -q "^jinst: unknown option '${opt%%=*}': did you mean $want" vm.txt || fail "$opt (VM): $(head -1 vm.txt)"
		att attach 1 "$opt"
		[[ $rc == 2 ]] && grep -q "did you mean $want" jinst.txt || fail "$opt (jinst attach): exit $rc"
	done
	"${java_env[@]}" "$java" -agentpath:"$lib"=help -version >help.txt 2>&1
	grep -q "app.\* is app's own classes, not its subpackages" help.txt || fail "help does not say what app.* takes"
	grep -q "each output is replaced at every write" help.txt || fail "help does not say that out= overwrites"
	;;
installed)
	# cmake --install, then the installed jinst finds the installed
	# libjinst.so beside it (BINDIR/../LIBDIR), which the VM maps
	build=$(dirname "$(dirname "$lib")")
	cmake --install "$build" --prefix "$work/prefix" >install.txt 2>&1 || fail "cmake --install: $(tail -3 install.txt)"
	jinst=$work/prefix/bin/jinst
	sleeper installed
	att attach "$pid" "trace=counts,include=jinstcheck.**,out=$work/inst"
	[[ $rc == 0 ]] || fail "the installed jinst: exit $rc"
	grep -q "$work/prefix/lib.*/libjinst.so" /proc/$pid/maps || fail "the VM did not map the installed libjinst.so"
	att stop "$pid"
	finish installed
	[[ -s inst.tsv ]] || fail "no inst.tsv"
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
verdict "$case"
