#!/usr/bin/env bash
# A workload under JaCoCo, checked (ctest jvm_coverage_peer_NAME):
#
#   check.sh WORKLOAD [--scale N | --tiny]
#
# runs the workload plain and under JaCoCo's agent (run.sh), and checks that
# both print the same checksum line, that the report is valid against
# JaCoCo's DTD (compare_xml.py --validate), that every execution data record
# of the workload's jars matched its class (the class files analysed are
# those the VM ran), and that the report shows covered instructions in every
# jar of the workload. --tiny: the workload's smallest scale (the ctest's;
# the code it runs is the same, in fewer rounds). Exit 77 (skipped) when
# Debian's packages are missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/peer.sh
source "$here/peer.sh"
name=${1:?usage: check.sh WORKLOAD [--scale N | --tiny]}
peer_jars "$name" >/dev/null
scale=
case ${2:-} in
--scale) scale=$3 ;;
--tiny) scale=$(peer_tiny_scale "$name") ;;
esac
peer_begin check.sh jinst-peer-check
peer_prepare "$work"

mapfile -t cmd < <(peer_command "$work" "$name" "$scale")
start=$EPOCHREALTIME
"${cmd[@]}" >"$work/plain.out"
plain=$(peer_checksum "$work/plain.out")
echo "plain:  $plain  ($(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s)"
[[ -n $plain ]] || { echo "check.sh: the plain run printed no checksum" >&2; cat "$work/plain.out" >&2; exit 1; }

start=$EPOCHREALTIME
bash "$here/run.sh" --work "$work" ${scale:+--scale "$scale"} "$name" "$work/jacoco" | tee "$work/run.txt"
echo "jacoco: run and report in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"
under=$(peer_checksum "$work/jacoco/jacoco.out")
[[ $under == "$plain" ]] || { echo "check.sh: under JaCoCo '$under', plain '$plain'" >&2; exit 1; }
echo "same checksum plain and under JaCoCo"

python3 "$here/../compare_xml.py" --validate "$work/jacoco/jacoco.xml"
grep -q ', 0 with no matching class identity$' "$work/run.txt" ||
	{ echo "check.sh: execution data that matches no class file analysed" >&2; exit 1; }

# Covered instructions per jar: each jar's packages, from the report.
mapfile -t jars < <(peer_jars "$name")
python3 - "$work/jacoco/jacoco.xml" "${jars[@]}" <<'PY'
import sys, zipfile, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
covered = {}
for pkg in root.iter("package"):
    for cls in pkg.findall("class"):
        c = cls.find("counter[@type='INSTRUCTION']")
        covered[cls.get("name")] = int(c.get("covered")) if c is not None else 0
bad = False
for jar in sys.argv[2:]:
    names = {n[:-6] for n in zipfile.ZipFile(jar).namelist() if n.endswith(".class") and not n.startswith("META-INF/")}
    inst = sum(covered.get(n, 0) for n in names)
    classes = sum(1 for n in names if covered.get(n, 0) > 0)
    print(f"{jar}: {classes} classes run, {inst} instructions covered")
    bad |= inst == 0
sys.exit(1 if bad else 0)
PY
