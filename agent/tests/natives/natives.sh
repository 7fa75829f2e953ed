#!/usr/bin/env bash
# Native methods traced through their wrappers (natives), on a real VM.
#   natives.sh JAVA_HOME LIBJINST LIBJINSTNAT CLASSES SECOND_JAR WORK [WRAPPING_JAR]
# CLASSES holds jinstnat (Main, Natives, Second); LIBJINSTNAT binds
# Natives.twice and mix by automatic lookup, registered by RegisterNatives;
# SECOND_JAR is jinstnat.Second as a java agent (a prefix of its own, and
# RetransformClasses of the wrapped classes and CRC32); WRAPPING_JAR (JDK
# 24+, java.lang.classfile) is jinstnat.Wrapping, a second agent that wraps
# Natives' natives itself with its own prefix. Every run under -Xverify:all:
#  1. trace=counts,natives: the program's answer; twice, registered, mix and
#     the JDK's Adler32.update(II)I (loaded after the agent) counted exactly
#     through their wrappers; CRC32.update(II)I (@IntrinsicCandidate) and
#     the natives themselves ($$jinst$$...) not; the same with trace=times;
#     with natives=all CRC32.update(II)I too, and nothing more on stdout;
#  2. the second agent first on the command line, then last: its prefix
#     beside jinst's, its retransformation of Natives and Adler32 between
#     (and CRC32) between two halves: both halves counted, no class left
#     unchanged; the same with the agent that wraps too, whose wrapper of
#     jinst's native jinst traces when that agent comes first;
#  3. jcmd: stop (the classes given back with their wrappers), a new session
#     without natives (trace=counts: the wrappers kept on retransformation),
#     stop again, a third with natives, which wraps nothing new; each
#     session's counts exact, and its summary lines its own;
#  4. natives alone (no trace, no monitor), or with passes that do not look
#     at natives: refused, the VM does not start, the message says what to
#     add.
# Exit 0 passed, 1 failed, 77 skipped.
set -uo pipefail
home=$1 lib=$2 natlib=$3 classes=$4 second=$5 work=$6 wrapping=${7:-}
source "${BASH_SOURCE%/*}/../../../tests/lib.sh"
need_jdk "$home"
sanitized && export LD_PRELOAD=$JINST_PRELOAD "${san_env[@]}"
workdir "$work"
jcmd=$home/bin/jcmd
n=1000
inc=include=jinstnat.Natives:java.util.zip.Adler32:java.util.zip.CRC32
run() { # run NAME JAVA_ARGS... -- PROGRAM_ARGS...
	local name=$1
	shift
	"$java" -Xverify:all -Djinstnat.lib="$natlib" "$@" >"$name.out" 2>"$name.err"
	local rc=$?
	[[ $rc == 0 ]] || fail "$name: exit $rc: $(tail -5 "$name.err")"
}
# count FILE METHOD DESC [CLASS]: the count the TSV gives it, 0 without a row.
count() {
	awk -F'\t' -v c="${4:-jinstnat/Natives}" -v m="$2" -v d="$3" \
		'$1 == c && $2 == m && $3 == d { print $4; found = 1 } END { if (!found) print 0 }' "$1"
}
expect() { # expect TSV TIMES [all]: each native's count
	local tsv=$1 k=$2 crc=${3:+$2}
	for row in "twice (I)I" "registered (I)I" "mix (JI)J"; do
		set -- $row
		[[ $(count "$tsv" "$1" "$2") == "$k" ]] || fail "$tsv: $1$2 counted $(count "$tsv" "$1" "$2"), not $k"
	done
	[[ $(count "$tsv" update "(II)I" java/util/zip/Adler32) == "$k" ]] ||
		fail "$tsv: Adler32.update(II)I counted $(count "$tsv" update "(II)I" java/util/zip/Adler32), not $k"
	[[ $(count "$tsv" update "(II)I" java/util/zip/CRC32) == "${crc:-0}" ]] ||
		fail "$tsv: CRC32.update(II)I (@IntrinsicCandidate) counted $(count "$tsv" update "(II)I" java/util/zip/CRC32)"
	grep -q '\$\$jinst\$\$' "$tsv" && fail "$tsv: a prefixed native was counted"
}
no_errors() {
	grep -E "left unchanged:|left alone:|refuses|RetransformClasses:|cannot" "$1" && fail "$1: errors above"
}

run plain -cp "$classes" jinstnat.Main run $n
grep -q '^sum ' plain.out || fail "the program printed no sum"

# 1. Both bindings and a JDK native, counted through their wrappers.
for mode in counts times; do
	run $mode -agentpath:"$lib"=trace=$mode,format=counts,natives,$inc,out="$work/$mode",log="$work/$mode.log" \
		-cp "$classes" jinstnat.Main run $n
	cmp -s plain.out $mode.out || fail "trace=$mode,natives: another answer: $(cat $mode.out)"
	expect $mode.tsv $((2 * n))
	no_errors $mode.log
done

# The @IntrinsicCandidate natives too: CRC32.update(II)I loses its
# intrinsic, counted exactly, and HotSpot prints nothing about it.
run all -agentpath:"$lib"=trace=counts,natives=all,$inc,out="$work/all",log="$work/all.log" \
	-cp "$classes" jinstnat.Main run $n
cmp -s plain.out all.out || fail "natives=all: another output: $(cat all.out)"
expect all.tsv $((2 * n)) all
no_errors all.log

