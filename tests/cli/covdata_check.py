#!/usr/bin/env python3
"""jinst merge against the coverage-format specification, byte for byte:
the files of covfile.py (written from docs/coverage-format.md in Python)
merged by jinst must equal covfile.py's own merge, in any order; a single
file merged alone comes back unchanged; a refused merge leaves OUT as it
was and no temporary file beside it.
   covdata_check.py JINST WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import covfile  # noqa: E402

jinst, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
covfile.write_inputs(work)
failures = 0


def path(name):
    return os.path.join(work, name)


def merge(out, *inputs, status=0):
    r = subprocess.run([jinst, "merge", "-o", path(out)] + [path(i) for i in inputs],
                       capture_output=True, text=True)
    if r.returncode != status:
        check(False, "merge %s: exit %d, expected %d: %s" % (" ".join(inputs), r.returncode, status, r.stderr))
    return r


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


A, B = covfile.A, covfile.B
AB = covfile.merge(A, B)
merge("ab.cov", "a.cov", "b.cov")
check(read("ab.cov") == covfile.encode(*AB), "merge a b differs from the specification's merge")
merge("ba.cov", "b.cov", "a.cov")
check(read("ba.cov") == read("ab.cov"), "merge b a differs from merge a b")
merge("a2.cov", "a.cov")
check(read("a2.cov") == read("a.cov"), "a file merged alone is not written back unchanged")
shutil.copy(path("a.cov"), path("a-copy.cov"))
r = merge("aa.cov", "a.cov", "a.cov", "a-copy.cov")  # the same data three times: read once
check(read("aa.cov") == read("a.cov") and "given twice: read once" in r.stderr
      and "a-copy.cov: the same bytes as " in r.stderr and "1 files merged" in r.stdout,
      "an input given twice, or a copy of it, is merged once: %s" % r.stderr)
r = merge("ab.cov", "ab.cov", "a.cov")  # the output among the inputs; a's session a second time
check(read("ab.cov") == covfile.encode(*covfile.merge(AB, A)), "merge into an input")
check("a.cov: session a (start 1000 ms) is in an earlier input too" in r.stderr,
      "a session merged again is named: %s" % r.stderr)

before = read("ab.cov")
for bad in ("damaged.cov", "truncated.cov", "newer.cov", "probes.cov", "notcov.cov", "missing.cov"):
    r = merge("ab.cov", "a.cov", bad, status=1)
    check(bad in r.stderr and r.stderr.count("\n") == 1, "%s: not one line naming it: %r" % (bad, r.stderr))
    check(read("ab.cov") == before, "%s: a refused merge changed its output" % bad)
left = [n for n in os.listdir(work) if n.startswith("ab.cov.")]
check(not left, "temporary files left: %s" % left)
print("covdata_check: %d failures" % failures)
sys.exit(1 if failures else 0)
