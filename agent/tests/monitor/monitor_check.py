#!/usr/bin/env python3
"""The monitor module on a program with known contention.

    monitor_check.py JAVA_HOME LIBJINST SOURCE CLASSES WORK

jinstmon.Main (CLASSES, compiled from SOURCE, agent/tests/monitor/jinstmon/
Main.java) has N threads block on a lock a holder keeps for HOLD_MS, in a
synchronized block and in a synchronized method, and prints the waits it
timed itself (REF lines); the lines marked SITE:name are its lock sites.
Under -Xverify:all with `monitor`, OUT.monitors.tsv must show:
  - the block and the method each at their site and lock class: N enters,
    N contended, the time waiting within 10% of the program's own figure;
  - the holder's sites and the uncontended loops: exact enters, no
    contention; a site locking objects of two classes: each class's enters; no contention at any other site of the program;
  - two wait(WAIT_MS) calls at the wait() line, their time within 10%,
    instrumented (its method's block is a site of the pass);
  - no row of the wait for another thread's class initialization
    (SITE:clinit: the VM's lock of the class, an int[]);
  - classes and places named as Java and the alloc outputs name them
    (jinstmon.Main$Lock, source Main.java; in the report
    jinstmon.Main.enterBlock(Main.java:LINE));
the same with trace=times and coverage beside it (the trace's owner path,
all three passes in one transformation); and,
single-threaded with -Xbatch -XX:+PrintCompilation, a synchronized method and a
synchronized block compiled at tier 4 with exact enters and no contention.
`dump` then `reset` (jcmd) between two rounds of enters: the dump has
the first round's, the exit's only the second's; and on JDK 21 and later,
virtual threads blocked on one lock (java21/jinstmon/Virtual.java, compiled
here by the JDK's javac): exact enters, the time waiting within 10% of
their own (from JDK 24 a blocked virtual thread leaves its carrier: the
start of its wait is kept per thread, not per carrier). And append=y: two
runs into one OUT, each run's part under its "# jinst session" line with
its own enters, a third without append=y replacing both; a folder at
OUT.monitors.tsv refuses append=y at the load.
Exit 0 passed, 1 failed, 77 skipped (no such JDK; a sanitized libjinst.so
without its runtimes).
"""
import csv
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
from monitor_common import fresh_workdir, java_env, lock_sites  # noqa: E402

TOLERANCE = 0.10
N, LOOPS, HOT = 3, 1000, 300000

home, lib, source, classes, work = sys.argv[1:6]
java = os.path.join(home, "bin", "java")
if not os.access(java, os.X_OK):
    print(f"SKIP: no JDK at {home}")
    sys.exit(77)
fresh_workdir(work)
fails = []


def fail(what):
    print("FAIL: " + what)
    fails.append(what)


env = java_env()
sites = lock_sites(source)


def run(name, opts, args=()):
    out = os.path.join(work, name)
    r = subprocess.run([java] + opts + [f"-agentpath:{lib}=include=jinstmon.**,out={out}," + name_opts[name],
                                        "-cp", classes, "jinstmon.Main"] + list(args),
                       capture_output=True, text=True, env=env, timeout=120)
    with open(out + ".err", "w") as f:
        f.write(r.stderr)
    refs = dict((m[1], int(m[2])) for m in re.finditer(r"^REF (\w+) (\d+)$", r.stdout, re.M))
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}: {r.stderr[-2000:]}")
    try:
        rows = list(csv.DictReader(open(out + ".monitors.tsv"), delimiter="\t"))
    except OSError as e:
        fail(f"{name}: {e}")
        rows = []
    return r.stdout, refs, rows


def row(rows, kind, method, site, lock, tag):
    want = [r for r in rows if r["kind"] == kind and r["class"].startswith("jinstmon.") and r["method"] == method
            and int(r["line"]) == sites[site] and r["lock_class"] == lock]
    if len(want) != 1:
        fail(f"{tag}: {len(want)} rows for {kind} {method}:{sites[site]} on {lock}")
        return None
    return {k: int(v) for k, v in want[0].items() if v.isdigit()}


def near(tag, got, want):
    ok = abs(got - want) <= TOLERANCE * want
    print(f"{tag}: {got / 1e6:.1f} ms, the program's own {want / 1e6:.1f} ms ({'ok' if ok else 'off'})")
    if not ok:
        fail(f"{tag}: {got / 1e6:.1f} ms against {want / 1e6:.1f} ms, not within {TOLERANCE:.0%}")


def equal(tag, got, want):
    if got != want:
        fail(f"{tag}: {got}, expected {want}")


