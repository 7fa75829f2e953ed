#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_covdata into corpus/fuzz_covdata/: the
coverage data files of the CLI tests (tests/cli/covfile.py, written from
docs/coverage-format.md), an empty file of the format, a record of many
counts of every LEB128 length, and damaged copies (truncated, a newer
version, a flipped bit). Deterministic.

    make_covdata_seeds.py [OUT_DIR]
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "cli"))
import covfile  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "fuzz_covdata")
os.makedirs(out, exist_ok=True)
covfile.write_inputs(out)
os.remove(os.path.join(out, "notcov.cov"))
counts = [0] + [2**k - 1 for k in range(1, 65)] + [2**k for k in range(0, 64, 7)]
wide = ([("", -1, 0), ("s\u00e9ance", 2**62, 2**62 + 1)],
        {("a", 2**64 - 1): ("c", counts), ("a", 0): ("b", [1] * 17), ("b$1", 5): ("b", [])})
seeds = {"empty.cov": covfile.encode([], {}), "wide.cov": covfile.encode(*wide)}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
