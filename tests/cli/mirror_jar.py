#!/usr/bin/env python3
"""jinst rewrite keeps a jar's shape: builds a jar with directory entries, a
manifest, resources stored and deflated, per-entry and archive comments and
the test classes; rewrites it; checks that the output lists the same entries
in the same order with the same times, compression methods, attributes and
comments, the same bytes for every non-class entry, that every class still
parses (jinst roundtrip --deep), and that a second rewrite gives the same
bytes (deterministic output).

    mirror_jar.py JINST CLASSES_DIR WORKDIR
"""
import os
import shutil
import subprocess
import sys
import zipfile

jinst, classes, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
src = os.path.join(work, "in.jar")
with zipfile.ZipFile(src, "w") as z:
    z.comment = b"an archive comment"
    z.writestr(zipfile.ZipInfo("META-INF/", (2001, 2, 3, 4, 5, 6)), b"")
    info = zipfile.ZipInfo("META-INF/MANIFEST.MF", (2002, 3, 4, 5, 6, 8))
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, b"Manifest-Version: 1.0\r\n\r\n")
    info = zipfile.ZipInfo("res/stored.bin", (2003, 4, 5, 6, 7, 10))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o100640 << 16
    info.comment = b"an entry comment"
    z.writestr(info, bytes(range(256)) * 4)
    for root, _, files in sorted(os.walk(classes)):
        for f in sorted(files):
            if f.endswith(".class"):
                path = os.path.join(root, f)
                name = os.path.relpath(path, classes).replace(os.sep, "/")
                info = zipfile.ZipInfo(name, (2004, 5, 6, 7, 8, 12))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, open(path, "rb").read())
    z.writestr(zipfile.ZipInfo("res/last.txt", (2005, 6, 7, 8, 9, 14)), b"the last entry\n")

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


outs = []
for k in range(2):
    out = os.path.join(work, "out%d.jar" % k)
    r = subprocess.run([jinst, "rewrite", "--frames=recompute", "-j", "2", src, "-o", out],
                       capture_output=True, text=True)
    print(r.stdout.strip())
    check(r.returncode == 0 and " 0 failed" in r.stdout, "rewrite exit %d: %s" % (r.returncode, r.stderr))
    outs.append(out)

with zipfile.ZipFile(src) as a, zipfile.ZipFile(outs[0]) as b:
    ia, ib = a.infolist(), b.infolist()
    check([i.filename for i in ia] == [i.filename for i in ib], "entry names or order differ")
    check(a.comment == b.comment, "archive comment %r became %r" % (a.comment, b.comment))
    for x, y in zip(ia, ib):
        check(x.date_time == y.date_time, "%s: time %s became %s" % (x.filename, x.date_time, y.date_time))
        check(x.compress_type == y.compress_type, "%s: compression %d became %d" % (x.filename, x.compress_type, y.compress_type))
        check(x.external_attr == y.external_attr, "%s: attributes %o became %o" % (x.filename, x.external_attr, y.external_attr))
        check(x.comment == y.comment, "%s: comment %r became %r" % (x.filename, x.comment, y.comment))
        if not x.filename.endswith(".class"):
            check(a.read(x) == b.read(y), "%s: content differs" % x.filename)
check(open(outs[0], "rb").read() == open(outs[1], "rb").read(), "two rewrites of the same jar differ")
r = subprocess.run([jinst, "roundtrip", "--deep", outs[0]], capture_output=True, text=True)
check(r.returncode == 0 and "0 differ, 0 rejected" in r.stdout, "the rewritten classes do not round-trip: " + r.stdout[-300:])
print("mirror_jar: %s" % ("ok" if failures == 0 else "%d failures" % failures))
sys.exit(1 if failures else 0)
