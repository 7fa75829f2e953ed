#!/usr/bin/env python3
"""Compares what two runs of one program recorded: coverage records, or trace counts.

    compare_records.py cov AGENT.dump OFFLINE.dump [--name NAME] [--target PCT] [--diffs N]
    compare_records.py tsv AGENT.tsv OFFLINE.tsv [--name NAME] [--target PCT] [--diffs N]

cov: two outputs of `jinst dump FILE.cov`. A record is keyed by class name
and identity (XXH64 of the original class file); its probes are booleans or
counts. The agent writes a record, zeros included, for every class it
instrumented; the runtime alone only for a class whose code ran; a record
without a probe hit is therefore left out on both sides, as a report reads
it (a missing record and a zero one are both missed). The figure: of every
probe of the records of either side, how many have the same value in both.
A record on one side only counts each of its probes as a difference, as does
a record whose kind or probe count differs.

tsv: two counts TSVs (class, method, descriptor, count). The figure: of the
methods of either file, how many have the same count in both.

With --target 100 (the default) every value must be the same. Below it,
for a program whose runs differ by themselves, two figures must reach it:
of the probes (methods) hit in either run, the share hit in both; and the
hits in common, the sum over every probe of the smaller value over the sum
of the larger (for booleans: hit in both over hit in either). Prints the
figures with PASS or MISS, the sums of all values on each side, and the
first N differences (class and probe index, or method), then exits 0 on
PASS, 1 on MISS, 2 when a file cannot be read.
"""

import argparse
import sys


def read_cov(path):
    """The records of a `jinst dump` output: {(name, identity): (kind, [values])}."""
    records = {}
    inside = False
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            if line.startswith("classes:"):
                inside = True
                continue
            if not inside or not line.startswith("  "):
                continue
            # NAME IDENTITY KIND HIT/N hit BITS  or  ... hit: C C C
            fields = line.split()
            if len(fields) < 5 or "/" not in fields[3]:
                raise ValueError(f"{path}: not a record: {line.strip()}")
            name, identity, kind, hits = fields[0], fields[1], fields[2], fields[3]
            if hits.startswith("0/"):
                continue
            if fields[4] == "hit:":
                values = [int(v) for v in fields[5:]]
            else:
                values = [int(c) for c in fields[5]] if len(fields) > 5 else []
            if len(values) != int(hits.split("/")[1]):
                raise ValueError(f"{path}: {name}: {len(values)} probes for {hits}")
            records[(name, identity)] = (kind, values)
    if not inside:
        raise ValueError(f"{path}: no 'classes:' line (not the output of jinst dump FILE.cov)")
    return records


def compare_cov(agent, offline, diffs):
    """(same, total, sums, pairs, differences) over every probe of either side's records."""
    same = total = 0
    sums = [0, 0]
    pairs = []
    found = []
    for key in sorted(set(agent) | set(offline)):
        a, o = agent.get(key), offline.get(key)
        name = f"{key[0]} ({key[1]})"
        for i, rec in enumerate((a, o)):
            if rec is not None:
                sums[i] += sum(rec[1])
        if a is None or o is None or a[0] != o[0] or len(a[1]) != len(o[1]):
            n = max(len(r[1]) for r in (a, o) if r is not None)
            total += n
            pairs += [(sum(a[1]) if a else 0, sum(o[1]) if o else 0)]
            what = ("agent only" if o is None else "offline only" if a is None
                    else f"{a[0]} {len(a[1])} probes -> {o[0]} {len(o[1])} probes")
            found.append(f"class {name}: {what}")
            continue
        for p, (x, y) in enumerate(zip(a[1], o[1])):
            total += 1
            pairs.append((x, y))
            if x == y:
                same += 1
            else:
                found.append(f"class {name} probe {p}: {x} -> {y}")
    return same, total, sums, pairs, found[:diffs], len(found)


def read_tsv(path):
    """{(class, method, descriptor): count} of a counts TSV."""
    counts = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4:
                raise ValueError(f"{path}: not a counts line: {line.rstrip()}")
            counts[tuple(fields[:3])] = int(fields[3])
    return counts


def compare_tsv(agent, offline, diffs):
    same = total = 0
    sums = [sum(agent.values()), sum(offline.values())]
    found = []
    pairs = []
    for key in sorted(set(agent) | set(offline)):
        total += 1
        x, y = agent.get(key), offline.get(key)
        pairs.append((x or 0, y or 0))
        if x == y:
            same += 1
        else:
            found.append(f"method {key[0]}.{key[1]}{key[2]}: {x if x is not None else 'absent'} -> "
                         f"{y if y is not None else 'absent'}")
    return same, total, sums, pairs, found[:diffs], len(found)


def agreement(pairs):
    """(hits in common, share): the sum of min over the sum of max of each
    pair, and the share of the pairs hit in either that both hit."""
    low = sum(min(x, y) for x, y in pairs)
    high = sum(max(x, y) for x, y in pairs)
    either = sum(1 for x, y in pairs if x or y)
    both = sum(1 for x, y in pairs if x and y)
    return (100.0 * low / high if high else 100.0), (100.0 * both / either if either else 100.0), both, either


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("kind", choices=("cov", "tsv"))
    p.add_argument("agent")
    p.add_argument("offline")
    p.add_argument("--name", default="program")
    p.add_argument("--target", type=float, default=100.0)
    p.add_argument("--diffs", type=int, default=10)
    a = p.parse_args()
    try:
        if a.kind == "cov":
            ra, ro = read_cov(a.agent), read_cov(a.offline)
            same, total, sums, pairs, shown, n = compare_cov(ra, ro, a.diffs)
            what = "probes"
            print(f"{a.name}: records with a probe hit: agent {len(ra)}, offline {len(ro)}, "
                  f"in both {len(set(ra) & set(ro))}")
        else:
            ra, ro = read_tsv(a.agent), read_tsv(a.offline)
            same, total, sums, pairs, shown, n = compare_tsv(ra, ro, a.diffs)
            what = "methods"
    except (OSError, ValueError) as e:
        print(f"compare_records.py: {e}", file=sys.stderr)
        return 2
    pct = 100.0 * same / total if total else 0.0
    if a.target >= 100:
        ok = total > 0 and same == total
        print(f"{a.name}: {what} {same} of {total} with the same value: {pct:.2f}% "
              f"(target all: {'PASS' if ok else 'MISS'})")
    else:
        common, hit, both, either = agreement(pairs)
        ok = total > 0 and common >= a.target and hit >= a.target
        print(f"{a.name}: {what} {same} of {total} with the same value: {pct:.2f}%")
        print(f"{a.name}: {what} hit in both runs: {both} of {either} hit in either: {hit:.2f}%; "
              f"hits in common (sum of the smaller over sum of the larger): {common:.2f}% "
              f"(target both >= {a.target}%: {'PASS' if ok else 'MISS'})")
    print(f"{a.name}: sum of the values: agent {sums[0]}, offline {sums[1]}")
    if n:
        print(f"{a.name}: differences (first {len(shown)} of {n}):")
        for d in shown:
            print(f"  {d}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
