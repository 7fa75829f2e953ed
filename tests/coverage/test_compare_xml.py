#!/usr/bin/env python3
"""Tests compare_xml.py on real JaCoCo XML.

    test_compare_xml.py FIRST.xml SECOND.xml WORKDIR

FIRST and SECOND are JaCoCo's reports of two runs of one deterministic
program (test_compare_xml.sh makes them). Checks:

1. JaCoCo against itself: FIRST vs SECOND agree on 100% of lines and
   classes, with no difference listed, exit status 0.
2. Altered lines: a copy of FIRST in which this test changes chosen lines
   (covered -> missed, missed -> partly, partly -> covered, a line removed,
   a line added) and one class's counters (BRANCH changed, a counter
   added); the comparison lists exactly those lines and that class, with
   the statuses and counters the test wrote, and nothing else.
3. Targets: the altered copy compared with --lines-target 100 misses
   (exit 1); with the default targets over these few changes it passes.
4. Validation: a copy with an attribute the DTD does not declare is
   refused (exit 2) before anything is compared.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "compare_xml.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import compare_xml  # noqa: E402  (the status rule under test is the tool's own)

DOCTYPE = '<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">'
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    r = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, check=False)
    return r.returncode, r.stdout, r.stderr


def write(tree, path):
    """Writes tree with JaCoCo's DOCTYPE (ElementTree drops it)."""
    body = ET.tostring(tree.getroot(), encoding="unicode")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' + DOCTYPE + body)


def listed(stdout):
    """The differences the tool listed: {('line', where, nr): (ref, other)}, {('class', name): text}."""
    lines, classes = {}, {}
    for m in re.finditer(r"^  line (\S+):(\d+) (\w+) -> (\w+)  \(mi ci mb cb: ([-\d ]+) -> ([-\d ]+)\)$",
                         stdout, re.M):
        lines[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(4), m.group(6).strip())
    for m in re.finditer(r"^  class (\S+): (.*)$", stdout, re.M):
        classes[m.group(1)] = m.group(2)
    return lines, classes


def line_status(ln):
    return compare_xml.status(*(int(ln.get(a)) for a in ("mi", "ci", "mb", "cb")))


def set_counts(ln, mi, ci, mb, cb):
    for a, v in zip(("mi", "ci", "mb", "cb"), (mi, ci, mb, cb)):
        ln.set(a, str(v))
    return f"{mi} {ci} {mb} {cb}"


def first(tree, pred):
    """The first (package, sourcefile, line) whose line satisfies pred."""
    for pkg in tree.getroot().iter("package"):
        for src in pkg.findall("sourcefile"):
            for ln in src.findall("line"):
                if pred(ln):
                    return pkg, src, ln
    raise SystemExit("test_compare_xml: the report has no line to alter for " + pred.__doc__)