def contention(name, refs, rows):
    counter, lock = "jinstmon.Main$Counter", "jinstmon.Main$Lock"
    b = row(rows, "block", "enterBlock", "blocked", lock, name)
    m = row(rows, "method", "bump", "bump", counter, name)
    for tag, r, ref in (("block", b, "block_wait_ns"), ("method", m, "method_wait_ns")):
        if r and ref in refs:
            equal(f"{name} {tag} enters", r["enters"], N)
            equal(f"{name} {tag} contended", r["contended"], N)
            near(f"{name} {tag} waiting", r["wait_ns"], refs[ref])
            if not 0 < r["max_wait_ns"] <= r["wait_ns"]:
                fail(f"{name} {tag}: max {r['max_wait_ns']} against total {r['wait_ns']}")
    for kind, method, site, k, n in (("block", "holdBlock", "hold", lock, 1), ("block", "plain", "plain", counter, LOOPS),
                                     ("method", "quiet", "quiet", counter, LOOPS),
                                     ("block", "either", "either", lock, LOOPS),
                                     ("block", "either", "either", counter, LOOPS)):
        r = row(rows, kind, method, site, k, name)
        if r:
            equal(f"{name} {method} enters", r["enters"], n)
    w = row(rows, "wait", "waitTimed", "wait", "java.lang.Object", name)
    if w and "waited_ns" in refs:
        equal(f"{name} wait() calls", w["waits"], 2)
        near(f"{name} wait() time", w["waited_ns"], refs["waited_ns"])
    for r in rows:
        if r["class"].startswith("jinstmon.") and r["kind"] == "wait":
            equal(f"{name} wait() row instrumented", r["instrumented"], "y")
        if r["class"].startswith("jinstmon.") and r["source"] != "Main.java":
            fail(f"{name}: a row's source {r['source']!r}: {r}")
        if r["class"].startswith("jinstmon.") and (r["lock_class"] == "int[]" or int(r["line"]) == sites["clinit"]):
            fail(f"{name}: the wait for a class's initialization as a row: {r}")
    if refs.get("clinit") != 42:
        fail(f"{name}: the program's class initialization: {refs.get('clinit')}")
    busy = {(r["method"], r["line"]) for r in rows if r["class"].startswith("jinstmon.") and int(r["contended"])}
    if busy != {("enterBlock", str(sites["blocked"])), ("bump", str(sites["bump"]))}:
        fail(f"{name}: contention at {sorted(busy)}")


print(subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0])
name_opts = {"monitor": "monitor", "traced": "monitor,trace=times,coverage", "hot": "monitor"}
_, refs, rows = run("monitor", ["-Xverify:all"])
contention("monitor", refs, rows)
text = open(os.path.join(work, "monitor.monitors.txt")).read() if rows else ""
if not text.startswith("MONITORS BEGIN (enters ") or "BY LOCK CLASS" not in text:
    fail("monitor: the report's header")
if f" jinstmon.Main$Lock  jinstmon.Main.enterBlock(Main.java:{sites['blocked']}) (block)\n" not in text:
    fail("monitor: the report does not name SITE:blocked and its lock as Java does")

_, refs, rows = run("traced", ["-Xverify:all"])
contention("traced", refs, rows)
for ext in (".txt", ".cov"):
    if not os.path.exists(os.path.join(work, "traced" + ext)):
        fail(f"traced: no {ext} beside the monitors")

# -Xbatch: each compilation done before the code goes on, so the tier 4
# compilations happen within the loop however slow the machine.
out, _, rows = run("hot", ["-Xbatch", "-XX:+PrintCompilation"], ["hot"])
for method in ("jinstmon.Main$Counter::quiet", "jinstmon.Main::hot"):
    tiers = [l for l in out.splitlines() if re.search(r"\s4\s+" + re.escape(method) + r"\b", l)]
    print(f"hot: {method} at tier 4: {len(tiers)} compilation(s)")
    if not tiers:
        fail(f"hot: {method} never compiled at tier 4")
if re.search(r"jinstmon.*(COMPILE SKIPPED|not compilable)", out):
    fail("hot: a method the JIT refused")
for kind, method, site in (("method", "quiet", "quiet"), ("block", "hot", None)):
    r = [x for x in rows if x["kind"] == kind and x["method"] == method and x["class"].startswith("jinstmon.")]
    if len(r) != 1 or int(r[0]["enters"]) != HOT or int(r[0]["contended"]) != 0:
        fail(f"hot: {kind} {method}: {r}")
if any(int(r["contended"]) for r in rows if r["class"].startswith("jinstmon.")):
    fail("hot: contention in a single thread")


def lines_enters(path):
    try:
        rows = list(csv.DictReader(open(path), delimiter="\t"))
    except OSError as e:
        fail(f"reset: {e}")
        return None
    r = [x for x in rows if x["method"] == "lines" and int(x["line"]) == sites["lines"]]
    return int(r[0]["enters"]) if len(r) == 1 else None


