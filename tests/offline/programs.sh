#!/usr/bin/env bash
# Real programs from Debian packages (the coverage peer's: Rhino, Xalan with
# Xerces, H2, Lucene; tests/coverage/peer) with their whole class path
# instrumented by `jinst instrument --coverage=counts --trace=counts`, run
# under -Xverify:all with jinst-runtime.jar alone: each prints the
# checksum of its plain run, and its coverage and call counts agree with
# what the agent records of the same run of the same program, within the
# bounds of compare_runs.py (these programs do not repeat themselves
# exactly; skipped in sanitized builds, whose agent the JVM cannot load
# without their runtimes).
#   programs.sh JINST RUNTIME_JAR LIBJINST WORK [PROGRAM...]
# Exit 0 passed, 1 failed, 77 skipped (a package missing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jinst=$1 runtime=$2 agent=$3 work=$4
shift 4
# shellcheck source=../coverage/peer/peer.sh
source "$here/../coverage/peer/peer.sh"
programs=("$@")
((${#programs[@]})) || programs=("${peer_workloads[@]}")
missing=$(peer_missing)
[[ -z $missing ]] || { echo "skipped: missing $missing (scripts/setup.sh)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
peer_prepare "$work" >/dev/null || { echo "FAIL: the drivers do not compile"; exit 1; }
fails=0
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

for w in "${programs[@]}"; do
	echo "== $w"
	mapfile -t cmd < <(peer_command "$work" "$w" "$(peer_tiny_scale "$w")")
	# cmd: java -cp CLASSPATH MAIN ARGS...
	"${cmd[@]}" >"$work/$w-plain.out" 2>&1 || { fail "$w: the plain run failed"; tail -5 "$work/$w-plain.out"; continue; }
	sum=$(peer_checksum "$work/$w-plain.out")
	echo "  plain: $sum"
	mapfile -t jars < <(peer_jars "$w")
	out=$work/$w-offline
	"$jinst" instrument --coverage=counts --trace=counts --quiet "$work/classes" "${jars[@]}" -o "$out" \
		>"$out.txt" 2>&1 || { fail "$w: jinst instrument failed"; cat "$out.txt"; continue; }
	echo "  instrument: $(head -n 1 "$out.txt")"
	cp=$out/classes
	for j in "${jars[@]}"; do
		cp+=:$out/${j##*/}
	done
	"${cmd[0]}" -Xverify:all -Djinst.out="$work/$w-off" -cp "$cp:$runtime" "${cmd[@]:3}" \
		>"$work/$w-off.out" 2>&1 || { fail "$w: the instrumented run failed"; tail -5 "$work/$w-off.out"; continue; }
	[[ $(peer_checksum "$work/$w-off.out") == "$sum" ]] ||
		{ fail "$w: instrumented, it printed $(peer_checksum "$work/$w-off.out"), not $sum"; continue; }
	[[ -s $work/$w-off.cov && -s $work/$w-off.tsv ]] || { fail "$w: the runtime wrote no data"; continue; }
	echo "  instrumented, -Xverify:all: the same checksum; $work/$w-off.cov and .tsv written"
	if [[ ${JINST_SANITIZED:-OFF} == ON ]]; then
		continue
	fi
	"${cmd[0]}" -agentpath:"$agent"=coverage=counts,trace=counts,out="$work/$w-ag",log="$work/$w-ag.log" \
		"${cmd[@]:1}" >"$work/$w-ag.out" 2>&1 || { fail "$w: the run under the agent failed"; continue; }
	[[ $(peer_checksum "$work/$w-ag.out") == "$sum" ]] || { fail "$w: under the agent, another checksum"; continue; }
	"$jinst" dump "$work/$w-off.cov" >"$work/$w-off.txt" && "$jinst" dump "$work/$w-ag.cov" >"$work/$w-ag.txt" ||
		{ fail "$w: a coverage file does not read"; continue; }
	# The classes instrumented ahead of time: the agent sees others too.
	{ (cd "$work/classes" && find . -name '*.class' | sed 's|^\./||'); for j in "${jars[@]}"; do unzip -Z1 "$j"; done; } |
		sed -n 's|^\(META-INF/versions/[0-9]*/\)\{0,1\}\(.*\)\.class$|\2|p' | sort -u >"$work/$w-classes.txt"
	python3 "$here/compare_runs.py" "$work/$w-classes.txt" "$work/$w-off.txt" "$work/$w-ag.txt" "$work/$w-off.tsv" "$work/$w-ag.tsv" \
		>"$work/$w-compare.txt" || fail "$w: the offline records differ from the agent's"
	sed 's/^/  /' "$work/$w-compare.txt" | tail -n 21
done
echo "programs offline: ${#programs[@]} programs, $fails failures"
((fails == 0))
