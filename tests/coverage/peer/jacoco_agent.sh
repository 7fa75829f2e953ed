#!/usr/bin/env bash
# Builds JaCoCo's agent jar from Debian's libjacoco-java.   jacoco_agent.sh OUT.jar
#
# Debian ships org.jacoco.agent.rt.jar unshaded and without a manifest that
# names a premain class (upstream's jacocoagent.jar bundles core and ASM
# under renamed packages). The jar made here holds nothing but a manifest:
# Premain-Class is the runtime's own org.jacoco.agent.rt.internal.PreMain,
# and Class-Path puts the runtime, core and the ASM jars core needs on the
# system class path. Because those are not renamed, a run must exclude them
# from instrumentation: excludes=org.jacoco.*:org.objectweb.* (peer.sh's
# jacoco_opts does).
set -euo pipefail
out=${1:?usage: jacoco_agent.sh OUT.jar}
java_dir=${JINST_JAVA_DIR:-/usr/share/java}
jars=(org.jacoco.agent.rt.jar org.jacoco.core.jar asm.jar asm-commons.jar asm-tree.jar)
cp=
for j in "${jars[@]}"; do
	[[ -f $java_dir/$j ]] || { echo "jacoco_agent.sh: $java_dir/$j missing (scripts/setup.sh installs libjacoco-java)" >&2; exit 1; }
	cp+=" file:$(readlink -f "$java_dir/$j")"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jinst-jacoco-agent.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A manifest line is at most 72 bytes: longer ones continue on the next
# line after one space (JAR File Specification, "Line length").
{
	echo "Manifest-Version: 1.0"
	echo "Premain-Class: org.jacoco.agent.rt.internal.PreMain"
	echo "Class-Path:${cp}" | fold -w 70 | sed '2,$s/^/ /'
} >"$tmp/MANIFEST.MF"
jar --create --file "$out" --manifest "$tmp/MANIFEST.MF"
