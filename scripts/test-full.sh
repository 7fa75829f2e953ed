#!/usr/bin/env bash
# scripts/test.sh with every corpus check over every class, module and jar
# (CI samples them). About twice as long.
set -euo pipefail
cd "$(dirname "$0")/.."
JINST_CORPUS_SAMPLE=1 exec bash scripts/test.sh "$@"
