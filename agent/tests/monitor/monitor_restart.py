#!/usr/bin/env python3
"""The monitor module started again after `stop`, on one running program.

    monitor_restart.py JAVA_HOME LIBJINST SOURCE CLASSES WITNESS WORK [CYCLES]

jinstmon.Main rounds (CLASSES, compiled from SOURCE) runs, with no agent,
one round per number K on its standard input: K enters of SITE:round, one
of SITE:hold by a holder that keeps the lock HOLD_MS, and N threads blocked
at SITE:blocked, each timing its own wait. Through jcmd JVMTI.agent_load
it gets four sessions, each attach, one round, stop, with a round before
each attach that no session may count:

  1  monitor                       out=s1, K = 1000
  2  monitor                       out=s2, K = 77
  3  trace=counts,monitor,alloc    out=s3, K = 300
  4  monitor                       out=s4, K = 5

Each session's sK.monitors.tsv must hold exactly its own round: K enters
at SITE:round, 1 at SITE:hold, N enters all N contended at SITE:blocked,
the time waiting within 10% of the program's own figure, no other row of
the program's; session 3 also its trace counts (s3.tsv) and the threads
its round made (s3.alloc.tsv). The VM's own word on the code it runs
(the witness agent, GetBytecodes): Main's methods are instrumented while a
session runs and their original bytecode again after each stop. The
program's answers must be those computed here, its end clean. Then a first
attach to a program whose lock is contended all along (jinstmon.Main busy):
contention is seen before its class is retransformed, and its row must say
the site is instrumented (the TSV's y, no "not instrumented" in the
report) with its enters counted. And an attach while a thread is blocked
(jinstmon.Main stuck): its enter, once the holder lets go, has no start
and is left out, not counted as contention of no time. About 10 s.
With CYCLES, as many `monitor` sessions more, each exactly its round, and
the program's resident set (VmRSS) and threads after the tenth session and
the last are printed: they may grow by RSS_SLACK_KIB and no thread (about
1.3 s a cycle; by hand, not in the default set).
Exit 0 passed, 1 failed, 77 skipped (no such JDK; a sanitized libjinst.so
without its runtimes).
"""
import csv
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
from monitor_common import fresh_workdir, java_env, lock_sites  # noqa: E402

TOLERANCE = 0.10
N = 3
CLS = "jinstmon/Main"
JAVA_CLS = "jinstmon.Main"  # the monitors outputs name classes as Java does
# As reattach.py's: HotSpot's own memory grows with each retransformation
# until it warms up.
RSS_SLACK_KIB = 12288

home, lib, source, classes, witness, work = sys.argv[1:7]
cycles = int(sys.argv[7]) if len(sys.argv) > 7 else 0
java, jcmd = os.path.join(home, "bin", "java"), os.path.join(home, "bin", "jcmd")
if not os.access(java, os.X_OK) or not os.access(jcmd, os.X_OK):
    print(f"SKIP: no JDK at {home}")
    sys.exit(77)
fresh_workdir(work)
fails = []


def fail(what):
    print("FAIL: " + what, flush=True)
    fails.append(what)


def equal(tag, got, want):
    if got != want:
        fail(f"{tag}: {got}, expected {want}")


env = java_env()
sites = lock_sites(source)

