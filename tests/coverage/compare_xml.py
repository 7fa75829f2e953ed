#!/usr/bin/env python3
"""Compares two coverage reports in JaCoCo's XML format over the same classes.

    compare_xml.py REFERENCE.xml OTHER.xml [--name NAME] [--diffs N]
                   [--lines-target PCT] [--classes-target PCT] [--dtd FILE | --no-validate]
    compare_xml.py --validate FILE...

The figures are those of the coverage issue's first acceptance item:

lines    every <line> of every <sourcefile>, keyed by (group path, package,
         source file, line number), has a status, as JaCoCo's LineImpl
         derives it: missed when it has missed instructions or branches and
         nothing covered, covered when it has covered ones and nothing
         missed, partly when it has both. A line in one report only counts
         as a difference (its status in the other is "absent"). The share
         of lines of either report with the same status in both must reach
         --lines-target (99.5).
classes  every <class>, keyed by (group path, class name): its counters
         (INSTRUCTION, BRANCH, LINE, COMPLEXITY, METHOD, CLASS; a counter
         JaCoCo leaves out is 0 missed, 0 covered) are identical or not. The
         share of classes of either report with identical counters must
         reach --classes-target (99).

Prints both figures with PASS or MISS, the differences counted by kind
(covered -> partly, BRANCH, ...), then the first N differences of each
sort, one a line:

    line PACKAGE/SOURCE:NR REF -> OTHER  (mi ci mb cb: a b c d -> e f g h)
    class NAME: TYPE m/c -> m/c, ...     (missed/covered; "report present ->
                                          absent": a class in one report only)

Both files are first validated against JaCoCo's DTD with xmllint: report.dtd
as org.jacoco.report.jar ships it (Debian's libjacoco-java), or --dtd FILE.
Exit status: 0 when both figures pass, 1 when one misses, 2 when a file is
not valid or cannot be read. Python's standard library only.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

COUNTERS = ("INSTRUCTION", "BRANCH", "LINE", "COMPLEXITY", "METHOD", "CLASS")
REPORT_JAR = os.path.join(os.environ.get("JINST_JAVA_DIR", "/usr/share/java"), "org.jacoco.report.jar")
DTD_ENTRY = "org/jacoco/report/xml/report.dtd"


class Invalid(Exception):
    """A report that cannot be read or does not follow the DTD."""


def validate(paths, dtd=None):
    """Runs xmllint on each path against the DTD; raises Invalid on the first failure."""
    if shutil.which("xmllint") is None:
        raise Invalid("xmllint not found (Debian's libxml2-utils)")
    with tempfile.TemporaryDirectory(prefix="jinst-dtd.") as tmp:
        if dtd is None:
            try:
                with zipfile.ZipFile(REPORT_JAR) as jar:
                    data = jar.read(DTD_ENTRY)
            except (OSError, KeyError, zipfile.BadZipFile) as e:
                raise Invalid(f"cannot read {DTD_ENTRY} from {REPORT_JAR}: {e}") from e
            dtd = os.path.join(tmp, "report.dtd")
            with open(dtd, "wb") as f:
                f.write(data)
        # --path: the DOCTYPE names "report.dtd"; found there, xmllint does
        # not warn that it cannot load it. --nonet: never fetch anything.
        base = ["xmllint", "--noout", "--nonet", "--path", os.path.dirname(os.path.abspath(dtd)),
                "--dtdvalid", dtd]
        for p in paths:
            r = subprocess.run(base + [p], capture_output=True, text=True, check=False)
            if r.returncode != 0:
                raise Invalid(f"{p} is not valid against JaCoCo's DTD:\n{r.stderr.strip()}")


def status(mi, ci, mb, cb):
    """JaCoCo's line status: the union of its instruction and branch counters' statuses."""
    missed = mi > 0 or mb > 0
    covered = ci > 0 or cb > 0
    if missed and covered:
        return "partly"
    if covered:
        return "covered"
    if missed:
        return "missed"
    return "empty"


def counters_of(element):
    """The counters directly under element: {type: (missed, covered)}, absent ones (0, 0)."""
    found = {t: (0, 0) for t in COUNTERS}
    for c in element.findall("counter"):
        found[c.get("type")] = (int(c.get("missed")), int(c.get("covered")))
    return found


def load(path):
    """Lines {key: (mi, ci, mb, cb)} and classes {key: counters} of a report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Invalid(f"cannot read {path}: {e}") from e
    if root.tag != "report":
        raise Invalid(f"{path}: the root element is <{root.tag}>, not <report>")
    lines, classes = {}, {}

    def walk(node, groups):
        for child in node:
            if child.tag == "group":
                walk(child, groups + (child.get("name"),))
            elif child.tag == "package":
                prefix = "/".join(groups + ("",)) if groups else ""
                for cls in child.findall("class"):
                    classes[prefix + cls.get("name")] = counters_of(cls)
                pkg = child.get("name")
                for src in child.findall("sourcefile"):
                    where = prefix + (pkg + "/" if pkg else "") + src.get("name")
                    for ln in src.findall("line"):
                        lines[(where, int(ln.get("nr")))] = tuple(
                            int(ln.get(a)) for a in ("mi", "ci", "mb", "cb"))

    walk(root, ())
    return lines, classes


