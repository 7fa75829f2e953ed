#!/usr/bin/env bash
# Installs what building and testing jinst needs on Debian 12 (run as root).
# Idempotent: does nothing, quietly, when everything is there.
set -euo pipefail

want=(cmake make gcc clang pkg-config libzip-dev libdeflate-dev libisal-dev libxxhash-dev zip unzip python3 libclang-rt-14-dev)
# Test only: Apache Felix, the OSGi framework of agent/tests/jvm.sh's osgi case.
want+=(libfelix-framework-java)
# Test only, coverage (tests/coverage/README.md): JaCoCo 0.8.6 and the ASM it
# needs as the peer, xmllint for its DTD, lcov's genhtml, headless Chromium
# for the HTML report, and the real programs the peer and jinst both run:
# Rhino, Xalan (with Xerces), H2, Lucene 8.
want+=(libjacoco-java libasm-java libxml2-utils lcov chromium)
want+=(librhino-java libxalan2-java libxerces2-java libh2-java liblucene8-java)
# Test only: the coverage core's comparison with JaCoCo (tests/coverage/run_compare.sh)
# also reads commons-lang3 and guava, and compiles fixtures with ecj.
want+=(libcommons-lang3-java libguava-java libecj-java)
# Test only: FOP (with Batik, XML Graphics Commons, Commons IO and Logging,
# FontBox), the fifth program instrumented ahead of time (tests/offline/programs).
want+=(libfop-java)
# Test only: strace, to see the writer fsync each output before its rename
# (tests/cli/writer_check.py).
want+=(strace)
# Bench only: Jython, bench/trace's interpreter workload (bench/interp/work.py).
want+=(jython)
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
