#!/usr/bin/env python3
"""The method tables `jinst instrument --trace` writes, and the same bytes
from every run.

    tables_check.py JINST CLASSES_DIR WORK

Builds a folder input: class files (CLASSES_DIR/main's jinsttest), a jar of
the same classes and a jar of other classes under lib/, a jar nested in a
jar. Instruments it with --trace at -j 1 and -j 4 and checks that
  - the two outputs are the same bytes, file by file;
  - the folder's META-INF/jinst/methods.tsv names the methods of its own
    class files, and each jar's its own classes' (nested jars included),
    so a jar put on a class path alone finds its names;
  - a method has one id in every table, and no id names two methods;
  - every table names the same run (key, method count), every id is below
    the count, and every folder of each output that holds an instrumented
    class holds the run's class ($JinstRunKEY.class, the same key).
A war and an ear holding it, in a run of their own: WEB-INF/classes/ and
each WEB-INF/lib jar (of the war in the ear too) carry the table of the
classes they hold, as a web application's loader reads none at the war's
root.
Prints "tables: N passed, N failed".
"""
import filecmp
import io
import os
import shutil
import subprocess
import sys
import zipfile

TABLE = "META-INF/jinst/methods.tsv"
fails = passes = 0


def check(cond, what):
    global fails, passes
    if cond:
        passes += 1
    else:
        fails += 1
        print("FAIL", what)


runs = set()


def table(text):
    rows = {}
    lines = [l for l in text.decode().splitlines() if not l.startswith("#")]
    check(lines and lines[0].startswith("run\t"), "a table without its run line")
    run = tuple(lines[0].split("\t")[1:]) if lines else ()
    runs.add(run)
    for line in lines[1:]:
        f = line.split("\t")
        rows[int(f[0])] = tuple(f[1:4])
        check(run and int(f[0]) < int(run[1]), "id %s past the run's count %s" % (f[0], run))
    return rows


def run_classes(instrumented, names):
    """Whether each folder of an instrumented class holds the run class."""
    key = next(iter(runs))[0]
    cls = "$JinstRun" + key + ".class"
    check(instrumented, "no class instrumented")
    for n in instrumented:
        check(os.path.join(os.path.dirname(n), cls) in names, "no %s beside %s" % (cls, n))


HOOKS = b"jinst/rt/Hooks"


def instrumented(z):
    """The internal names of the classes of a zip that call the runtime,
    nested jars included."""
    out = set()
    for n in z.namelist():
        if n.endswith(".class") and HOOKS in z.read(n) and "$JinstRun" not in n:
            out.add(n[:-6])
        elif n.endswith(".jar"):
            out |= instrumented(zipfile.ZipFile(io.BytesIO(z.read(n))))
    return out


def runs_in(z):
    """The run's classes of a zip and of the zips in it."""
    names = set(z.namelist())
    run_classes({n for n in names if n.endswith(".class") and HOOKS in z.read(n)}, names)
    for n in names:
        if n.endswith(".jar"):
            runs_in(zipfile.ZipFile(io.BytesIO(z.read(n))))


def names(z, entry):
    """The classes a table of zip z names (None: it has none)."""
    if entry not in z.namelist():
        return None
    return {r[0] for r in table(z.read(entry)).values()}


def roots(z, root):
    """The instrumented classes of a zip under root, without root."""
    return {n[len(root):-6] for n in z.namelist()
            if n.startswith(root) and n.endswith(".class") and HOOKS in z.read(n) and "$JinstRun" not in n}


def check_war(z, where):
    """A war's tables: one in WEB-INF/classes/ naming its classes, one in
    each WEB-INF/lib jar naming that jar's: each is a class path entry of
    the web application by itself."""
    web = roots(z, "WEB-INF/classes/")
    check(web and names(z, "WEB-INF/classes/" + TABLE) == web,
          f"{where}: WEB-INF/classes/'s table does not name its classes {sorted(web)}")
    lib = zipfile.ZipFile(io.BytesIO(z.read("WEB-INF/lib/other.jar")))
    want = roots(lib, "")
    check(want and names(lib, TABLE) == want,
          f"{where}: WEB-INF/lib/other.jar has no table of its classes {sorted(want)}")