# 2. A second agent with a prefix of its own, before and after jinst's.
agent=-agentpath:"$lib"=trace=counts,natives,$inc,out="$work/second",log="$work/second.log"
for order in first last; do
	if [[ $order == first ]]; then
		run second-$order -javaagent:"$second" "$agent" -cp "$classes" jinstnat.Main run $n
	else
		run second-$order "$agent" -javaagent:"$second" -cp "$classes" jinstnat.Main run $n
	fi
	cmp -s plain.out second-$order.out || fail "second agent $order: another answer"
	grep -q "second: retransformed 3" second-$order.err || fail "second agent $order: no retransformation"
	expect second.tsv $((2 * n))
	no_errors second.log
	mv second.tsv second-$order.tsv
done

# The second agent wrapping too: the prefixes chain. First, it wraps
# before jinst, which wraps its $$second$$ natives (traced too); last,
# it wraps jinst's $$jinst$$ natives.
for order in first last; do
	[[ -n $wrapping ]] || break
	if [[ $order == first ]]; then
		run wrapping-$order -javaagent:"$wrapping" "$agent" -cp "$classes" jinstnat.Main run $n
	else
		run wrapping-$order "$agent" -javaagent:"$wrapping" -cp "$classes" jinstnat.Main run $n
	fi
	cmp -s plain.out wrapping-$order.out || fail "wrapping agent $order: another answer"
	grep -q "second: retransformed 3" wrapping-$order.err || fail "wrapping agent $order: no retransformation"
	expect second.tsv $((2 * n))
	k=0
	[[ $order == first ]] && k=$((2 * n))
	[[ $(count second.tsv '$$second$$twice' "(I)I") == "$k" ]] ||
		fail "wrapping agent $order: \$\$second\$\$twice counted $(count second.tsv '$$second$$twice' "(I)I"), not $k"
	no_errors second.log
	mv second.tsv wrapping-$order.tsv
done

# 3. stop, a session without natives, stop: the wrappers stay.
mkfifo in
"$java" -Xverify:all -Djinstnat.lib="$natlib" \
	-agentpath:"$lib"=trace=counts,natives,$inc,out="$work/s%n",log="$work/serve.log" \
	-cp "$classes" jinstnat.Main serve <in >serve.out 2>serve.err &
pid=$!
exec 3>in
ask() { # ask N: one round of N calls, answered
	echo "$1" >&3
	for _ in $(seq 300); do
		[[ $(grep -c "^done $1 " serve.out) -gt ${2:-0} ]] && return 0
		sleep 0.1
	done
	fail "no answer to $1"
}
load() {
	"$jcmd" $pid JVMTI.agent_load "$lib" "\"$1\"" >jcmd.txt 2>&1
	grep -q "return code: 0" jcmd.txt || fail "jcmd $1: $(cat jcmd.txt)"
}
for _ in $(seq 100); do
	grep -q serving serve.out && break
	sleep 0.1
done
ask 300
load stop
ask 50
load "trace=counts,$inc,out=$work/s%n"
ask 200
load stop
load "trace=counts,natives,$inc,out=$work/s%n"
ask 100
load stop
echo quit >&3
exec 3>&-
wait $pid || fail "the served program failed: $(tail -5 serve.err)"
expect s1.tsv 300
expect s2.tsv 200
expect s3.tsv 100
no_errors serve.log
grep -q "^jinst: stop: [1-9][0-9]* classes given back" serve.log || fail "stop gave nothing back"
[[ $(grep -c "^done" serve.out) == 4 ]] || fail "answers: $(cat serve.out)"
# Each session's lines count that session: the same classes each time, and
# the third wraps nothing (every class of $inc was loaded in the first).
summary=$(sed -n 's/^jinst: \([0-9]*\) classes instrumented, .*/\1/p' serve.log | paste -sd' ')
back=$(sed -n 's/^jinst: stop: \([0-9]*\) classes given back.*/\1/p' serve.log | paste -sd' ')
wrapped=$(sed -n 's/^jinst: natives: \([0-9]*\) native methods wrapped.*/\1/p' serve.log | paste -sd' ')
echo "sessions: instrumented $summary, given back $back, natives wrapped $wrapped"
set -- $summary
[[ $# == 3 && $1 -gt 0 && $2 == "$1" && $3 == "$1" ]] || fail "classes instrumented per session: $summary"
set -- $back
[[ $# == 3 && $1 -gt 0 && $2 == "$1" && $3 == "$1" ]] || fail "classes given back per session: $back"
set -- $wrapped
[[ $# == 2 && $1 -gt 0 && $2 == 0 ]] || fail "natives wrapped per session: $wrapped, not N then 0"

# 4. natives alone records nothing: refused before the VM starts.
for opts in natives natives=all,coverage,alloc; do
	"$java" -agentpath:"$lib"=$opts,$inc,out="$work/alone" -Djinstnat.lib="$natlib" -cp "$classes" jinstnat.Main run $n \
		>alone.out 2>alone.err
	rc=$?
	[[ $rc != 0 ]] || fail "$opts: the VM started"
	! grep -q "^sum " alone.out || fail "$opts: the program ran"
	grep -q "^jinst: natives records nothing alone: .*(trace=counts,natives).*(monitor,natives)" alone.err ||
		fail "$opts: not refused with what to add: $(head -3 alone.err)"
done

cat counts.log serve.log
verdict natives
