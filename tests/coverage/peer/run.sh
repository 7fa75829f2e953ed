#!/usr/bin/env bash
# Runs a workload under JaCoCo's agent and writes JaCoCo's report of it over
# the workload's jars: the reference a coverage tool is compared with.
#
#   run.sh [--scale N] [--work DIR] WORKLOAD OUTDIR
#
# WORKLOAD is rhino, xalan, h2 or lucene (peer.sh). Writes OUTDIR/jacoco.exec,
# OUTDIR/jacoco.xml, OUTDIR/jacoco.out (the program's output) and
# OUTDIR/classes, the class files the report analysed (multi-release jars
# resolved), for the report it is compared with; prints the program's
# checksum line and the report's summary. --work reuses a folder
# prepared by peer_prepare (compiled drivers, the agent jar); without it a
# temporary one is made. --scale is the workload's size (its default when
# not given).
set -euo pipefail
# shellcheck source=SCRIPTDIR/peer.sh
source "$(dirname "$0")/peer.sh"
scale=
work=
while [[ $# -gt 0 ]]; do
	case $1 in
	--scale) scale=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -eq 2 ]] || { echo "usage: run.sh [--scale N] [--work DIR] WORKLOAD OUTDIR" >&2; exit 2; }
name=$1 out=$2
peer_jars "$name" >/dev/null
missing=$(peer_missing)
[[ -z $missing ]] || { echo "run.sh: missing $missing (scripts/setup.sh)" >&2; exit 1; }
if [[ -z $work ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/jinst-peer.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	peer_prepare "$work"
fi
mkdir -p "$out"
rm -f "$out/jacoco.exec"
mapfile -t cmd < <(peer_command "$work" "$name" "$scale")
"${cmd[0]}" "$(peer_jacoco_option "$work" "$out/jacoco.exec")" "${cmd[@]:1}" >"$out/jacoco.out"
peer_checksum "$out/jacoco.out"
rm -rf "$out/classes"
peer_report "$work" "$name" "$out/jacoco.xml" "$out/jacoco.exec" --flatten "$out/classes"
