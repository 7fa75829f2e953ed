#!/usr/bin/env bash
# The compare tool's test (ctest cli_coverage_compare_xml): Rhino's small
# run twice under JaCoCo's agent, then test_compare_xml.py on the two
# reports. Exit 77 (skipped) when Debian's packages are not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/peer/peer.sh
source "$here/peer/peer.sh"
peer_begin test_compare_xml jinst-compare
peer_prepare "$work"
for run in first second; do
	bash "$here/peer/run.sh" --work "$work" --scale "$(peer_tiny_scale rhino)" rhino "$work/$run"
done
python3 "$here/test_compare_xml.py" "$work/first/jacoco.xml" "$work/second/jacoco.xml" "$work/test"