print(subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0])
err = open(os.path.join(work, "program.err"), "w")
p = subprocess.Popen([java, "-Xverify:all", "-cp", classes, "jinstmon.Main", "rounds"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=err, text=True, env=env)
sink = 0


def load(what, args):
    """jcmd PID JVMTI.agent_load LIB ARGS: True when the agent said yes."""
    r = subprocess.run([jcmd, str(p.pid), "JVMTI.agent_load", lib, f'"{args}"' if "=" in args else args],
                       capture_output=True, text=True, timeout=60)
    ok = r.returncode == 0 and "return code: 0" in r.stdout
    if not ok:
        fail(f"{what}: jcmd {args}: {r.stdout.strip()} {r.stderr.strip()}")
    return ok


def bytecodes(name):
    """Main's methods as the VM runs them now (the witness agent)."""
    out = os.path.join(work, name + ".code")
    r = subprocess.run([jcmd, str(p.pid), "JVMTI.agent_load", witness, f'"class={CLS},out={out}"'],
                       capture_output=True, text=True, timeout=60)
    try:
        return open(out).read()
    except OSError:
        fail(f"{name}: no bytecodes from the witness: {r.stdout.strip()}")
        return None


def round_trip(k):
    """One round of k enters; the program's own figure of the time waiting."""
    global sink
    p.stdin.write(f"{k}\n")
    p.stdin.flush()
    sink += k + N
    equal(f"round {k}: the program's answer", p.stdout.readline().strip(), f"round {k} {sink}")
    m = re.match(r"REF block_wait_ns (\d+)$", p.stdout.readline().strip())
    return int(m[1]) if m else 0


def monitors(tag, path, k, waited):
    try:
        rows = [r for r in csv.DictReader(open(path), delimiter="\t") if r["class"] == JAVA_CLS]
    except OSError as e:
        fail(f"{tag}: {e}")
        return
    got = {(r["kind"], r["method"], int(r["line"]), r["lock_class"]): r for r in rows}
    lock = "jinstmon.Main$Lock"
    want = {("block", "round", sites["round"], lock): (k, 0), ("block", "holdBlock", sites["hold"], lock): (1, 0),
            ("block", "enterBlock", sites["blocked"], lock): (N, N)}
    equal(f"{tag}: the program's rows", sorted(got), sorted(want))
    for key, (enters, contended) in want.items():
        r = got.get(key)
        if r:
            equal(f"{tag}: {key[1]} enters", int(r["enters"]), enters)
            equal(f"{tag}: {key[1]} contended", int(r["contended"]), contended)
    r = got.get(("block", "enterBlock", sites["blocked"], lock))
    if r and waited:
        w = int(r["wait_ns"])
        ok = abs(w - waited) <= TOLERANCE * waited
        print(f"{tag}: waiting {w / 1e6:.1f} ms, the program's own {waited / 1e6:.1f} ms ({'ok' if ok else 'off'})")
        if not ok:
            fail(f"{tag}: waiting {w} ns against {waited} ns, not within {TOLERANCE:.0%}")


def traced(tag, path):
    counts = {}
    try:
        for line in open(path):
            c, m, d, n = line.rstrip("\n").split("\t")
            if c == CLS:
                counts[m] = counts.get(m, 0) + int(n)
    except (OSError, ValueError) as e:
        fail(f"{tag}: {e}")
    for m, n in (("round", 1), ("contend", 1), ("holdBlock", 1), ("enterBlock", N)):
        equal(f"{tag}: trace counts of {m}", counts.get(m), n)


def allocated(tag, path):
    try:
        rows = list(csv.DictReader(open(path), delimiter="\t"))
    except OSError as e:
        fail(f"{tag}: {e}")
        return
    threads = sum(int(r["objects"]) for r in rows if r["class"] == "jinstmon.Main" and r["method"] == "contend"
                  and r["type"] == "java.lang.Thread")
    equal(f"{tag}: threads made in contend", threads, N + 1)


def figures():
    """The program's resident set (KiB) and threads."""
    st = dict(line.split(":", 1) for line in open(f"/proc/{p.pid}/status"))
    return int(st["VmRSS"].split()[0]), int(st["Threads"])


def more_cycles():
    seen = {}
    for n in range(5, 5 + cycles):
        out = os.path.join(work, "cycle")
        if not load(f"session {n}", f"monitor,include=jinstmon.**,out={out}"):
            return
        waited = round_trip(n)
        if not load(f"session {n}", "stop"):
            return
        monitors(f"session {n}", out + ".monitors.tsv", n, waited)
        if n in (10, 4 + cycles):
            seen[n] = figures()
            print(f"after session {n}: VmRSS {seen[n][0]} KiB, {seen[n][1]} threads", flush=True)
    if len(seen) == 2:
        (r0, t0), (r1, t1) = seen[10], seen[4 + cycles]
        print(f"sessions 10 to {4 + cycles}: VmRSS {r1 - r0:+d} KiB, threads {t1 - t0:+d}")
        if r1 - r0 > RSS_SLACK_KIB or t1 > t0:
            fail(f"grew from session 10 to {4 + cycles}: {r1 - r0:+d} KiB, {t1 - t0:+d} threads")


sessions = [("monitor", 1000), ("monitor", 77), ("trace=counts,monitor,alloc", 300), ("monitor", 5)]
try:
    round_trip(11)  # Main's classes loaded: the attach retransforms them
    original = bytecodes("before")
    for n, (opts, k) in enumerate(sessions, 1):
        tag = f"session {n} ({opts})"
        out = os.path.join(work, f"s{n}")
        if not load(tag, f"{opts},include=jinstmon.**,out={out}"):
            break
        during = bytecodes(f"during{n}")
        if original is not None and during == original:
            fail(f"{tag}: Main runs its original code while recording")
        waited = round_trip(k)
        if not load(tag, "stop"):
            break
        monitors(tag, out + ".monitors.tsv", k, waited)
        if "trace" in opts:
            traced(tag, out + ".tsv")
        if "alloc" in opts:
            allocated(tag, out + ".alloc.tsv")
        after = bytecodes(f"after{n}")
        if original is not None and after != original:
            fail(f"{tag}: Main's code after stop is not the original")
        round_trip(13)  # stopped: no session counts it
    else:
        print(f"{len(sessions)} sessions: each its own round exactly; Main's original code after each stop")
        more_cycles()
    p.stdin.close()
    equal("the program's exit", p.wait(timeout=60), 0)
    equal("the program's last words", p.stdout.read(), "")
finally:
    if p.poll() is None:
        p.kill()
    err.close()


def started(mode):
    """Main in mode, once it said so (its first line), as p too (the
    load's target)."""
    global p
    p = subprocess.Popen([java, "-cp", classes, "jinstmon.Main", mode], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    equal(f"{mode}: the program's first line", p.stdout.readline().strip(), mode)
    return p


def attached_busy():
    """A first attach while SITE:busy blocks every millisecond: the events
    are on before Main is retransformed, and the place they saw first is
    the pass's site once it is."""
    b = started("busy")
    try:
        out = os.path.join(work, "busy")
        if load("busy", f"monitor,include=jinstmon.**,out={out}"):
            time.sleep(1)
            load("busy", "stop")
        rows = [r for r in csv.DictReader(open(out + ".monitors.tsv"), delimiter="\t")
                if r["class"] == JAVA_CLS and int(r["line"]) == sites["busy"]]
        equal("busy: rows of SITE:busy", len(rows), 1)
        for r in rows:
            equal("busy: SITE:busy instrumented", r["instrumented"], "y")
            if int(r["enters"]) <= 0 or int(r["contended"]) <= 0:
                fail(f"busy: SITE:busy with {r['enters']} enters, {r['contended']} contended")
            print(f"busy: SITE:busy {r['enters']} enters, {r['contended']} contended, instrumented {r['instrumented']}")
        for line in open(out + ".monitors.txt"):
            if f"jinstmon.Main.busyBlock(Main.java:{sites['busy']})" in line and "not instrumented" in line:
                fail("busy: the report says " + line.strip())
        b.stdin.close()
        equal("busy: the program's exit", b.wait(timeout=60), 0)
    except (OSError, ValueError) as e:
        fail(f"busy: {e}")
    finally:
        if b.poll() is None:
            b.kill()


def attached_stuck():
    """A first attach while a thread is blocked at SITE:blocked: the
    contention began before the session, which cannot time it."""
    s = started("stuck")
    try:
        out = os.path.join(work, "stuck")
        if load("stuck", f"monitor,include=jinstmon.**,out={out}"):
            s.stdin.write("\n")
            s.stdin.flush()
            equal("stuck: the program's second line", s.stdout.readline().strip(), "released")
            load("stuck", "stop")
        rows = [r for r in csv.DictReader(open(out + ".monitors.tsv"), delimiter="\t")
                if r["class"] == JAVA_CLS and int(r["contended"])]
        equal("stuck: rows with contention begun before the session", rows, [])
        s.stdin.close()
        equal("stuck: the program's exit", s.wait(timeout=60), 0)
    except (OSError, ValueError) as e:
        fail(f"stuck: {e}")
    finally:
        if s.poll() is None:
            s.kill()


if not fails:
    attached_busy()
if not fails:
    attached_stuck()
log = open(os.path.join(work, "program.err")).read()
for n in range(2, len(sessions) + 1):
    if f"starting again after stop: session {n}" not in log:
        fail(f"no session {n} in the log")
if fails:
    print(log[-3000:])
print("FAIL" if fails else "PASS")
sys.exit(1 if fails else 0)