def alter(tree):
    """Changes lines and a class of tree in place; returns what the tool must list."""
    expect_lines, taken = {}, set()

    def pick(pred):
        pkg, src, ln = first(tree, lambda ln: id(ln) not in taken and pred(ln))
        taken.add(id(ln))
        return (f"{pkg.get('name')}/{src.get('name')}", int(ln.get("nr"))), src, ln

    def covered(ln):
        """a covered line"""
        return line_status(ln) == "covered"

    def missed_branches(ln):
        """a missed line with branches"""
        return line_status(ln) == "missed" and int(ln.get("mb")) >= 2

    def partly(ln):
        """a partly covered line"""
        return line_status(ln) == "partly"

    key, _, ln = pick(covered)
    total_i = int(ln.get("mi")) + int(ln.get("ci"))
    total_b = int(ln.get("mb")) + int(ln.get("cb"))
    expect_lines[key] = ("covered", "missed", set_counts(ln, total_i, 0, total_b, 0))
    key, _, ln = pick(missed_branches)
    mi, mb = int(ln.get("mi")), int(ln.get("mb"))
    expect_lines[key] = ("missed", "partly", set_counts(ln, mi, 0, mb - 1, 1))
    key, _, ln = pick(partly)
    total_i = int(ln.get("mi")) + int(ln.get("ci"))
    total_b = int(ln.get("mb")) + int(ln.get("cb"))
    expect_lines[key] = ("partly", "covered", set_counts(ln, 0, total_i, 0, total_b))
    key, src, ln = pick(covered)
    src.remove(ln)
    expect_lines[key] = ("covered", "absent", "-")
    # A line added past the last one of a source file: absent in the reference.
    nr = max(int(x.get("nr")) for x in src.findall("line")) + 1000
    added = ET.Element("line", {"nr": str(nr), "mi": "0", "ci": "3", "mb": "0", "cb": "0"})
    counters = [i for i, c in enumerate(src) if c.tag == "counter"]
    src.insert(counters[0] if counters else len(src), added)
    expect_lines[(key[0], nr)] = ("absent", "covered", "0 3 0 0")

    # One class: its BRANCH counter changed (or added when it had none), its
    # METHOD counter's covered count raised.
    cls = next(c for c in tree.getroot().iter("class") if c.find("counter[@type='METHOD']") is not None)
    branch = cls.find("counter[@type='BRANCH']")
    if branch is None:
        branch = ET.Element("counter", {"type": "BRANCH", "missed": "0", "covered": "0"})
        cls.insert(list(cls).index(cls.find("counter")), branch)
    old_branch = f"{branch.get('missed')}/{branch.get('covered')}"
    branch.set("missed", str(int(branch.get("missed")) + 2))
    method = cls.find("counter[@type='METHOD']")
    old_method = f"{method.get('missed')}/{method.get('covered')}"
    method.set("covered", str(int(method.get("covered")) + 1))
    expect_class = {cls.get("name"): f"BRANCH {old_branch} -> {branch.get('missed')}/{branch.get('covered')}, "
                    f"METHOD {old_method} -> {method.get('missed')}/{method.get('covered')}"}
    return expect_lines, expect_class


def main(first_xml, second_xml, work):
    os.makedirs(work, exist_ok=True)

    rc, out, err = run(first_xml, second_xml, "--name", "self")
    print(out, err, sep="", end="")
    check(rc == 0, "two runs under JaCoCo: exit 0")
    check(re.search(r"^self: lines   (\d+) of \1 with the same status: 100\.00% .*PASS\)$", out, re.M)
          is not None, "two runs under JaCoCo: 100% of lines")
    check(re.search(r"^self: classes (\d+) of \1 with identical counters: 100\.00% .*PASS\)$", out, re.M)
          is not None, "two runs under JaCoCo: 100% of classes")
    total = int(re.search(r"^self: lines   \d+ of (\d+)", out, re.M).group(1))
    check(total > 1000, f"two runs under JaCoCo: a real report ({total} lines)")
    check(listed(out) == ({}, {}), "two runs under JaCoCo: no difference listed")

    tree = ET.parse(first_xml)
    expect_lines, expect_class = alter(tree)
    altered = os.path.join(work, "altered.xml")
    write(tree, altered)
    rc, out, err = run(first_xml, altered, "--name", "altered", "--diffs", "100")
    print(out, err, sep="", end="")
    check(rc == 0, "altered: five lines in thousands still pass the default targets")
    lines, classes = listed(out)
    check(lines == expect_lines, f"altered: exactly the lines changed are listed ({len(expect_lines)})")
    if lines != expect_lines:
        print("  expected", sorted(expect_lines.items()), "\n  listed  ", sorted(lines.items()))
    check(classes == expect_class, "altered: exactly the class changed is listed, with its counters")
    if classes != expect_class:
        print("  expected", expect_class, "\n  listed  ", classes)
    same = total - (len(expect_lines) - 1)  # the added line makes one more line in either report
    check(f"altered: lines   {same} of {total + 1} with the same status" in out,
          "altered: the line figure counts the changed lines")

    rc, out, _ = run(first_xml, altered, "--name", "strict", "--lines-target", "100", "--diffs", "0")
    check(rc == 1 and "(target >= 100.0%: MISS)" in out, "altered with --lines-target 100: MISS, exit 1")

    tree = ET.parse(first_xml)
    next(tree.getroot().iter("line")).set("hits", "1")
    invalid = os.path.join(work, "invalid.xml")
    write(tree, invalid)
    rc, out, err = run(first_xml, invalid)
    check(rc == 2 and "not valid against JaCoCo's DTD" in err and out == "",
          "an undeclared attribute: refused by the DTD, exit 2, nothing compared")

    print(f"test_compare_xml: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
