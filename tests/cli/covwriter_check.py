#!/usr/bin/env python3
"""runtime-java's CovWriter against the format: for the same records, the
file the Java writer writes must equal byte for byte covfile.py's encoding
(written from docs/coverage-format.md) and what jinst (report/covdata_io.c)
writes when it reads and writes it again. The records cover both kinds,
records added twice (CovWriter's merge rules), counts of every LEB128
length and a saturating sum, identities with the high bit set (unsigned
order), and names with NUL, non-ASCII and supplementary characters, whose
modified UTF-8 sorts differently from UTF-8.
   covwriter_check.py JINST JAVAC JAVA WORKDIR
"""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import covfile  # noqa: E402

jinst, javac, java, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
classes = os.path.join(work, "classes")
subprocess.run([javac, "--release", "8", "-Xlint:all", "-Werror", "-encoding", "UTF-8", "-d", classes,
                os.path.join(here, "..", "..", "runtime-java", "jinst", "rt", "CovWriter.java"),
                os.path.join(here, "java", "jinst", "rt", "CovWriterCheck.java")], check=True)


def hexname(s):
    return s.encode("utf-16-be").hex()


def describe(*models):
    """The lines that add every model's sessions and records, in order."""
    lines = []
    for sessions, recs in models:
        for name, start, dump in sessions:
            lines.append("session %s %d %d" % (hexname(name), start, dump))
        for (name, identity), (kind, probes) in recs.items():
            word = "booleans" if kind == "b" else "counts"
            lines.append(" ".join([word, str(identity), hexname(name)] + [str(p) for p in probes]))
    return "".join(line + "\n" for line in lines)


M = covfile.U64_MAX
counts = [0] + [2**k - 1 for k in range(1, 65)] + [2**k for k in range(0, 64, 7)]
WIDE = ([("", -1, 0), ("s\u00e9ance", 2**62, 2**62 + 1), ("z", -2**63, 2**63 - 1)],
        {("a", M): ("c", counts), ("a", 0): ("b", [1] * 17), ("a", 2**63): ("b", [0, 1]),
         ("p/\U0001F600", 1): ("c", [1]), ("p/\uffff", 1): ("b", [1]), ("p/\u0000x", 1): ("b", []),
         ("p/\u00e9", 1): ("c", [M, 1]), ("q\u00e9", 1): ("b", [1]), ("qz", 1): ("b", [0])})
MORE = ([("", -1, 0)], {("a", M): ("c", [M] * len(counts)), ("p/\u00e9", 1): ("b", [1, 0]),
                        ("a", 0): ("b", [0] * 16 + [1])})
cases = {
    "a": [covfile.A],
    "ab": [covfile.A, covfile.B],
    "wide": [WIDE],
    "wide_more": [WIDE, MORE],
    "empty": [([], {})],
}
failures = 0
for name, models in cases.items():
    desc = os.path.join(work, name + ".txt")
    with open(desc, "w") as f:
        f.write(describe(*models))
    jfile, cfile = os.path.join(work, name + ".java.cov"), os.path.join(work, name + ".c.cov")
    subprocess.run([java, "-cp", classes, "jinst.rt.CovWriterCheck", desc, jfile], check=True)
    model = models[0]
    for m in models[1:]:
        model = covfile.merge(model, m)
    want = covfile.encode(*model)
    r = subprocess.run([jinst, "merge", "-o", cfile, jfile], capture_output=True, text=True)
    got = open(jfile, "rb").read()
    if got != want:
        failures += 1
        print("FAIL %s: the Java writer differs from the specification" % name)
    if r.returncode != 0 or open(cfile, "rb").read() != got:
        failures += 1
        print("FAIL %s: jinst writes other bytes for the Java writer's file: %s" % (name, r.stderr.strip()))

# Appending: to a file of the specification's writer, from several JVMs at
# once (the lock), and refusing damaged, truncated and newer files whole.
def append(desc, out, times, index):
    return subprocess.Popen([java, "-cp", classes, "jinst.rt.CovWriterCheck", desc, out, "append", str(times),
                             str(index)], stderr=subprocess.PIPE, text=True)


base = os.path.join(work, "append.cov")
with open(base, "wb") as f:
    f.write(covfile.encode(*covfile.A))
bdesc = os.path.join(work, "ab.txt")  # A then B: appended 3 x 4 times, each with a session of its own
procs = [append(bdesc, base, 4, i) for i in range(3)]
errors = [p.communicate()[1] for p in procs]
# Each append merges the writer's data (A merged with B) into the file, in
# that grouping: where booleans meet counts the grouping matters
# (docs/coverage-format.md, "Merging").
writer = covfile.merge(*cases["ab"])
model = covfile.A
for i in range(3):
    for t in range(4):
        model = covfile.merge(model, ([("proc", i, t)] + writer[0], writer[1]))
if any(p.returncode for p in procs) or open(base, "rb").read() != covfile.encode(*model):
    failures += 1
    print("FAIL append: concurrent appends from the Java writer lost data or differ: %s" % errors)
for name in ("damaged.cov", "truncated.cov", "newer.cov", "probes.cov"):
    os.makedirs(os.path.join(work, "bad"), exist_ok=True)
    covfile.write_inputs(os.path.join(work, "bad"))
    path = os.path.join(work, "bad", name)
    before = open(path, "rb").read()
    p = append(bdesc, path, 1, 0)
    err = p.communicate()[1]
    if p.returncode != 1 or open(path, "rb").read() != before or name not in err:
        failures += 1
        print("FAIL append to %s: exit %d, %r" % (name, p.returncode, err))
    else:
        print("append to %s refused: %s" % (name, err.strip()))
print("covwriter_check: %d cases, %d failures" % (len(cases) + 2, failures))
sys.exit(1 if failures else 0)
