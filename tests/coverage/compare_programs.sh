#!/usr/bin/env bash
# jinst's coverage against JaCoCo's on real programs (issue 14, acceptance
# item 1; ctest jvm_coverage_programs):
#
#   compare_programs.sh [--tiny] [--only edges,rhino,h2] [--keep DIR] BUILD
#
# For programs/Edges.java (probe sites next to each other) and each
# workload of peer/ (Rhino, Xalan, H2, Lucene): runs it under
# JaCoCo's agent (peer/run.sh: jacoco.xml and the class files it analysed),
# then under jinst's agent with `coverage` (the JDK excluded by default, as
# JaCoCo), checks both printed the program's checksum, writes jinst's XML
# with `jinst report --classfiles OUTDIR/classes --xml` and compares the two
# with compare_xml.py, which prints the figures (lines agreeing, classes with
# identical counters) with PASS or MISS. BUILD holds bin/jinst and
# lib/libjinst.so. --tiny: the workloads' smallest scales. --keep: the
# outputs stay in DIR/NAME (else a temporary folder, removed). Exit 0 when
# every program passes, 1 when one misses, 77 when Debian's packages are
# missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/peer/peer.sh
source "$here/peer/peer.sh"
tiny=0 only='' keep=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--tiny) tiny=1; shift ;;
	--only) only=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	-*) echo "compare_programs.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:?usage: compare_programs.sh [--tiny] [--only LIST] [--keep DIR] BUILD}" && pwd)
jinst=$build/bin/jinst agent=$build/lib/libjinst.so
[[ -x $jinst && -f $agent ]] || { echo "compare_programs.sh: no $jinst or $agent" >&2; exit 2; }
peer_begin compare_programs.sh jinst-cmp
peer_prepare "$work/peer"
outs=${keep:-$work/out}
mkdir -p "$outs"

# edges OUT: programs/Edges.java under JaCoCo, as run.sh does a workload.
edges() {
	local out=$1
	mkdir -p "$out" "$work/edges" && rm -rf "$out/jacoco.exec" "$out/classes" || return
	javac --release 11 -d "$work/edges" "$here/programs/Edges.java" && cp -r "$work/edges" "$out/classes" || return
	java "$(peer_jacoco_option "$work/peer" "$out/jacoco.exec")" -cp "$work/edges" edges.Edges >"$out/jacoco.out" || return
	java "${peer_quick_jvm[@]}" -cp "$work/peer/report:$(peer_report_classpath)" Report "$out/jacoco.exec" \
		--classfiles "$out/classes" --name edges --xml "$out/jacoco.xml" >/dev/null
}

names=(edges "${peer_workloads[@]}")
[[ -z $only ]] || IFS=, read -ra names <<<"$only"
failed=()
for name in "${names[@]}"; do
	out=$outs/$name
	scale=
	((tiny == 0)) || scale=$(peer_tiny_scale "$name")
	echo "== $name"
	if [[ $name == edges ]]; then
		edges "$out" || { failed+=("$name"); continue; }
		cmd=(java -cp "$work/edges" edges.Edges)
	else
		bash "$here/peer/run.sh" --work "$work/peer" ${scale:+--scale "$scale"} "$name" "$out" >"$out.jacoco.log" 2>&1 ||
			{ cat "$out.jacoco.log" >&2; failed+=("$name"); continue; }
		mapfile -t cmd < <(peer_command "$work/peer" "$name" "$scale")
	fi
	rm -f "$out/jinst.cov"
	"${cmd[0]}" "-agentpath:$agent=coverage,out=$out/jinst,log=$out/jinst.log" "${cmd[@]:1}" >"$out/jinst.out"
	ref=$(peer_checksum "$out/jacoco.out") got=$(peer_checksum "$out/jinst.out")
	echo "jacoco: $ref"
	echo "jinst:  $got"
	if [[ -z $ref || $ref != "$got" ]]; then
		echo "compare_programs.sh: $name printed another result under jinst" >&2
		failed+=("$name")
		continue
	fi
	"$jinst" report "$out/jinst.cov" --classfiles "$out/classes" --name "$name" --xml "$out/jinst.xml" \
		2>"$out/report.err" || { cat "$out/report.err" >&2; failed+=("$name"); continue; }
	python3 "$here/compare_xml.py" "$out/jacoco.xml" "$out/jinst.xml" --name "$name" --diffs 10 ||
		failed+=("$name")
done
if ((${#failed[@]})); then
	echo "compare_programs.sh: below the targets or failed: ${failed[*]}"
	exit 1
fi
echo "compare_programs.sh: all programs pass"