def war_tables(jinst, work, files):
    """A war (classes in WEB-INF/classes/, a jar in WEB-INF/lib/) alone and
    inside an ear, instrumented in a run of their own."""
    lib = io.BytesIO()
    with zipfile.ZipFile(lib, "w") as z:
        z.writestr("jinsttest/Features.class", files["jinsttest/Features.class"])
    war = io.BytesIO()
    with zipfile.ZipFile(war, "w") as z:
        for n, b in sorted(files.items()):
            if n != "jinsttest/Features.class":
                z.writestr("WEB-INF/classes/" + n, b)
        z.writestr("WEB-INF/lib/other.jar", lib.getvalue())
    src = os.path.join(work, "web")
    os.makedirs(src)
    open(os.path.join(src, "app.war"), "wb").write(war.getvalue())
    with zipfile.ZipFile(os.path.join(src, "app.ear"), "w") as z:
        z.writestr("app.war", war.getvalue())
    out = os.path.join(work, "web-out")
    r = subprocess.run([jinst, "instrument", "--trace", "--quiet", os.path.join(src, "app.war"),
                        os.path.join(src, "app.ear"), "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"war and ear: exit {r.returncode}: {r.stderr}")
    with zipfile.ZipFile(os.path.join(out, "app.war")) as z:
        check_war(z, "app.war")
    with zipfile.ZipFile(os.path.join(out, "app.ear")) as z:
        inner = zipfile.ZipFile(io.BytesIO(z.read("app.war")))
        check_war(inner, "app.ear!app.war")
        every = roots(inner, "WEB-INF/classes/") | roots(zipfile.ZipFile(io.BytesIO(inner.read("WEB-INF/lib/other.jar"))), "")
        check(names(inner, TABLE) == every,
              "app.ear!app.war: its root's table does not name every class in it")


def main():
    jinst, classes, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, "in")
    shutil.copytree(os.path.join(classes, "main", "jinsttest"), os.path.join(src, "jinsttest"))
    os.makedirs(os.path.join(src, "lib"))
    files = {}
    for root, _, names in os.walk(os.path.join(classes, "main", "jinsttest")):
        for n in names:
            files["jinsttest/" + n] = open(os.path.join(root, n), "rb").read()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("jinsttest/Color.class", files["jinsttest/Color.class"])
    with zipfile.ZipFile(os.path.join(src, "lib", "same.jar"), "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in sorted(files.items()):
            z.writestr(n, b)
    with zipfile.ZipFile(os.path.join(src, "lib", "other.jar"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("jinsttest/Features.class", files["jinsttest/Features.class"])
        z.writestr("lib/inner.jar", inner.getvalue())
    outs = []
    for jobs in ("1", "4"):
        out = os.path.join(work, "out-j" + jobs)
        r = subprocess.run([jinst, "instrument", "--trace", "--quiet", "-j", jobs, src, "-o", out],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"-j {jobs}: exit {r.returncode}: {r.stderr}")
        outs.append(out)
    a, b = outs
    for root, _, names in os.walk(a):
        for n in names:
            p = os.path.join(root, n)
            check(filecmp.cmp(p, os.path.join(b, os.path.relpath(p, a)), shallow=False),
                  f"{os.path.relpath(p, a)} differs between -j 1 and -j 4")
    tables = {}
    folder = table(open(os.path.join(a, TABLE), "rb").read())
    tables["folder"] = folder
    loose = {n[:-6] for n in files if HOOKS in open(os.path.join(a, n), "rb").read()}
    check(len(loose) > 5 and {r[0] for r in folder.values()} == loose, "the folder's table: other classes")
    for jar in ("same.jar", "other.jar"):
        with zipfile.ZipFile(os.path.join(a, "lib", jar)) as z:
            t = table(z.read(TABLE))
            tables[jar] = t
            want = instrumented(z)
            check(want and {r[0] for r in t.values()} == want, f"{jar}'s table: other classes "
                  f"{sorted({r[0] for r in t.values()} ^ want)}")
    check(len(runs) == 1, "tables of one run name %d runs" % len(runs))
    if len(runs) == 1:
        disk = {os.path.relpath(os.path.join(r_, f), a) for r_, _, fs in os.walk(a) for f in fs if f.endswith(".class")}
        run_classes({n for n in disk if HOOKS in open(os.path.join(a, n), "rb").read()}, disk)
        for jar in ("same.jar", "other.jar"):
            with zipfile.ZipFile(os.path.join(a, "lib", jar)) as z:
                runs_in(z)
    ids = {}
    for name, t in tables.items():
        for i, key in t.items():
            check(ids.setdefault(key, i) == i, f"{name}: {key} has id {i}, elsewhere {ids[key]}")
    check(len(set(ids.values())) == len(ids), "an id names two methods")
    check(len(ids) > 50, f"only {len(ids)} methods in the tables")
    war_tables(jinst, work, files)
    print(f"tables: {passes} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
