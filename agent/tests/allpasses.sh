#!/usr/bin/env bash
# Every pass of the agent on every class, the JDK's included, in one
# transformation (trace=counts|times,coverage,alloc,monitor,natives,
# include=**), under -Xverify:all:
#   javac  compiling JDK sources (scripts/javac_workload.sh), and once
#          more without -Xverify:all (classes load in another order): the same exit
#          code, diagnostics and class files as untraced, no VM error, no
#          failure in the agent's log, and no method left alone that the
#          trace pass alone (include=**) does not leave alone too; javac's
#          own work counted exactly, and each pass's output written
#   threads  tests/jvm/programs' Threads and Concurrency (a pool, ForkJoin,
#          parallel streams, contended monitors, wait/notify): the same
#          output, their calls counted as expected_counts.tsv says, the
#          contended lock's enters exact
#
#   allpasses.sh JAVA_HOME LIBJINST PROGRAMS SOURCE WORK
#
# javac compiles two packages (java.util.function and .regex: about 60
# files) in the default set, trace=counts only (times runs on the threaded
# programs); with JINST_CORPUS_SAMPLE=1 (scripts/test-full.sh), in both modes,
# the whole workload, about 400 files (not in a sanitized build: the
# agent's paths are the same per class); JINST_JAVAC_PACKAGES (a/b c/d) others.
# Exit 0 passed, 1 failed, 77 skipped.
set -uo pipefail
export LC_ALL=C
home=$1 lib=$2 programs=$3 src=$4 work=$5
source "${BASH_SOURCE%/*}/../../tests/lib.sh"
need_jdk "$home"
san=
sanitized && export LD_PRELOAD=$JINST_PRELOAD "${san_env[@]}" && san=yes
workdir "$work"
passes="coverage,alloc,monitor,natives,include=**"

# The agent's log of a run says nothing failed: per class, per batch, per
# output; and the VM reported no error.
clean_log() { # NAME LOG FILES...
	local name=$1 log=$2
	shift 2
	! grep -hE "VerifyError|NoClassDefFoundError|StackOverflowError|LinkageError|ClassCircularityError|ExceptionInInitializerError|OutOfMemoryError|hs_err" \
		"$log" "$@" | head -5 | grep . || fail "$name: a VM error was reported"
	! grep -E "left unchanged:|failed:|cannot|could not|not written| [1-9][0-9]* failed,| [1-9][0-9]* left unchanged on error" \
		"$log" | head -5 | grep . || fail "$name: the agent logged a failure"
	grep -q "^jinst: [1-9][0-9]* classes instrumented" "$log" || fail "$name: no class instrumented"
}
# The methods a log says were left alone, as "class.method descriptor: why".
left_alone() { sed -n 's/^jinst: \(.* left alone: \).*: \(.*\)$/\1\2/p' "$1" | sort -u; }

