# What the shell tests that run a JVM share (sourced: agent/tests/jvm.sh,
# attach_cli.sh, rebuilt.sh, tests/instrument/run_offline_coverage.sh):
# the JDK or a skip, the sanitizer runtimes for java in a sanitized build,
# an empty work folder, fail and the verdict. Exit 77 is ctest's skip
# (SKIP_RETURN_CODE).

fails=0
# fail MESSAGE: one line, counted for the verdict.
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# need_jdk HOME [TOOL...]: java=HOME/bin/java, its version printed; exits 77
# when it or one of the tools (jar, jcmd...) is not there.
need_jdk() {
	local home=$1 t
	java=$home/bin/java
	for t in java "${@:2}"; do
		if [[ ! -x $home/bin/$t ]]; then
			echo "SKIP: no JDK at $home"
			exit 77
		fi
	done
	"$java" -version 2>&1 | head -1
}

# sanitized: whether the build is sanitized (JINST_SANITIZED=ON); in one,
# exits 77 unless JINST_PRELOAD names the sanitizer runtimes a java must
# preload for the sanitized libjinst.so, and sets san_env to the options
# java runs under: the JVM handles SIGSEGV itself (implicit null checks)
# and never frees much at exit, so let it. Each script gives them to whom
# it always did (java alone, or every command).
sanitized() {
	[[ ${JINST_SANITIZED:-OFF} == ON ]] || return 1
	if [[ -z ${JINST_PRELOAD:-} ]]; then
		echo "SKIP: a sanitized libjinst.so needs its sanitizer runtimes, which were not found"
		exit 77
	fi
	san_env=(ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
}

# workdir DIR: DIR made empty, and the current folder.
workdir() {
	rm -rf "$1"
	mkdir -p "$1"
	cd "$1" || exit 1
}

# verdict NAME: "NAME: N failed" and exit 1, or "NAME: passed" and exit 0.
verdict() {
	if ((fails)); then
		echo "$1: $fails failed"
		exit 1
	fi
	echo "$1: passed"
	exit 0
}