def compare_lines(ref, other):
    """[(key, ref status, other status, ref counts, other counts)] for lines whose status differs, and the total."""
    keys = sorted(set(ref) | set(other))
    diffs = []
    for k in keys:
        a, b = ref.get(k), other.get(k)
        sa = status(*a) if a else "absent"
        sb = status(*b) if b else "absent"
        if sa != sb:
            diffs.append((k, sa, sb, a, b))
    return diffs, len(keys)


def compare_classes(ref, other):
    """[(name, changes)] for classes whose counters differ, and the total. A
    change is (type, ref (missed, covered), other (missed, covered)); a class
    in one report only has the one change ("report", ref in it, other in it)."""
    keys = sorted(set(ref) | set(other))
    diffs = []
    for k in keys:
        a, b = ref.get(k), other.get(k)
        if a is None or b is None:
            diffs.append((k, [("report", a is not None, b is not None)]))
            continue
        changed = [(t, a[t], b[t]) for t in COUNTERS if a[t] != b[t]]
        if changed:
            diffs.append((k, changed))
    return diffs, len(keys)


def share(same, total):
    return 100.0 * same / total if total else 100.0


def kinds(items):
    counts = {}
    for k in items:
        counts[k] = counts.get(k, 0) + 1
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def fmt_counts(c):
    return " ".join(map(str, c)) if c else "-"


def fmt_counter(v):
    """missed/covered, or for the "report" change present/absent."""
    if isinstance(v, tuple):
        return f"{v[0]}/{v[1]}"
    return "present" if v else "absent"


def report(name, line_diffs, line_total, class_diffs, class_total, args):
    """Prints the figures and differences; returns True when both targets are met."""
    line_pct = share(line_total - len(line_diffs), line_total)
    class_pct = share(class_total - len(class_diffs), class_total)
    line_ok = line_pct >= args.lines_target
    class_ok = class_pct >= args.classes_target
    verdict = {True: "PASS", False: "MISS"}
    print(f"{name}: lines   {line_total - len(line_diffs)} of {line_total} with the same status: "
          f"{line_pct:.2f}% (target >= {args.lines_target}%: {verdict[line_ok]})")
    print(f"{name}: classes {class_total - len(class_diffs)} of {class_total} with identical counters: "
          f"{class_pct:.2f}% (target >= {args.classes_target}%: {verdict[class_ok]})")
    if line_diffs:
        print(f"{name}: line differences by kind: " + kinds(f"{d[1]} -> {d[2]}" for d in line_diffs))
    if class_diffs:
        print(f"{name}: counters differing: " + kinds(t for _, ch in class_diffs for t, _, _ in ch))
    n = args.diffs
    if line_diffs and n:
        print(f"{name}: line differences (first {min(n, len(line_diffs))} of {len(line_diffs)}):")
        for (where, nr), sa, sb, a, b in line_diffs[:n]:
            print(f"  line {where}:{nr} {sa} -> {sb}  (mi ci mb cb: {fmt_counts(a)} -> {fmt_counts(b)})")
    if class_diffs and n:
        print(f"{name}: class differences (first {min(n, len(class_diffs))} of {len(class_diffs)}):")
        for cls, changed in class_diffs[:n]:
            parts = ", ".join(f"{t} {fmt_counter(a)} -> {fmt_counter(b)}" for t, a, b in changed)
            print(f"  class {cls}: {parts}")
    return line_ok and class_ok


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--validate", action="store_true", help="only validate FILE... against the DTD")
    p.add_argument("--name", help="the program's name in the output (default: OTHER's file name)")
    p.add_argument("--diffs", type=int, default=20, help="differences listed of each sort (default 20)")
    p.add_argument("--lines-target", type=float, default=99.5)
    p.add_argument("--classes-target", type=float, default=99.0)
    p.add_argument("--dtd", help="report.dtd (default: from org.jacoco.report.jar)")
    p.add_argument("--no-validate", action="store_true", help="skip the DTD validation")
    args = p.parse_args(argv)
    try:
        if not args.no_validate:
            validate(args.files, args.dtd)
        if args.validate:
            print(f"valid against JaCoCo's DTD: {' '.join(args.files)}")
            return 0
        if len(args.files) != 2:
            p.error("two reports to compare: REFERENCE.xml OTHER.xml")
        ref_lines, ref_classes = load(args.files[0])
        other_lines, other_classes = load(args.files[1])
    except Invalid as e:
        print(f"compare_xml: {e}", file=sys.stderr)
        return 2
    name = args.name or os.path.basename(args.files[1])
    line_diffs, line_total = compare_lines(ref_lines, other_lines)
    class_diffs, class_total = compare_classes(ref_classes, other_classes)
    return 0 if report(name, line_diffs, line_total, class_diffs, class_total, args) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
