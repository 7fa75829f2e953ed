#!/usr/bin/env python3
"""One program's run instrumented ahead of time against the agent's run.

    compare_runs.py CLASSES OFFLINE_COV.txt AGENT_COV.txt OFFLINE.tsv AGENT.tsv

CLASSES lists the internal names of the classes that were instrumented
ahead of time, one a line (the agent also sees classes the class path does
not hold: a JDK module's). The .txt files are `jinst dump` of the two
coverage data files (counts), the .tsv the two trace outputs (counts).

Every class the offline run recorded must be in the agent's data under the
same name and identity. Real programs do not repeat themselves exactly
(Lucene's merge threads, hash tables keyed by identity hash codes: two runs
under the agent differ too), so the rest is held to bounds: of the probes
hit in either run, at most 1 in 200 hit in one run only and 1 in 33 with
another count; of the methods called, at most 1 in 200 called in one run
only and 1 in 33 another number of times. Exit status 1 otherwise.
"""
import sys


def records(path, keep):
    out = {}
    for line in open(path):
        f = line.split()
        # "  NAME IDENTITY counts H/N hit: C C ..." or "... booleans H/N hit 0110"
        if line.startswith("  ") and len(f) >= 5 and f[2] in ("counts", "booleans") and f[4] in ("hit", "hit:"):
            if f[0] in keep:
                probes = f[5:] if f[2] == "counts" else list(f[5]) if len(f) > 5 else []
                out[(f[0], f[1])] = [int(c) for c in probes]
    return out


def calls(path, keep):
    out = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) == 4 and f[3].isdigit() and f[0] in keep:
            out[tuple(f[:3])] = int(f[3])
    return out


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    keep = set(line.strip() for line in open(sys.argv[1]))
    off, ag = records(sys.argv[2], keep), records(sys.argv[3], keep)
    problems = []
    hit = state = count = 0
    for key in set(off) | set(ag):
        a, b = off.get(key), ag.get(key)
        if a is None and not any(b):
            continue
        if b is None:
            problems.append(f"{key[0]} {key[1]}: in the offline data, not the agent's")
            continue
        a = a or [0] * len(b)
        if len(a) != len(b):
            problems.append(f"{key[0]}: {len(a)} probes offline, {len(b)} under the agent")
            continue
        hit += sum(x > 0 or y > 0 for x, y in zip(a, b))
        state += sum((x > 0) != (y > 0) for x, y in zip(a, b))
        count += sum(x != y and x > 0 and y > 0 for x, y in zip(a, b))
    oc, ac = calls(sys.argv[4], keep), calls(sys.argv[5], keep)
    methods = len(set(oc) | set(ac))
    once = len(set(oc) ^ set(ac))
    times = sum(oc[k] != ac[k] for k in set(oc) & set(ac))
    if not off or not hit or not oc:
        problems.append("nothing recorded")
    if state * 200 > hit:
        problems.append(f"{state} of {hit} probes hit in one run only")
    if count * 33 > hit:
        problems.append(f"{count} of {hit} probes hit with another count")
    if once * 200 > methods:
        problems.append(f"{once} of {methods} methods called in one run only: {sorted(set(oc) ^ set(ac))[:5]}")
    if times * 33 > methods:
        problems.append(f"{times} of {methods} methods called another number of times")
    for p in problems[:20]:
        print("DIFF", p)
    print(f"{len(off)} classes recorded offline, {len(ag)} by the agent; probes hit {hit}: {state} in one run only, "
          f"{count} another count; methods called {methods}: {once} in one run only, {times} another count")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
