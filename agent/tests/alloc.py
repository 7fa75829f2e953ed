#!/usr/bin/env python3
"""The allocation module on a real VM: exact objects and bytes per site.

    alloc.py JAVA_HOME LIBJINST CHECKS_DIR SOURCE WORK

jinstcheck.AllocSites allocates with every allocation instruction (objects,
nested news, arrays of every primitive type and of references, zero-length,
multi-dimensional with dimensions left out, in constructors and a static
initializer, from four threads) and reports each object to AllocExpect, a
java.lang.instrument agent that measures it (Instrumentation.getObjectSize,
JVMTI GetObjectSize underneath) and prints per tag the type, objects and
bytes. Two of its sites throw between `new` and the end of the
constructor: they must record nothing. It also makes objects through calls:
clones of arrays of every type and of instances, through overrides of
clone() that call super.clone() (each object counted once, where
Object.clone made it), arrays made by reflection (of one and several
dimensions: every array of the given ones), objects by
Constructor.newInstance and Class.newInstance; a call that throws (a
clone() of a class that is not Cloneable, a constructor that throws under
Constructor.newInstance) and the calls of overrides must record nothing.
Each allocation's source line carries its tag ("site:NAME"; a tag
"NAME.part" lies on the line of "site:NAME"). A site's objects are
expected by their own class, a row each (multianewarray's inner arrays,
clones of a subclass, reflective arrays of ten component types at one
call), not as the site's declared type.

A program of one site comes first: AllocEcj, compiled with ECJ, which
drops the `dup` of a `new` whose value is not used (the pass dups after
the `new`).

The program runs under -Xverify:all with alloc=check (every object also
measured by the agent's GetObjectSize and compared with the runtime's
figure), with alloc (the fast paths' cached sizes and array shapes), with
trace=counts,alloc (both modules on the same per-thread path), and with
alloc=live, where the live columns at exit must be exactly what the
program keeps reachable (a static array of every third object of two
sites, and the static fields' own arrays), and 0 elsewhere; and with
trace=times,alloc,depth=2, where one site reached from two callers must
show as two rows, each with its caller under the site's method and its
own objects and bytes, and every stack (the TSV's column, the TRACE
records) must begin at the site's method, a leaf's too (counted, not on
trace=times' stack), over at most two frames; a TRACE record gives the
site's File:line, as the table does, and identical traces (sites on one
line) are one record. Every
run must give exactly the expected rows in OUT.alloc.tsv, no other row of
the fixture, the same program output as without the agent, a SITES table
and folded stacks that agree with the TSV; alloc=check must report every
object measured and none differing. Two runs with alloc,append=y to one
out= must leave in each of OUT.alloc.txt, .tsv and .folded two parts,
each under its line "# jinst session 1, pid P, started TIME" (the runs'
two pids) and each exactly one run's rows. Exit 0 passed, 1 failed, 77
skipped.
"""
import os
import re
import shutil
import subprocess
import sys

home, lib, checks, source, work = sys.argv[1:6]
java = os.path.join(home, "bin", "java")
if not os.access(java, os.X_OK):
    print("SKIP: no JDK at " + home)
    sys.exit(77)
env = dict(os.environ)
if env.get("JINST_SANITIZED", "OFF") == "ON":
    if not env.get("JINST_PRELOAD"):
        print("SKIP: a sanitized libjinst.so needs its sanitizer runtimes, which were not found")
        sys.exit(77)
    env["LD_PRELOAD"] = env["JINST_PRELOAD"]
    env["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
shutil.rmtree(work, ignore_errors=True)  # what an earlier run left (its logs are appended to)
os.makedirs(work)
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


PRIMS = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
         "D": "double"}


def java_type(name):
    """Class.getName() as Java writes the type: "[[I" -> "int[][]"."""
    dims = len(name) - len(name.lstrip("["))
    base = name[dims:]
    if dims:
        base = PRIMS[base] if base in PRIMS else base[1:-1]
    return base + "[]" * dims


# tag -> line, from the source's "site:NAME" comments
tag_line = {}
with open(source) as f:
    for no, text in enumerate(f, 1):
        m = re.search(r"// site:(\S+)", text)
        if m:
            tag_line[m.group(1)] = no

manifest = os.path.join(work, "manifest.txt")
with open(manifest, "w") as f:
    f.write("Premain-Class: jinstcheck.AllocExpect\n")