out = os.path.join(work, "reset")
p = subprocess.Popen([java, f"-agentpath:{lib}=monitor,include=jinstmon.**,out={out}", "-cp", classes,
                      "jinstmon.Main", "lines"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True, env=env)
jcmd = os.path.join(home, "bin", "jcmd")


def agent(action):
    r = subprocess.run([jcmd, str(p.pid), "JVMTI.agent_load", lib, action], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        fail(f"jcmd {action}: {r.stdout} {r.stderr}")


try:
    p.stdin.write("1000\n")
    p.stdin.flush()
    equal("reset: first round", p.stdout.readline().strip(), "done 1000")
    agent("dump")
    equal("reset: enters at the dump", lines_enters(out + ".monitors.tsv"), 1000)
    agent("reset")
    p.stdin.write("77\n")
    p.stdin.close()
    equal("reset: second round", p.stdout.readline().strip(), "done 77")
    equal("reset: exit code", p.wait(timeout=60), 0)
    equal("reset: enters at exit", lines_enters(out + ".monitors.tsv"), 77)
finally:
    if p.poll() is None:
        p.kill()

vsrc = os.path.join(os.path.dirname(source), "..", "java21", "jinstmon", "Virtual.java")
javac = os.path.join(home, "bin", "javac")
vclasses = os.path.join(work, "vt")
if subprocess.run([javac, "-d", vclasses, vsrc], capture_output=True).returncode != 0:
    print("note: no virtual threads on this JDK: that case is skipped")
else:
    for i, line in enumerate(open(vsrc), 1):
        if "SITE:virtual" in line:
            sites["virtual"] = i
    r = subprocess.run([java, f"-agentpath:{lib}=monitor,include=jinstmon.**,out={os.path.join(work, 'virtual')}",
                        "-cp", vclasses, "jinstmon.Virtual"], capture_output=True, text=True, env=env, timeout=120)
    m = re.search(r"^REF virtual_wait_ns (\d+)$", r.stdout, re.M)
    rows = list(csv.DictReader(open(os.path.join(work, "virtual.monitors.tsv")), delimiter="\t")) if m else []
    v = row(rows, "block", "round", "virtual", "java.lang.Object", "virtual")
    if not m or not v:
        fail(f"virtual: exit {r.returncode}: {r.stderr[-1000:]}")
    else:
        equal("virtual enters", v["enters"], 200)
        near("virtual waiting", v["wait_ns"], int(m[1]))



def lines_run(out, k, append):
    r = subprocess.run([java, f"-agentpath:{lib}=monitor,include=jinstmon.**,out={out}" + (",append=y" if append else ""),
                        "-cp", classes, "jinstmon.Main", "lines"], input=f"{k}\n", capture_output=True, text=True,
                       env=env, timeout=60)
    return r


def parts(path):
    """[(pid, [lines])] of an appended file, and its lines before the first part."""
    before, out = [], []
    for line in open(path).read().splitlines():
        m = re.match(r"^# jinst session 1, pid (\d+), started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", line)
        if m:
            out.append((int(m[1]), []))
        elif out:
            out[-1][1].append(line)
        else:
            before.append(line)
    return before, out


def part_enters(lines):
    rows = list(csv.DictReader(lines, delimiter="\t"))
    r = [x for x in rows if x["method"] == "lines" and int(x["line"]) == sites["lines"]]
    return int(r[0]["enters"]) if len(r) == 1 else None


out = os.path.join(work, "ap")
if os.path.isdir(out + ".monitors.tsv"):
    os.rmdir(out + ".monitors.tsv")
for k in (3, 5):
    r = lines_run(out, k, True)
    if r.returncode != 0 or r.stdout.strip() != f"done {k}":
        fail(f"append: run of {k}: exit {r.returncode}: {r.stderr[-1000:]}")
before, tsv = parts(out + ".monitors.tsv")
_, txt = parts(out + ".monitors.txt")
if before or [part_enters(lines) for _, lines in tsv] != [3, 5] or len({pid for pid, _ in tsv}) != 2:
    fail(f"append: monitors.tsv's parts {[(pid, part_enters(lines)) for pid, lines in tsv]}, {len(before)} lines "
         "before them; expected 3 then 5 enters, two runs")
if [lines[0].startswith("MONITORS BEGIN") and lines[-1] == "MONITORS END" for _, lines in txt] != [True, True]:
    fail(f"append: monitors.txt's parts: {[lines[:1] for _, lines in txt]}")
r = lines_run(out, 7, False)
before, tsv = parts(out + ".monitors.tsv")
if tsv or part_enters(before) != 7 or open(out + ".monitors.txt").read().count("MONITORS BEGIN") != 1:
    fail("append: a run without append=y did not replace the outputs")
print("append: two runs' parts, then replaced")
os.remove(out + ".monitors.tsv")
os.mkdir(out + ".monitors.tsv")
r = lines_run(out, 1, True)
if r.returncode == 0 or "ap.monitors.tsv cannot be appended to: not a file" not in r.stderr:
    fail(f"append: a folder at OUT.monitors.tsv: exit {r.returncode}: {r.stderr[-1000:]}")
os.rmdir(out + ".monitors.tsv")

print("FAIL" if fails else "PASS")
sys.exit(1 if fails else 0)
