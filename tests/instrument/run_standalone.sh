#!/usr/bin/env bash
# The runtime without the agent: a program whose calls are known
# (standalone/jinstalone/Calls.java), instrumented offline by
# instrument_tree, run with jinst-runtime.jar alone on the class path.
#   run_standalone.sh JAVA_HOME INSTRUMENT_TREE CLASSES RUNTIME_JAR EXPECTED WORK [LIBJINST]
# EXPECTED is the exact counts TSV. With LIBJINST (and an unsanitized
# build), the agent's own counts of the uninstrumented program must be the
# same bytes. Exit 0 passed, 1 failed, 77 skipped (no such JDK).
set -uo pipefail
home=$1 tool=$2 classes=$3 rtjar=$4 expected=$5 work=$6 agent=${7:-}
java=$home/bin/java
if [[ ! -x $java ]]; then
	echo "SKIP: no JDK at $home"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work/cwd" "$work/props"
cd "$work/cwd" || exit 1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
"$java" -version 2>&1 | head -1
"$tool" "$work/out" "$classes" >"$work/instrument.txt" || { cat "$work/instrument.txt"; exit 1; }
[[ -s $work/out/META-INF/jinst/methods.tsv ]] || fail "instrument_tree wrote no META-INF/jinst/methods.tsv"
cp="$work/out:$rtjar"