jar = os.path.join(work, "expect.jar")
subprocess.run([os.path.join(home, "bin", "jar"), "cfm", jar, manifest, "-C", checks,
                "jinstcheck/AllocExpect.class"], check=True)
base_cmd = [java, "-Xverify:all", "-javaagent:" + jar, "-cp", checks, "jinstcheck.AllocSites", "1000"]


def run(name, options):
    out = os.path.join(work, name)
    cmd = list(base_cmd)
    if options is not None:
        cmd[1:1] = ["-agentpath:%s=%s,include=jinstcheck.AllocSites*,out=%s,log=%s.log" % (lib, options, out, out)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env if options else None,
                       timeout=120, universal_newlines=True)
    if p.returncode != 0:
        fail("%s: the program failed: %s" % (name, (p.stdout + p.stderr)[-2000:]))
    elif p.stderr:
        print("%s: stderr: %s" % (name, p.stderr[-500:]))
    return p.stdout


plain = run("plain", None)
expected = {}  # (line, type) -> [objects, bytes]
by_caller = {}  # (line, type, caller) -> [objects, bytes]: tags "NAME@CALLER" 
expected_live = {}  # the same, for what stays reachable to the end
never = set()
for line in plain.splitlines():
    parts = line.split()
    if not parts or parts[0] not in ("EXPECT", "LIVE"):
        continue
    tag, typ, objects, size = parts[1], parts[2], int(parts[3]), int(parts[4])
    if "@" in tag:
        tag, caller = tag.split("@")
        by_caller[(tag_line[tag], java_type(typ), caller)] = [objects, size]
        continue
    where = tag_line.get(tag, tag_line.get(tag.split(".")[0]))
    if where is None:
        fail("tag %s has no line in %s" % (tag, source))
        continue
    if objects == 0:
        never.add(where)
        continue
    e = (expected if parts[0] == "EXPECT" else expected_live).setdefault((where, java_type(typ)), [0, 0])
    e[0] += objects
    e[1] += size
if len(expected) < 50 or len(never) != 6 or len(expected_live) != 4:
    fail("the program reported %d sites, %d that make nothing, %d with live objects" % (
        len(expected), len(never), len(expected_live)))


