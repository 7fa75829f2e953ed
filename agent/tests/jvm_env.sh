# Sourced by the JVM tests (jvm.sh, natives/natives.sh) with home and work
# set: skips (77) without a JDK at $home, or for a sanitized libjinst.so
# without its sanitizer runtimes (JINST_SANITIZED, JINST_PRELOAD from
# CMake); then makes $work afresh and enters it. Gives java, fails and
# fail MESSAGE (prints it and counts it).
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