# run NAME EXIT [ARGS...] [-- JVM OPTIONS...]: Calls 1000 EXIT ARGS; stdout in
# NAME.out, stderr in NAME.err; fails unless it exits with EXIT.
run() {
	local name=$1 code=$2 args=() opts=()
	shift 2
	while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
	(($#)) && shift
	opts=("$@")
	"$java" -Xverify:all "${opts[@]}" -cp "$cp" jinstalone.Calls 1000 "$code" "${args[@]}" \
		>"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	[[ $rc == "$code" ]] || fail "$name: exit code $rc, not $code: $(cat "$work/$name.err")"
}
# Lines of stderr not from the VM itself.
messages() {
	grep -v '^OpenJDK.*warning' "$1" || true
}
same_counts() {
	cmp -s "$expected" "$1" || fail "$2: counts differ (expected < > got): $(diff "$expected" "$1")"
}

# Nothing asked: disengaged (mode 0, no clock), nothing written, not a word;
# Control.dump() does nothing.
run quiet 0 dump
grep -q "^mode 0 clock 0$" "$work/quiet.out" || fail "quiet: engaged: $(cat "$work/quiet.out")"
grep -q "^dumped$" "$work/quiet.out" || fail "quiet: Control.dump() failed: $(cat "$work/quiet.err")"
[[ -z $(messages "$work/quiet.err") ]] || fail "quiet: wrote to stderr: $(cat "$work/quiet.err")"
[[ -z $(ls -A "$work/cwd") ]] || fail "quiet: files written: $(ls -A "$work/cwd")"

# -Djinst.out: the exact counts, written once at exit (and once by
# Control.dump()), the agent's format; no temporary file left.
run counts 0 dump -- -Djinst.out="$work/c"
same_counts "$work/c.tsv" counts
grep -q "^mode 1 clock 0$" "$work/counts.out" || fail "counts: $(cat "$work/counts.out")"
[[ $(messages "$work/counts.err") == "jinst: wrote $work/c.tsv"$'\n'"jinst: wrote $work/c.tsv" ]] ||
	fail "counts: stderr: $(cat "$work/counts.err")"
! ls -A "$work" | grep -q tmp || fail "counts: a temporary file is left: $(ls -A "$work")"

# jinst.quiet=true (here from jinst.properties): the same counts, not a word.
printf 'jinst.out=%s\njinst.quiet=true\n' "$work/qc" >"$work/props/jinst.properties"
cp="$work/out:$rtjar:$work/props" run quietly 0 dump
cp="$work/out:$rtjar"
same_counts "$work/qc.tsv" quietly
[[ -z $(messages "$work/quietly.err") ]] || fail "quietly: stderr: $(cat "$work/quietly.err")"
rm -f "$work/props/jinst.properties"

# %p is the process id; the default prefix is jinst-%p in the working directory.
run pid 0 -- -Djinst.trace=counts
f=$(ls "$work/cwd")
[[ $f =~ ^jinst-[0-9]+\.tsv$ ]] || fail "pid: $f is not jinst-PID.tsv"
[[ -n $f ]] && same_counts "$work/cwd/$f" pid
rm -f "$work/cwd"/*

# The environment's JINST_OUT, as -Djinst.out.
JINST_OUT="$work/env" run envout 0
same_counts "$work/env.tsv" envout

# jinst.properties on the class path; a system property wins over its key.
printf 'jinst.out=%s/p\njinst.trace=counts\n' "$work" >"$work/props/jinst.properties"
cp="$work/out:$rtjar:$work/props"
run props 0
same_counts "$work/p.tsv" props
run override 0 -- -Djinst.out="$work/q"
same_counts "$work/q.tsv" override
grep -q "wrote $work/q.tsv" "$work/override.err" && ! grep -q "p.tsv" "$work/override.err" ||
	fail "override: $(cat "$work/override.err")"
cp="$work/out:$rtjar"

# An output that cannot be written: one line, the program's exit code.
run unwritable 3 -- -Djinst.out=/nonexistent-jinst-dir/x
m=$(messages "$work/unwritable.err")
[[ $m =~ ^"jinst: /nonexistent-jinst-dir/x.tsv not written: "[^$'\n']+$ ]] || fail "unwritable: stderr: $m"
echo "unwritable: $m"

# A setting the standalone runtime cannot take: one line, nothing recorded.
run events 0 -- -Djinst.trace=events -Djinst.out="$work/e"
grep -q "^mode 0 clock 0$" "$work/events.out" || fail "events: engaged: $(cat "$work/events.out")"
[[ $(messages "$work/events.err") == "jinst: jinst.trace=events: expected counts or times (events needs the agent); recording nothing" ]] ||
	fail "events: stderr: $(cat "$work/events.err")"
[[ ! -e $work/e.tsv ]] || fail "events: wrote e.tsv"
run html 0 -- -Djinst.trace=times -Djinst.format=html -Djinst.out="$work/h"
[[ $(messages "$work/html.err") == "jinst: jinst.format=html: unknown format 'html' (counts, profile; html needs the agent); recording nothing" ]] ||
	fail "html: stderr: $(cat "$work/html.err")"
[[ ! -e $work/h.html && ! -e $work/h.tsv ]] || fail "html: wrote an output"

# trace=times: its own clock thread; the counts, and the ranked profile
# with the worker's 30 ms sleep in it.
run times 0 -- -Djinst.trace=times -Djinst.out="$work/t" -Djinst.tick=500
same_counts "$work/t.tsv" times
grep -q "^mode 3 clock 1$" "$work/times.out" || fail "times: $(cat "$work/times.out")"
total=$(sed -n '1s/^WALL TIME (ms) BEGIN (total = \([0-9.]*\)) clock wall, unit ms: .*/\1/p' "$work/t.txt")
awk -v t="${total:-0}" 'BEGIN { exit !(t >= 25) }' || fail "times: total ${total:-none} ms, not 25 or more: $(cat "$work/t.txt")"
grep -q "every 500 us" "$work/t.txt" || fail "times: the clock's period is not said"
tail -1 "$work/t.txt" | grep -q "^WALL TIME (ms) END$" || fail "times: no END line"
# each counted method is in the profile with its count
while IFS=$'\t' read -r cls name desc count; do
	grep -qE "^ +[0-9]+ .* $count +[0-9.-]+ +[0-9.-]+  $(printf '%s' "$cls.$name$desc" | sed 's/[][$.()]/\\&/g')$" "$work/t.txt" ||
		fail "times: $cls.$name$desc $count not in the profile"
done <"$expected"
echo "times: total $total ms"

# The agent, on the uninstrumented program, writes the same counts.
if [[ -n $agent && ${JINST_SANITIZED:-OFF} != ON ]]; then
	"$java" -agentpath:"$agent"=trace=counts,include=jinstalone.**,out="$work/a",log="$work/agent.log" \
		-cp "$classes" jinstalone.Calls 1000 0 >"$work/agent.out" 2>&1 || fail "agent: $(cat "$work/agent.out")"
	same_counts "$work/a.tsv" agent
	# With the agent, the offline classes reach its runtime (the bootstrap
	# loader's): the class path's copy never engages, whatever it is asked.
	"$java" -agentpath:"$agent"=trace=counts,out="$work/b",log="$work/agent2.log" -Djinst.out="$work/s" \
		-cp "$cp" jinstalone.Calls 1000 0 >"$work/agent2.out" 2>"$work/agent2.err" || fail "agent2: $(cat "$work/agent2.err")"
	grep -q "^mode 1 clock 0$" "$work/agent2.out" || fail "agent2: $(cat "$work/agent2.out")"
	[[ -e $work/b.tsv && ! -e $work/s.tsv ]] || fail "agent2: the standalone runtime wrote, or the agent did not"
	[[ -z $(messages "$work/agent2.err") ]] || fail "agent2: stderr: $(cat "$work/agent2.err")"
fi

if ((fails)); then
	echo "standalone: $fails failed"
	exit 1
fi
echo "standalone: passed"