def check_run(name, options):
    out = run(name, options)
    if out != plain:
        fail("%s: the program's output differs from its run without the agent: %s" % (
            name, [l for l in out.splitlines() if l not in plain.splitlines()][:5]))
    path = os.path.join(work, name)
    try:
        with open(path + ".alloc.tsv") as f:
            rows = [l.rstrip("\n").split("\t") for l in f]
    except OSError as e:
        fail("%s: no TSV (%s)" % (name, e))
        return
    head = rows[0]
    live = "live" in options
    depth = "depth=" in options
    want_head = ["rank", "bytes", "objects", "class", "method", "descriptor", "source", "line", "type",
                 "instruction"] + (["live_bytes", "live_objects"] if live else []) + (["stack"] if depth else [])
    if head != want_head:
        fail("%s: TSV columns %s" % (name, head))
        return
    got = {}
    seen_callers = {}
    total = [0, 0]
    per_method = {}
    for r in rows[1:]:
        d = dict(zip(head, r))
        total[0] += int(d["objects"])
        total[1] += int(d["bytes"])
        m = d["class"] + "." + d["method"]
        per_method[m] = per_method.get(m, 0) + int(d["bytes"])
        if not d["class"].startswith("jinstcheck.AllocSites"):
            fail("%s: a site outside the fixture: %s" % (name, r))
            continue
        key = (int(d["line"]), d["type"])
        if key in got and not depth:
            fail("%s: site %s twice" % (name, key))
        o, b = got.get(key, [0, 0])
        got[key] = [o + int(d["objects"]), b + int(d["bytes"])]
        if depth:
            frames = d["stack"].split(";")
            if frames[-1] != d["class"] + "." + d["method"]:
                fail("%s: line %d: stack %s does not end at the allocating method" % (name, key[0], d["stack"]))
            caller = frames[-2].rsplit(".", 1)[1] if len(frames) >= 2 else None
            if (key[0], key[1], caller) in by_caller:
                seen_callers[(key[0], key[1], caller)] = [int(d["objects"]), int(d["bytes"])]
            elif len(frames) > 3:
                fail("%s: line %d: stack %s deeper than depth=2 under the allocating method" % (
                    name, key[0], d["stack"]))
        if live and [int(d["live_objects"]), int(d["live_bytes"])] != expected_live.get(key, [0, 0]):
            fail("%s: line %d, %s: live (objects, bytes) %s, expected %s" % (
                name, key[0], key[1], [d["live_objects"], d["live_bytes"]], expected_live.get(key, [0, 0])))
    for key in sorted(set(expected) | set(got)):
        if expected.get(key) != got.get(key):
            fail("%s: line %d, %s: expected (objects, bytes) %s, got %s" % (name, key[0], key[1],
                                                                            expected.get(key), got.get(key)))
    if depth and seen_callers != by_caller:
        fail("%s: by caller %s, expected %s" % (name, seen_callers, by_caller))
    for line in never:
        if any(k[0] == line for k in got):
            fail("%s: line %d recorded an object that was never made there" % (name, line))
    with open(path + ".alloc.txt") as f:
        table = f.read()
    m = re.search(r"^total (\d+) bytes, (\d+) objects, (\d+) (sites|traces)", table, re.M)
    ranks = re.findall(r"^\s+(\d+)\s+[\d.]+%\s+([\d.]+)%\s+(?:\d+\s+\d+\s+)?(\d+)\s+(\d+)(?:\s+\d+)?\s+(\S+)\s+(\S+)$",
                       table, re.M)
    if not m or [int(m.group(1)), int(m.group(2))] != [total[1], total[0]] or len(ranks) != len(rows) - 1:
        fail("%s: the SITES table disagrees with the TSV" % name)
    elif not live and ranks and (ranks[-1][1] != "100.00" or [int(r[2]) for r in ranks] != sorted(
            (int(r[2]) for r in ranks), reverse=True)):
        fail("%s: the SITES table is not ranked by bytes to 100%%" % name)
    if depth:
        # each row's trace (its column) is a TRACE record whose first frame
        # is its site, File:line as in the table, its callers' "File:Unknown
        # line"; identical records are one (the nested sites share a line)
        records = dict(re.findall(r"^TRACE (\d+):\n((?:\t.*\n)+)", table, re.M))
        traced = re.findall(r"^\s+\d+\s+[\d.]+%\s+[\d.]+%\s+\d+\s+\d+\s+(\d+)\s+(\S+)\s+\S+$", table, re.M)
        for number, site in traced:
            frames = records.get(number, "").splitlines()
            if not frames or frames[0] != "\t" + site:
                fail("%s: TRACE %s begins at %s, not at its site %s" % (name, number, frames[:1], site))
            elif any(not f.endswith(":Unknown line)") for f in frames[1:]):
                fail("%s: TRACE %s: callers %s" % (name, number, frames[1:]))
        if len(traced) != len(ranks) or len(set(records.values())) != len(records) or \
                len(records) != len(set(n for n, _ in traced)) or len(records) >= len(traced):
            fail("%s: %d TRACE records (%d distinct) for %d rows, each trace once expected" % (
                name, len(records), len(set(records.values())), len(traced)))
    with open(path + ".alloc.folded") as f:
        folded = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in f if not l.startswith("#")}
    if depth:
        per_method = {}
        for r in rows[1:]:
            d = dict(zip(head, r))
            leaf = d["class"] + "." + d["method"]
            text = d["stack"] if d["stack"].split(";")[-1] == leaf else ";".join(
                x for x in (d["stack"], leaf) if x)
            per_method[text] = per_method.get(text, 0) + int(d["bytes"])
    if folded != per_method:
        fail("%s: folded stacks %s, not the TSV's %s" % (name, folded, per_method))
    with open(path + ".log") as f:
        log = f.read()
    for ext in (".alloc.txt", ".alloc.tsv", ".alloc.folded"):
        if ("jinst: wrote %s%s\n" % (path, ext)) not in log:
            fail("%s: no line 'wrote %s%s' in the log, as trace's and monitor's outputs have" % (name, path, ext))
    if options.startswith("alloc=check"):
        c = re.search(r"alloc=check: (\d+) objects measured by GetObjectSize, (\d+) differed", log)
        if not c or int(c.group(1)) != total[0] or c.group(2) != "0":
            fail("%s: %s objects measured, %s differed, of %d" % (name, c and c.group(1), c and c.group(2),
                                                                   total[0]))
        else:
            print("%s: %s objects measured by GetObjectSize, 0 differed" % (name, c.group(1)))
    print("%s: %d sites, %d objects, %d bytes as expected" % (name, len(got), total[0], total[1]))


