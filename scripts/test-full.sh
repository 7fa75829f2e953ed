#!/usr/bin/env bash
# scripts/test.sh with every corpus check over every class, module and jar
# (CI samples them), and javac's whole workload under every pass
# (agent/tests/allpasses.sh). About twice as long.
set -euo pipefail
cd "$(dirname "$0")/.."
JINST_CORPUS_SAMPLE=1 exec bash scripts/test.sh "$@"
