#!/usr/bin/env bash
# Builds the real-world corpora with ../shared/corpus.sh when it is there
# (JINST_CORPUS says where; default /tmp/jinst-corpus).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$repo/../shared/corpus.sh
if [[ -f $shared ]]; then
	bash "$shared" "${JINST_CORPUS:-/tmp/jinst-corpus}" >/dev/null
	cat "${JINST_CORPUS:-/tmp/jinst-corpus}/MANIFEST"
else
	echo "corpus: $shared not found; corpus tests will be skipped" >&2
fi