def check_single(name, cp, main, tag, typ, src):
    """A program whose every allocation is of one site (tag, on its line in
    src, of type typ): its row must be exactly what the program measured,
    every object checked against GetObjectSize."""
    line = [no for no, text in enumerate(open(src), 1) if "// site:%s" % tag in text][0]
    out = os.path.join(work, name)
    cmd = [java, "-Xverify:all", "-javaagent:" + jar,
           "-agentpath:%s=alloc=check,include=%s*,out=%s,log=%s.log" % (lib, main, out, out), "-cp", cp, main]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120,
                       universal_newlines=True)
    want = [l.split()[3:5] for l in p.stdout.splitlines() if l.startswith("EXPECT %s " % tag)]
    rows, log = [], ""
    if os.path.exists(out + ".alloc.tsv"):
        with open(out + ".alloc.tsv") as f:
            rows = [l.rstrip("\n").split("\t") for l in f][1:]
        with open(out + ".log") as f:
            log = f.read()
    got = [[r[2], r[1]] for r in rows if r[7] == str(line) and r[8] == typ]
    measured = "alloc=check: %s objects measured by GetObjectSize, 0 differed" % (want[0][0] if want else "?")
    if p.returncode != 0 or not want or got != want or len(rows) != 1 or measured not in log:
        fail("%s: (objects, bytes) %s, expected %s (%d rows, exit %d: %s; %s)" % (
            name, got, want, len(rows), p.returncode, p.stderr[-300:], log[-300:]))
    else:
        print("%s: %s objects, %s bytes as expected, each measured by GetObjectSize" % (name, want[0][0],
                                                                                     want[0][1]))


def check_ecj():
    """ECJ drops the dup of a `new` whose value is dropped: the pass dups
    after the `new`; every object must still be counted, exactly."""
    ecj = "/usr/share/java/ecj.jar"
    if not os.path.exists(ecj):
        fail("no %s (libecj-java, scripts/setup.sh)" % ecj)
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ecj", "jinstcheck", "AllocEcj.java")
    out_dir = os.path.join(work, "ecj-classes")
    subprocess.run([java, "-cp", ecj, "org.eclipse.jdt.internal.compiler.batch.Main", "-8", "-nowarn", "-cp",
                    checks, "-d", out_dir, src], check=True)
    check_single("ecj", out_dir + os.pathsep + checks, "jinstcheck.AllocEcj", "ecj.dropped",
                 "jinstcheck.AllocEcj$Counted", src)


SESSION = re.compile(r"^# jinst session 1, pid (\d+), started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def check_append():
    """Two runs with append=y: each output holds both, one part each."""
    for _ in range(2):
        run("append", "alloc,append=y")
    path = os.path.join(work, "append")
    for ext in (".alloc.txt", ".alloc.tsv", ".alloc.folded"):
        parts = []
        with open(path + ext) as f:
            for line in f.read().splitlines():
                m = SESSION.match(line)
                if m:
                    parts.append((m.group(1), []))
                elif parts:
                    parts[-1][1].append(line)
                else:
                    fail("append: %s: %r before the first session's line" % (ext, line))
        if len(parts) != 2 or parts[0][0] == parts[1][0]:
            fail("append: %s: sessions of pids %s, expected two runs'" % (ext, [p[0] for p in parts]))
            continue
        for pid, lines in parts:
            if ext == ".alloc.tsv":
                got = {}
                for r in lines[1:]:
                    d = dict(zip(lines[0].split("\t"), r.split("\t")))
                    got[(int(d["line"]), d["type"])] = [int(d["objects"]), int(d["bytes"])]
                if got != expected:
                    fail("append: the TSV's part of pid %s is not one run's rows: %s" % (
                        pid, [(k, got.get(k), expected.get(k)) for k in sorted(set(got) | set(expected))
                              if got.get(k) != expected.get(k)][:4]))
            elif ext == ".alloc.txt" and (lines[0].split(" (")[0] != "SITES BEGIN" or lines[-1] != "SITES END"):
                fail("append: the table's part of pid %s is not one SITES table" % pid)
            elif ext == ".alloc.folded" and not lines[0].startswith("# jinst folded stacks"):
                fail("append: the folded part of pid %s has no header" % pid)
    print("append: two runs, each in its own part of OUT.alloc.txt, .tsv and .folded")


check_ecj()
check_append()
check_run("check", "alloc=check")
check_run("fast", "alloc")
check_run("trace", "trace=counts,alloc")
check_run("live", "alloc=live")
check_run("depth", "trace=times,alloc,depth=2")
sys.exit(1 if failures else 0)