javac_case() {
	local packages="java/util/function java/util/regex"
	[[ ${JINST_CORPUS_SAMPLE:-} != 1 || -n $san ]] || packages=
	[[ -z ${JINST_JAVAC_PACKAGES:-} ]] || packages=$JINST_JAVAC_PACKAGES
	local part=all
	[[ -z $packages ]] || part=$(echo "$packages" | tr ' /' '+-')
	local wl
	wl=${JINST_CORPUS:-/tmp/jinst-corpus}/javac/$(basename "$(readlink -f "$home")")-$part
	if ! JINST_JAVAC_PACKAGES=$packages bash "$src/scripts/javac_workload.sh" "$wl" "$home" >wl.txt 2>&1; then
		cat wl.txt
		echo "SKIP: no javac workload for $home (sources neither in the JDK nor fetchable)"
		exit 77
	fi
	cat wl.txt
	local files n name
	files=$(wc -l <"$wl/files.txt")
	run() { # NAME [JVM flags...]
		local name=$1 t0
		shift
		mkdir -p "$name"
		t0=$EPOCHREALTIME
		timeout -k 10 "${JINST_JAVAC_TIMEOUT:-600}" "$home/bin/javac" "$@" @"$wl/javac.args" \
			-d "$name/classes" >"$name/stdout.txt" 2>"$name/stderr.txt"
		echo $? >"$name/rc"
		echo "javac $name: exit $(cat "$name/rc"), $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s," \
			"$(find "$name/classes" -name '*.class' 2>/dev/null | wc -l) class files"
	}
	run plain -J-Xverify:all
	[[ $(cat plain/rc) == 0 ]] || { fail "javac fails untraced: $(head -5 plain/stderr.txt)"; return; }
	n=$(find plain/classes -name '*.class' | wc -l)
	# Under -Xverify:all, and once with the default verification: the VM
	# then loads some of the JDK's classes later, after the agent (the
	# native lookup's own, which the natives pass must leave alone).
	# trace=times on javac only over the whole workload: the default set
	# has it on the threaded programs, and stays within CI's budget.
	local verify names=(all-counts all-counts-noverify)
	[[ -n $packages ]] || names=(all-counts all-times all-counts-noverify)
	for name in "${names[@]}"; do
		mode=${name#all-}
		mode=${mode%-noverify}
		verify=-J-Xverify:all
		[[ $name != *-noverify ]] || verify=
		run $name $verify -J-agentpath:"$lib=trace=$mode,$passes,format=counts,out=$work/$name/out,log=$work/$name/agent.log"
		[[ $(cat $name/rc) == 0 ]] || { fail "$name: exit $(cat $name/rc), untraced 0: $(head -3 $name/stdout.txt $name/stderr.txt)"; continue; }
		cmp -s plain/stdout.txt $name/stdout.txt || fail "$name: stdout differs: $(diff plain/stdout.txt $name/stdout.txt | head -5)"
		cmp -s plain/stderr.txt $name/stderr.txt || fail "$name: diagnostics differ: $(diff plain/stderr.txt $name/stderr.txt | head -5)"
		diff -r plain/classes $name/classes >$name/classes.diff 2>&1 || fail "$name: class files differ: $(head -5 $name/classes.diff)"
		clean_log "$name" $name/agent.log $name/stdout.txt $name/stderr.txt
		grep -E "^jinst: [0-9]+ classes instrumented|wrapped|alloc|monitors" $name/agent.log | head -8
		outputs_check "$name" "$name/out" "$files" "$n"
		# What every pass together leaves alone, the trace pass alone leaves
		# alone too (a method too large for its hooks, say): asked of a run
		# of the trace pass alone only when there is something to compare.
		left_alone $name/agent.log >$name/left.txt
		if [[ -s $name/left.txt ]]; then
			[[ -d trace-$mode ]] ||
				run trace-$mode -J-Xverify:all -J-agentpath:"$lib=trace=$mode,include=**,format=counts,out=$work/trace-$mode/out,log=$work/trace-$mode/agent.log"
			left_alone trace-$mode/agent.log >trace-$mode/left.txt
			comm -23 $name/left.txt trace-$mode/left.txt >$name/more.txt
			[[ ! -s $name/more.txt ]] || fail "$name: $(wc -l <$name/more.txt) methods left alone that trace=$mode alone instruments: $(head -3 $name/more.txt)"
			echo "$name: $(wc -l <$name/left.txt) methods left alone, as by trace=$mode alone"
		fi
	done
}

# Each pass wrote its output, and javac's own work is counted exactly.
outputs_check() { # NAME OUT FILES CLASSES
	local name=$1 out=$2 files=$3 n=$4 c=$2.tsv
	[[ -s $c && -s $out.cov && -s $out.alloc.tsv && -s $out.monitors.tsv ]] ||
		{ fail "$name: an output is missing: $(find "$(dirname "$out")" -name "$(basename "$out").*" | paste -sd' ')"; return; }
	grep -qP "^com/sun/tools/javac/parser/JavacParser\tparseCompilationUnit\t\(\)Lcom/sun/tools/javac/tree/JCTree\\\$JCCompilationUnit;\t$files\$" $c ||
		fail "$name: JavacParser.parseCompilationUnit not counted $files times: $(grep -P 'JavacParser\tparseCompilationUnit' $c)"
	grep -qP "^com/sun/tools/javac/jvm/ClassWriter\twriteClass\t.*\t$n\$" $c ||
		fail "$name: ClassWriter.writeClass not counted $n times: $(grep -P 'ClassWriter\twriteClass\t' $c)"
	# A native wrapped at its class's first load is counted like any
	# method: javac writes each class file through NIO's write0 (JDK 17's
	# FileDispatcherImpl, JDK 25's UnixFileDispatcherImpl), once per call
	# of the Java method write that calls it.
	local natives sites objects locks
	natives=$(awk -F'\t' '$1 ~ /^sun\/nio\/ch\/(Unix)?FileDispatcherImpl$/ && $3 == "(Ljava/io/FileDescriptor;JI)I" { n[$2] = $4 }
		END { print (n["write0"] > 0 && n["write0"] == n["write"]) ? n["write0"] : 0 }' $c)
	sites=$(awk -F'\t' 'NR > 1 && $4 ~ /^com\.sun\.tools\.javac\./ { n++ } END { print n + 0 }' $out.alloc.tsv)
	objects=$(awk -F'\t' 'NR > 1 { s += $3 } END { printf "%.0f", s }' $out.alloc.tsv)
	locks=$(awk -F'\t' 'NR > 1 && $8 > 0 { n++ } END { print n + 0 }' $out.monitors.tsv)
	echo "$name: $(wc -l <$c) methods counted, the native write0 $natives times through its wrapper; $sites javac allocation sites," \
		"$objects objects in all; $locks lock sites entered"
	((natives >= n)) || fail "$name: the native write0 not counted through its wrapper as often as write: $(grep -P 'FileDispatcherImpl\twrite' $c)"
	((sites >= 500)) || fail "$name: only $sites allocation sites of javac"
	((locks >= 10)) || fail "$name: only $locks lock sites entered"
}

threads_case() {
	local prog name want got
	for prog in Threads Concurrency; do
		"$java" -cp "$programs" jinsttest.$prog >$prog-plain.txt 2>&1 || { fail "$prog: fails untraced"; continue; }
		for mode in counts times; do
			name=$prog-$mode
			timeout -k 10 120 "$java" -Xverify:all -agentpath:"$lib=trace=$mode,$passes,format=counts,out=$work/$name,log=$work/$name.log" \
				-cp "$programs" jinsttest.$prog >$name.txt 2>&1 || { fail "$name: the program failed: $(tail -3 $name.txt)"; continue; }
			cmp -s $prog-plain.txt $name.txt || fail "$name: output differs: $(diff $prog-plain.txt $name.txt | head -5)"
			clean_log "$name" $name.log $name.txt
			want=$(grep -P "^jinsttest/${prog}[\t\$]" "$src/tests/jvm/programs/expected_counts.tsv" | sort)
			got=$(grep -P "^jinsttest/${prog}[\t\$]" $name.tsv | sort)
			[[ -n $want ]] && ! comm -23 <(echo "$want") <(echo "$got") | head -5 | grep . ||
				fail "$name: counts differ from expected_counts.tsv (above: expected, not counted)"
			echo "$name: $(wc -l <<<"$want") methods of jinsttest.$prog counted as expected_counts.tsv says," \
				"$(awk -F'\t' 'NR > 1 { s += $3 } END { print s + 0 }' $name.alloc.tsv) objects allocated," \
				"$(awk -F'\t' 'NR > 1 { s += $9 } END { print s + 0 }' $name.monitors.tsv) contended enters"
		done
	done
	[[ -f Concurrency-counts.monitors.tsv ]] || return
	# Concurrency.add's block: 80000 enters of one lock by eight threads.
	got=$(awk -F'\t' '$2 == "jinsttest.Concurrency" && $3 == "add" { s += $8 } END { print s + 0 }' Concurrency-counts.monitors.tsv)
	[[ $got == 80000 ]] || fail "Concurrency.add: $got enters, not 80000"
}

threads_case
javac_case
verdict allpasses
