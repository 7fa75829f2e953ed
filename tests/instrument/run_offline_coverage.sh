#!/usr/bin/env bash
# Coverage instrumented ahead of time, recorded by jinst-runtime.jar alone,
# against what the agent's coverage module records for the same run of the
# same uninstrumented program (the witness): the records of `jinst dump
# FILE.cov` (name, identity, every probe's value) must be the same.
#   run_offline_coverage.sh JAVA_HOME INSTRUMENT_TREE JINST RUNTIME_JAR COV OFF WORK [LIBJINST]
# COV: the coverage fixture's classes (jinstcov.Cov, deterministic); OFF:
# lib1/, lib2/ (two versions of jinstoff.Same, One, Two) and main/
# (jinstoffmain.Main, which loads each jar in a loader of its own). Without
# LIBJINST (or in a sanitized build) the agent's runs are left out and the
# offline runs are held to each other. Exit 0 passed, 1 failed, 77 skipped.
set -uo pipefail
home=$1 tool=$2 jinst=$3 rtjar=$4 cov=$5 off=$6 work=$7 agent=${8:-}
source "${BASH_SOURCE%/*}/../lib.sh"
need_jdk "$home" jar
[[ ${JINST_SANITIZED:-OFF} == ON ]] && agent=
workdir "$work"
mkdir -p cwd props
cd cwd || exit 1
# instrument OUT FLAGS... IN: instrument_tree's run, its summary kept.
instrument() {
	local out=$1
	shift
	"$tool" "${@:1:$#-1}" "$work/$out" "${@: -1}" >"$work/$out.txt" ||
		{ fail "instrument_tree $*: $(cat "$work/$out.txt")"; return 1; }
}
# records FILE.cov: its class records, one a line (name, identity, kind, probes).
records() {
	"$jinst" dump "$1" 2>&1 | sed -n '/^classes:/,$p' | tail -n +2 | sed 's/^ *//' | sort
}
# doubled FILE.cov: its records with every count twice.
doubled() {
	records "$1" | awk '{ for (i = 6; i <= NF; i++) $i *= 2; print }'
}
# same NAME A.cov B.cov: the same records, and some.
same() {
	local a b
	a=$(records "$2") b=$(records "$3")
	[[ -n $a && $a == "$b" ]] || fail "$1: records differ ($2 < > $3):"$'\n'"$(diff <(echo "$a") <(echo "$b"))"
}
# run NAME CP MAIN ARGS... [-- JVM OPTIONS...]: stdout in NAME.out (which
# must be the plain run's, PLAIN), stderr in NAME.err.
run() {
	local name=$1 cp=$2 main=$3 args=() opts=()
	shift 3
	while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
	(($#)) && shift
	opts=("$@")
	"$java" -Xverify:all "${opts[@]}" -cp "$cp" "$main" "${args[@]}" >"$work/$name.out" 2>"$work/$name.err" ||
		fail "$name: $(cat "$work/$name.err")"
	cmp -s "$work/$name.out" "$work/$PLAIN" || fail "$name: output differs: $(diff "$work/$PLAIN" "$work/$name.out" | head -5)"
}

# ---- the fixture: booleans, counts, counts with the trace pass ----------
"$java" -Xverify:all -cp "$cov" jinstcov.Cov 7 >"$work/cov.plain" 2>&1 || fail "the fixture fails: $(cat "$work/cov.plain")"
PLAIN=cov.plain
instrument ob -c -x "$cov"
instrument oc -C -x "$cov"
instrument ot -C "$cov"
for m in ob oc ot; do
	run "$m" "$work/$m:$rtjar" jinstcov.Cov 7 -- -Djinst.out="$work/$m"
	[[ -s $work/$m.cov ]] || fail "$m: no $m.cov"
	[[ $(grep -v '^OpenJDK.*warning' "$work/$m.err") == *"jinst: wrote $work/$m.cov"* ]] || fail "$m: stderr: $(cat "$work/$m.err")"
	echo "$m: $(records "$work/$m.cov" | paste -sd';')"
done
same "counts with trace" "$work/oc.cov" "$work/ot.cov"
grep -qP "^jinstcov/Cov\tloop\t\(I\)I\t1$" "$work/ot.tsv" || fail "trace with coverage: loop not counted once: $(cat "$work/ot.tsv")"
[[ ! -e $work/oc.tsv ]] || fail "coverage alone wrote a trace output"
grep -q " 7 " <(records "$work/oc.cov") || fail "counts: the loop's body (7 times) is not there"
if [[ -n $agent ]]; then
	for m in b:coverage c:coverage=counts; do
		"$java" -Xverify:all -agentpath:"$agent=${m#*:},include=jinstcov.**,out=$work/a${m%%:*},log=$work/a${m%%:*}.log" \
			-cp "$cov" jinstcov.Cov 7 >"$work/a${m%%:*}.out" 2>&1 || fail "agent ${m#*:}: $(cat "$work/a${m%%:*}.out")"
		same "agent ${m#*:}" "$work/a${m%%:*}.cov" "$work/o${m%%:*}.cov"
		# and so the same report (JaCoCo's XML) but for the session's line
		for f in a o; do
			"$jinst" report "$work/$f${m%%:*}.cov" --classfiles "$cov" --xml "$work/$f${m%%:*}.xml" >/dev/null ||
				fail "jinst report $f${m%%:*}.cov"
		done
		cmp -s <(sed 's/<sessioninfo[^>]*>//' "$work/a${m%%:*}.xml") <(sed 's/<sessioninfo[^>]*>//' "$work/o${m%%:*}.xml") ||
			fail "agent ${m#*:}: the reports differ"
		grep -q 'counter type="LINE" missed="[0-9]*" covered="[1-9]' "$work/o${m%%:*}.xml" || fail "o${m%%:*}.xml: no line covered"
	done
fi

# ---- where to write: JINST_OUT, jinst.properties, the default; append ---
JINST_OUT="$work/env" run env "$work/oc:$rtjar" jinstcov.Cov 7
same JINST_OUT "$work/oc.cov" "$work/env.cov"
printf 'jinst.out=%s/p\njinst.session=fromprops\n' "$work" >"$work/props/jinst.properties"
run props "$work/oc:$rtjar:$work/props" jinstcov.Cov 7
same jinst.properties "$work/oc.cov" "$work/p.cov"
"$jinst" dump "$work/p.cov" | grep -q "^  fromprops start" || fail "jinst.session from jinst.properties: $("$jinst" dump "$work/p.cov")"
JINST_OUT="$work/env2" run override "$work/oc:$rtjar:$work/props" jinstcov.Cov 7 -- -Djinst.out="$work/q"
same "a system property over JINST_OUT and the resource" "$work/oc.cov" "$work/q.cov"
[[ ! -e $work/env2.cov ]] || fail "JINST_OUT won over -Djinst.out"
run default "$work/oc:$rtjar" jinstcov.Cov 7
f=$(ls "$work/cwd")
[[ $f =~ ^jinst-[0-9]+\.cov$ ]] || fail "default: $f is not jinst-PID.cov"
[[ -n $f ]] && same default "$work/oc.cov" "$work/cwd/$f"
for s in one two; do
	run "append-$s" "$work/oc:$rtjar" jinstcov.Cov 7 -- -Djinst.out="$work/app" -Djinst.append=true -Djinst.session=$s
done
[[ $("$jinst" dump "$work/app.cov" | grep -c '^  \(one\|two\) start') == 2 ]] || fail "append: two sessions expected"
[[ $(records "$work/app.cov") == "$(doubled "$work/oc.cov")" ]] || fail "append: not each count twice: $(records "$work/app.cov")"
run wrong "$work/oc:$rtjar" jinstcov.Cov 7 -- -Djinst.out="$work/w" -Djinst.append=maybe
grep -q "jinst.append=maybe: expected true or false" "$work/wrong.err" && [[ ! -e $work/w.cov ]] ||
	fail "a wrong jinst.append: $(cat "$work/wrong.err")"
# jinst.quiet=true: the same file, not a word; a wrong value refused
run quiet "$work/oc:$rtjar" jinstcov.Cov 7 -- -Djinst.out="$work/qt" -Djinst.quiet=true
same "jinst.quiet" "$work/oc.cov" "$work/qt.cov"
! grep -q "^jinst" "$work/quiet.err" || fail "quiet: said $(cat "$work/quiet.err")"
run noisy "$work/oc:$rtjar" jinstcov.Cov 7 -- -Djinst.out="$work/qn" -Djinst.quiet=yes
grep -q "jinst.quiet=yes: expected true or false" "$work/noisy.err" && [[ ! -e $work/qn.cov ]] ||
	fail "a wrong jinst.quiet: $(cat "$work/noisy.err")"

# ---- the table by identity, driven directly (check/IdentityCheck) -------
# Every class's record, its probes as the check set them; no record for the
# calls without a name or with a negative count; no trace output.
"$java" -Xverify:all -Djinst.out="$work/id" -cp "$off/check:$rtjar" jinstoffcheck.IdentityCheck >"$work/id.out" 2>&1 ||
	fail "IdentityCheck: $(cat "$work/id.out")"
records "$work/id.cov" | awk '
	$1 ~ /^chk\/C/ { i = substr($1, 6) + 0; n = 1 + i % 7; w = ""
		for (k = 0; k < n; k++) w = w (k == i % n ? 1 : 0)
		if ($3 != "booleans" || $6 != w) { bad++; print "wrong: " $0 }; c++ }
	$1 ~ /^chk\/T/ { if ($6 != "1111") { bad++; print "wrong: " $0 }; t++ }
	$1 == "chk/Grown" { if ($0 !~ / counts 2\/9 hit: 0 0 5 0 0 0 0 0 1$/) { bad++; print "wrong: " $0 }; g++ }
	END { print "identity table: " c " + " t " + " g " of " NR " records, " bad + 0 " wrong"
		exit !(c == 3000 && t == 2000 && g == 1 && NR == 5001 && bad == 0) }' >"$work/id.txt" ||
	fail "IdentityCheck's records: $(head -5 "$work/id.txt")"
tail -1 "$work/id.txt"
[[ ! -e $work/id.tsv ]] || fail "IdentityCheck: a trace output for a program that traced nothing"

# ---- two jars instrumented in separate runs, in one JVM ----------------
for l in lib1 lib2; do
	(cd "$off/$l" && "$home/bin/jar" cf "$work/$l.jar" jinstoff) || fail "jar $l"
	instrument "off-$l" -C -x "$off/$l"
	(cd "$work/off-$l" && "$home/bin/jar" cf "$work/off-$l.jar" jinstoff) || fail "jar off-$l"
done
"$java" -Xverify:all -cp "$off/main" jinstoffmain.Main 6 "$work/lib1.jar:Same,One" "$work/lib2.jar:Same,Two" \
	>"$work/two.plain" 2>&1 || fail "the two jars fail: $(cat "$work/two.plain")"
PLAIN=two.plain
jars=("$work/off-lib1.jar:Same,One" "$work/off-lib2.jar:Same,Two")
run two "$off/main:$rtjar" jinstoffmain.Main 6 "${jars[@]}" -- -Djinst.out="$work/two"
echo "two jars: $(records "$work/two.cov" | paste -sd';')"
[[ $(records "$work/two.cov" | cut -d' ' -f1 | paste -sd' ') == "jinstoff/One jinstoff/Same jinstoff/Same jinstoff/Two" ]] ||
	fail "two jars: not the four classes: $(records "$work/two.cov")"
[[ $(records "$work/two.cov" | grep -c ' hit: .*[1-9]') == 4 ]] || fail "two jars: a class without a hit"
# Control.dump() writes now and the shutdown hook again: with append, each
# write merges into the file as the first found it, so a run adds once.
cp "$work/two.cov" "$work/twice.cov"
run dumped "$off/main:$rtjar" jinstoffmain.Main 6 "${jars[@]}" -- -Djinst.out="$work/twice" -Djinst.append=true \
	-Djinstoff.dump=true
[[ $(grep -c "wrote $work/twice.cov" "$work/dumped.err") == 2 ]] || fail "dumped: not written twice: $(cat "$work/dumped.err")"
[[ $(records "$work/twice.cov") == "$(doubled "$work/two.cov")" ]] || fail "dumped: not each count twice: $(records "$work/twice.cov")"
if [[ -n $agent ]]; then
	"$java" -Xverify:all -agentpath:"$agent=coverage=counts,include=jinstoff.**,out=$work/atwo,log=$work/atwo.log" \
		-cp "$off/main" jinstoffmain.Main 6 "$work/lib1.jar:Same,One" "$work/lib2.jar:Same,Two" >"$work/atwo.out" 2>&1 ||
		fail "agent, two jars: $(cat "$work/atwo.out")"
	same "two jars against the agent" "$work/atwo.cov" "$work/two.cov"
	# The agent's coverage on: one file with the offline classes (lib1) and
	# its own (lib2, plain), as when every class was the agent's.
	run mixed "$off/main:$rtjar" jinstoffmain.Main 6 "${jars[0]}" "$work/lib2.jar:Same,Two" -- \
		-agentpath:"$agent=coverage=counts,include=jinstoff.**,out=$work/mixed,log=$work/mixed.log" -Djinst.out="$work/s"
	same "offline and the agent's classes in the agent's file" "$work/atwo.cov" "$work/mixed.cov"
	[[ ! -e $work/s.cov ]] || fail "mixed: the runtime wrote beside the agent"
	grep -q "jinstoff/One: already instrumented" "$work/mixed.log" || fail "mixed: the agent did not leave One alone"
	# The agent tracing only: the offline classes' coverage still written,
	# by the runtime (the agent's copy), where -Djinst.out says.
	run traced "$off/main:$rtjar" jinstoffmain.Main 6 "${jars[@]}" -- \
		-agentpath:"$agent=trace=counts,include=jinstoffmain.**,out=$work/tr,log=$work/tr.log" -Djinst.out="$work/ts"
	same "offline classes under the agent's trace" "$work/two.cov" "$work/ts.cov"
	grep -qP "^jinstoffmain/Main\tmain\t" "$work/tr.tsv" || fail "traced: the agent's trace has no Main.main"
	# The agent's reset (jcmd) clears the offline classes' arrays too: the
	# run after it is alone in the file.
	rm -f "$work/go"
	"$java" -Xverify:all -agentpath:"$agent=coverage=counts,include=jinstoff.**,out=$work/reset,log=$work/reset.log" \
		-Djinstoff.wait="$work/go" -cp "$off/main:$rtjar" jinstoffmain.Main 6 "${jars[@]}" >"$work/reset.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		grep -q '^waiting$' "$work/reset.out" && break
		sleep 0.05
	done
	"$home/bin/jcmd" $pid JVMTI.agent_load "$agent" '"reset"' >"$work/jcmd.txt" 2>&1
	grep -q "return code: 0" "$work/jcmd.txt" || fail "reset: $(cat "$work/jcmd.txt")"
	touch "$work/go"
	wait $pid || fail "reset: the program failed: $(cat "$work/reset.out")"
	same "reset, then one run" "$work/two.cov" "$work/reset.cov"
fi

verdict "offline coverage"
