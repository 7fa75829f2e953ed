#!/usr/bin/env bash
# Installs what building and testing jinst needs on Debian 12 (run as root).
# Idempotent: does nothing, quietly, when everything is there.
set -euo pipefail

want=(cmake make gcc clang pkg-config libzip-dev libxxhash-dev zip unzip python3 libclang-rt-14-dev)
# Test only: Apache Felix, the OSGi framework of agent/tests/jvm.sh's osgi case.
want+=(libfelix-framework-java)
# Test only: JaCoCo 0.8.6 (with ASM) as the coverage core's peer, and the
# real classes tests/coverage compares on; ecj compiles fixtures the way
# Eclipse does.
want+=(libjacoco-java libasm-java librhino-java libxalan2-java libcommons-lang3-java libguava-java libh2-java libecj-java)
command -v javac >/dev/null 2>&1 || want+=(openjdk-17-jdk-headless)

missing=()
for p in "${want[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
((${#missing[@]})) || exit 0

if [[ $(id -u) != 0 ]]; then
	echo "setup: missing packages ${missing[*]}; run as root (sudo bash scripts/setup.sh)" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
