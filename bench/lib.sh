# shellcheck shell=bash
# What the benches that time whole java commands share (sourced by
# bench/monitor and bench/alloc): the JDKs to run on, the build of jinst,
# an interleaved round's timing and the table of medians and ratios.
#
# An interleaved run: every round runs each configuration once, in turn
# (A B C A B C ...), so a machine that slows down part-way slows all of
# them alike; each run's wall time is a line "CONFIG START END" of a times
# file (bench_time), and the table takes the median per configuration.

# bench_jdks: the array jdks, when empty, set to JDK 17 from the path and
# JDK 25 at /usr/lib/jvm/temurin-25-jdk-amd64 when installed.
bench_jdks() {
	[[ ${#jdks[@]} -eq 0 ]] || return 0
	jdks=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
	[[ ! -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]] || jdks+=(/usr/lib/jvm/temurin-25-jdk-amd64)
}

# bench_build REPO BUILD TARGET...: build, when BUILD is empty, jinst
# (Release, no tests) and TARGETs into REPO/build-bench; prints the build
# folder used.
bench_build() {
	local repo=$1 build=$2
	shift 2
	if [[ -z $build ]]; then
		build=$repo/build-bench
		echo "== building jinst (Release) into build-bench/" >&2
		bash "$repo/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Release -DJINST_BUILD_TESTS=OFF >&2
		cmake --build "$build" --target "$@" -j 2 >/dev/null
	fi
	echo "$build"
}

# bench_time TIMES CONFIG COMMAND...: runs COMMAND, appends its wall time
# to TIMES; the command's status.
bench_time() {
	local times=$1 config=$2 start rc
	shift 2
	start=$EPOCHREALTIME
	"$@"
	rc=$?
	echo "$config $start $EPOCHREALTIME" >>"$times"
	return $rc
}

# bench_table TIMES "CONFIGS" "BASES" [RATIOS]: per configuration, in the
# order given, the median wall time and its ratio to each base (a
# configuration of the run); with RATIOS, also "CONFIG<TAB>RATIO TO THE
# FIRST BASE" lines appended there, for targets.
bench_table() {
	awk -v order="$2" -v bases="$3" -v ratios="${4:-}" '
	{ t[$1, ++n[$1]] = $3 - $2 }
	function median(c,   k, i, j, a, x) {
		k = n[c]
		for (i = 1; i <= k; i++) a[i] = t[c, i]
		for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		m = split(order, cs, " ")
		b = split(bases, bs, " ")
		for (i = 1; i <= m; i++) med[cs[i]] = median(cs[i])
		for (i = 1; i <= m; i++) {
			line = sprintf("%-10s %8.3f s", cs[i], med[cs[i]])
			for (j = 1; j <= b; j++) line = line sprintf("  %6.2fx %s", med[cs[i]] / med[bs[j]], bs[j])
			print line
			if (ratios != "") printf "%s\t%.4f\n", cs[i], med[cs[i]] / med[bs[1]] >>ratios
		}
	}' "$1"
}

# bench_classes_digest DIR: one line naming the class files under DIR and
# their bytes (javac's output is deterministic: an instrumented compile
# must write the very bytes the plain one did).
bench_classes_digest() {
	(cd "$1" && find . -name '*.class' | LC_ALL=C sort | xargs cat | md5sum | sed "s/ .*/ $(find . -name '*.class' | wc -l) classes/")
}
