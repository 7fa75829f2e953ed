#!/usr/bin/env python3
"""compare_records.py held to what it must find (ctest cli_offline_compare_records).

Builds `jinst dump` outputs and counts TSVs in the format the tool writes,
then changes copies the way a wrong instrumentation would (a probe's
value, a record missing, another probe count) and the way the two kinds of
run legitimately differ (a zero record the agent writes and the runtime
does not), and checks the exit status and the lines printed.
"""

import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_records.py")
failures = []


def dump(records):
    lines = ["Coverage data x.cov (100 bytes, format version 1)", "sessions: 1",
             "  s start 2026-01-01T00:00:00.000Z dump 2026-01-01T00:00:01.000Z",
             f"classes: {len(records)}, probes hit 0 of 0, identity conflicts 0"]
    for name, ident, kind, values in records:
        hit = sum(1 for v in values if v)
        if kind == "booleans":
            lines.append(f"  {name} {ident} booleans {hit}/{len(values)} hit {''.join(str(v) for v in values)}")
        else:
            lines.append(f"  {name} {ident} counts {hit}/{len(values)} hit: {' '.join(str(v) for v in values)}")
    return "\n".join(lines) + "\n"


def run(tmp, kind, a, b, *args):
    pa, pb = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    for p, text in ((pa, a), (pb, b)):
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    r = subprocess.run([sys.executable, TOOL, kind, pa, pb, "--name", "t", *args],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout + r.stderr


def expect(what, got, rc, lines):
    code, out = got
    if code != rc:
        failures.append(f"{what}: exit {code}, expected {rc}:\n{out}")
    for line in lines:
        if line not in out:
            failures.append(f"{what}: no line {line!r} in:\n{out}")


BASE = [("a/One", "00000000000000a1", "counts", [3, 0, 7, 1]),
        ("a/Two", "00000000000000b2", "counts", [0, 0, 5]),
        ("a/Three", "00000000000000c3", "booleans", [1, 0, 1])]


def main():
    with tempfile.TemporaryDirectory(prefix="jinst-cmprec.") as tmp:
        same = dump(BASE)
        expect("identical", run(tmp, "cov", same, same), 0,
               ["t: probes 10 of 10 with the same value: 100.00% (target all: PASS)",
                "t: sum of the values: agent 18, offline 18"])
        # The agent writes a zero record for a class loaded but never run.
        zero = dump(BASE + [("a/Idle", "00000000000000d4", "counts", [0, 0])])
        expect("a zero record", run(tmp, "cov", zero, same), 0,
               ["t: records with a probe hit: agent 3, offline 3, in both 3"])
        changed = dump([BASE[0][:3] + ([3, 0, 8, 1],)] + BASE[1:])
        expect("a count", run(tmp, "cov", same, changed), 1,
               ["t: probes 9 of 10 with the same value: 90.00% (target all: MISS)",
                "  class a/One (00000000000000a1) probe 2: 7 -> 8"])
        expect("a count, below a target", run(tmp, "cov", same, changed, "--target", "90"), 0,
               ["t: probes hit in both runs: 6 of 6 hit in either: 100.00%; hits in common "
                "(sum of the smaller over sum of the larger): 94.74% (target both >= 90.0%: PASS)"])
        expect("a count, above a target", run(tmp, "cov", same, changed, "--target", "95"), 1,
               ["(target both >= 95.0%: MISS)"])
        expect("a record missing", run(tmp, "cov", same, dump(BASE[:2])), 1,
               ["  class a/Three (00000000000000c3): agent only"])
        other = dump(BASE[:2] + [("a/Three", "00000000000000c3", "booleans", [1, 0, 1, 0])])
        expect("another probe count", run(tmp, "cov", same, other), 1,
               ["  class a/Three (00000000000000c3): booleans 3 probes -> booleans 4 probes"])
        ident = dump(BASE[:2] + [("a/Three", "00000000000000ff", "booleans", [1, 0, 1])])
        expect("another identity", run(tmp, "cov", same, ident), 1,
               ["  class a/Three (00000000000000c3): agent only",
                "  class a/Three (00000000000000ff): offline only"])
        expect("not a dump", run(tmp, "cov", "hello\n", same), 2, ["no 'classes:' line"])
        tsv = "a/One\tf\t()V\t4\na/One\tg\t(I)I\t10\n"
        expect("tsv identical", run(tmp, "tsv", tsv, tsv), 0,
               ["t: methods 2 of 2 with the same value: 100.00% (target all: PASS)"])
        expect("tsv a method missing", run(tmp, "tsv", tsv, "a/One\tf\t()V\t4\n"), 1,
               ["  method a/One.g(I)I: 10 -> absent"])
        expect("tsv not a TSV", run(tmp, "tsv", "a b c\n", tsv), 2, ["not a counts line"])
    for f in failures:
        print(f"FAIL: {f}")
    print(f"compare_records.py: {12 - len(failures)} of 12 cases as expected" if not failures
          else f"compare_records.py: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
