#!/usr/bin/env python3
"""What `jinst instrument` must keep of a jar, checked entry by entry.

    offline_entries.py IN_DIR OUT_DIR

For every IN_DIR/X.jar, OUT_DIR/X.jar must hold the same entries in the
same order, each with its name, compression method, time, attributes and
comment; every entry that is not a class byte for byte the input's; every
class either the input's bytes or an instrumented class (it carries the
JinstInstrumented marker); a nested jar the same, recursively. The
entries the output may add, after the input's, are the method tables,
META-INF/jinst/methods.tsv at the root and under WEB-INF/classes/ and
BOOT-INF/classes/ (nested jars' too), each once and before the rest, and
the run's classes (PKG/$JinstRunKEY.class, of one key) that --trace puts
beside the classes. Prints a line per jar that differs and a
closing "N jars: N entries, N classes instrumented, N unchanged, N other
entries identical"; exit status 1 on any difference.
"""
import io
import os
import sys
import zipfile

TABLE = "META-INF/jinst/methods.tsv"
MARKER = b"JinstInstrumented"


class Tally:
    def __init__(self):
        self.entries = self.instrumented = self.unchanged = self.identical = 0
        self.problems = []


def meta(i):
    return (i.compress_type, i.date_time, i.external_attr, i.create_system, i.comment)


TABLES = {root + TABLE for root in ("", "WEB-INF/classes/", "BOOT-INF/classes/")}


def added(extra):
    """Whether extra are entries the command may add."""
    tables = [e for e in extra if e in TABLES]
    runs = {os.path.basename(e) for e in extra if e not in TABLES}
    return (all(r.startswith("$JinstRun") and r.endswith(".class") for r in runs) and len(runs) <= 1 and
            len(tables) == len(set(tables)) and extra[:len(tables)] == tables)


def compare(name, zin, zout, t):
    ins, outs = zin.infolist(), zout.infolist()
    names_in = [i.filename for i in ins]
    names_out = [i.filename for i in outs]
    extra = names_out[len(names_in):]
    if names_out[:len(names_in)] != names_in or not added(extra):
        t.problems.append(f"{name}: entries differ: {len(names_in)} in, {len(names_out)} out, "
                          f"first difference at {first_difference(names_in, names_out)}")
        return
    for a, b in zip(ins, outs):
        t.entries += 1
        where = f"{name}!{a.filename}"
        if meta(a) != meta(b):
            t.problems.append(f"{where}: metadata differ: {meta(a)} in, {meta(b)} out")
        x, y = zin.read(a), zout.read(b)
        if a.filename.endswith(".class"):
            if x == y:
                t.unchanged += 1
            elif MARKER in y:
                t.instrumented += 1
            else:
                t.problems.append(f"{where}: changed, but carries no {MARKER.decode()} marker")
        elif a.filename.endswith((".jar", ".war", ".zip")) and x[:2] == b"PK" and x != y:
            compare(where, zipfile.ZipFile(io.BytesIO(x)), zipfile.ZipFile(io.BytesIO(y)), t)
        elif x != y:
            t.problems.append(f"{where}: a non-class entry differs ({len(x)} bytes in, {len(y)} out)")
        else:
            t.identical += 1


def first_difference(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"#{k}: {x} / {y}"
    return f"#{min(len(a), len(b))}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1:]
    jars = sorted(f for f in os.listdir(src) if f.endswith(".jar"))
    t = Tally()
    for j in jars:
        out = os.path.join(dst, j)
        if not os.path.isfile(out):
            t.problems.append(f"{j}: no output")
            continue
        with zipfile.ZipFile(os.path.join(src, j)) as zin, zipfile.ZipFile(out) as zout:
            compare(j, zin, zout, t)
    for p in t.problems[:50]:
        print("DIFF", p)
    print(f"{len(jars)} jars: {t.entries} entries, {t.instrumented} classes instrumented, {t.unchanged} unchanged, "
          f"{t.identical} other entries identical; {len(t.problems)} differences")
    if not jars or not t.instrumented:
        print("FAIL: nothing was instrumented")
        return 1
    return 1 if t.problems else 0


if __name__ == "__main__":
    sys.exit(main())
