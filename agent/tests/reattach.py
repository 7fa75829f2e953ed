#!/usr/bin/env python3
"""Attach, again and again: CYCLES attach/dump/stop cycles on one running
program (jinstcheck.Cycles), through jinst attach|dump|stop.

    reattach.py JAVA_HOME JINST CHECKS WORK CYCLES [LIBJINST RUNTIME_JAR]

With LIBJINST and RUNTIME_JAR, Cycles$Leaf is instrumented ahead of time
(jinst instrument --trace=counts) and the program starts with the agent
(session 1 from the launch, then attaches): its ids are a run's, reserved
in session 1 before Runner's and again in every later one, and must be
counted and named as the agent's own were.

Cycle K: jinst attach PID with out=WORK/s%n (K = 1 mod 3 trace=times with
the counts and the folded stacks, 2 mod 3 trace=events, its entries
counted, 0 mod 3 trace=counts; cycles 10 and 100 are both times), the
program told K on
its standard input makes the calls of cycle K (Cycles.java says which) and
answers, jinst dump, jinst stop. Each session must:
  - be session K (the agent's line), retransform the same classes as the
    second (the first loads Cycles$Leaf), write sK.tsv at dump and again
    at stop;
  - count exactly the calls of cycle K, every method of the program's
    classes (rows of count 0 are absent), in both files;
  - under trace=times, hold no frame of an earlier session: longRun, whose
    frame was entered in session 1 and waits on through cycle 5, is in the
    folded stacks of session 1 only.
The program's answers must be those computed here, its end clean, and its
resident set (VmRSS) and thread count after cycle 10 and after the last
are printed, with its heap in use after a collection (the heap is of a
fixed size, so the resident set is the VM's and the agent's native
memory); from one to the other they may grow by at most RSS_SLACK_KIB
(twice as much under the sanitizers),
HEAP_SLACK_KIB and no thread. Exit 0 passed, 1 failed, 77 skipped.
"""
import json
import os
import subprocess
import sys
import threading
import time

# HotSpot's own memory grows with each retransformation (native memory
# tracking over cycles 100 to 250, JDK 17: metaspace 9 KiB a cycle, the
# compilers' arenas 7, the list of agents loaded 0.4) and warms up until
# about cycle 100: 5 MiB from cycle 10 to 100 on JDK 17, 2 on JDK 25.
RSS_SLACK_KIB = 12288
HEAP_SLACK_KIB = 512
SANITIZED_CYCLES = 30
CLS = "jinstcheck/Cycles"
RUNNER = "jinstcheck/Cycles$Runner"
LEAF = "jinstcheck/Cycles$Leaf"

fails = []


def fail(msg):
    print("FAIL: " + msg, flush=True)
    fails.append(msg)


def fib_calls(n):
    """Calls fib(n) makes, itself included."""
    a, b = 1, 1  # calls of fib(0), fib(1)
    for _ in range(n - 1):
        a, b = b, a + b + 1
    return b if n >= 1 else a


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def expected_counts(k, launched):
    """The rows of cycle k: (class, method) -> count; launched: session 1
    began with the program (its start is counted too)."""
    works = 100 + k + (1 if k <= 5 else 0)
    rows = {
        (CLS, "work"): works,
        (LEAF, "leaf"): 3 * works,
        (CLS, "fib"): fib_calls(10 + k % 5),
        (CLS, "side"): k,
        (CLS, "askSide"): 1,
    }
    if k <= 5:
        rows[(CLS, "askLong")] = 1
    if k == 1:
        rows[(CLS, "longRun")] = 1
        rows[(RUNNER, "<init>")] = 2 if launched else 1
        rows[(RUNNER, "run")] = 2 if launched else 1
    if k == 1 and launched:
        for m in ("<clinit>", "main", "sideLoop"):
            rows[(CLS, m)] = 1
        rows[(LEAF, "leaf")] += 1
    return rows


def expected_answer(k):
    s = 0
    if k <= 5:
        s += sum(3 * (k + j) + 1 for j in range(3))
    for i in range(100 + k):
        s += sum(3 * (i + j) + 1 for j in range(3))
    s += fib(10 + k % 5)
    s += k * k
    return "cycle %d: %d" % (k, s)


def read_tsv(path):
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                c, m, d, n = line.rstrip("\n").split("\t")
                if c in (CLS, RUNNER, LEAF):
                    rows[(c, m)] = rows.get((c, m), 0) + int(n)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    return rows


def heap_kib(prog):
    """The program's heap in use after a collection."""
    prog.stdin.write("heap\n")
    prog.stdin.flush()
    line = prog.stdout.readline().split()
    return int(line[1]) if len(line) == 2 and line[0] == "heap:" else -1


def read_chrome(path):
    """The entries (B events) per (class, method) of a Chrome trace."""
    rows = {}
    try:
        with open(path) as f:
            for e in json.load(f)["traceEvents"]:
                c, _, m = e.get("name", "").rpartition(".")
                if e.get("ph") == "B" and c in (CLS, RUNNER, LEAF):
                    rows[(c, m)] = rows.get((c, m), 0) + 1
    except (OSError, ValueError, KeyError) as e:
        fail("%s: %s" % (path, e))
    return rows


def thread_names(pid):
    names = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                names.append(f.read().strip())
        except OSError:
            pass  # (ended meanwhile)
    return sorted(names)


def status(pid):
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, thread_names(pid)


def java_env(home):
    """(java, its environment): in a sanitized build, the sanitizer runtimes
    preloaded; (None, reason) when the test must be skipped."""
    java = os.path.join(home, "bin", "java")
    if not os.access(java, os.X_OK):
        return None, "no JDK at " + home
    env = dict(os.environ)
    if os.environ.get("JINST_SANITIZED", "OFF") == "ON":
        if not os.environ.get("JINST_PRELOAD"):
            return None, "a sanitized libjinst.so needs its sanitizer runtimes, which were not found"
        env["LD_PRELOAD"] = os.environ["JINST_PRELOAD"]
        # (no quarantine: memory freed is used again, as without ASan, so
        # that the resident set measures what is kept)
        env["ASAN_OPTIONS"] = ("detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0:"
                               "quarantine_size_mb=0")
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return java, env


def launch(cmd, work, env):
    """Starts Cycles (cmd) in work, its stderr in program.err, killed after
    150 s; the process once it runs, else None."""
    err = open(os.path.join(work, "program.err"), "w")
    prog = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env, text=True,
                            cwd=work)
    err.close()
    # A program that hangs ends the test, not the run.
    watchdog = threading.Timer(150, prog.kill)
    watchdog.daemon = True
    watchdog.start()
    if prog.stdout.readline().strip() != "cycles: running":
        fail("the program did not start")
        prog.kill()
        return None
    return prog


def jinst_run(jinst, *args):
    """jinst ARGS: its exit status and what it printed."""
    r = subprocess.run([jinst] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    home, jinst, checks, work, cycles = sys.argv[1:6]
    jinst, checks, work = (os.path.abspath(p) for p in (jinst, checks, work))
    lib, runtime = (os.path.abspath(p) for p in sys.argv[6:8]) if len(sys.argv) > 7 else (None, None)
    cycles = int(cycles)
    java, env = java_env(home)
    if not java:
        print("SKIP: " + env)
        return 77
    if os.environ.get("JINST_SANITIZED", "OFF") == "ON":
        # A sanitized cycle takes 4 times as long: 30 of them, but in the
        # full run (scripts/test-full.sh).
        # ASan's own bookkeeping grows with the cycles too (measured: 55 to
        # 64 KiB a cycle, against 12 to 22 without it).
        global RSS_SLACK_KIB
        RSS_SLACK_KIB *= 2
        if os.environ.get("JINST_CORPUS_SAMPLE") != "1" and cycles > SANITIZED_CYCLES:
            print("%d cycles under the sanitizers (scripts/test-full.sh: %d)" % (SANITIZED_CYCLES, cycles))
            cycles = SANITIZED_CYCLES
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    # A heap of fixed size, touched at start: what grows is the VM's and
    # the agent's native memory, not the heap as the collector sizes it.
    options = ",include=jinstcheck.**,out=%s/s%%n" % work
    # The VM's own threads fixed from the start: it adds compiler threads
    # under load and garbage-collector workers as it needs them, which
    # would read as threads the agent left behind.
    cmd = [java, "-Xms32m", "-Xmx32m", "-XX:+AlwaysPreTouch", "-XX:-UseDynamicNumberOfCompilerThreads",
           "-XX:-UseDynamicNumberOfGCThreads", "-cp", checks, "jinstcheck.Cycles"]
    if lib:
        off = os.path.join(work, "off")
        os.makedirs(os.path.join(work, "in", "jinstcheck"))
        subprocess.run(["cp", os.path.join(checks, "jinstcheck", "Cycles$Leaf.class"),
                        os.path.join(work, "in", "jinstcheck")], check=True)
        subprocess.run([jinst, "instrument", "--quiet", "--trace=counts", os.path.join(work, "in"), "-o", off],
                       check=True)
        cmd[6:8] = ["-agentpath:%s=trace=counts%s" % (lib, options), "-cp", os.pathsep.join([off, checks, runtime])]
    prog = launch(cmd, work, env)
    if not prog:
        return 1
    pid = prog.pid
    started = None
    figures = {}
    t0 = time.monotonic()
    for k in range(1, cycles + 1):
        events = k % 3 == 2 and not lib  # (code instrumented ahead of time for counts has no events)
        opts = ("trace=times,format=counts+folded" if k % 3 == 1 else "trace=events" if events else "trace=counts")
        rc, out = 0, "jinst: launched with the program"
        if k > 1 or not lib:
            rc, out = jinst_run(jinst, "attach", str(pid), opts + options)
        if rc != 0 or prog.poll() is not None:
            fail("cycle %d: attach exited %d:\n%s" % (k, rc, out))
            break
        if k > 1 and "jinst: starting again after stop: session %d" % k not in out:
            fail("cycle %d: not said to be session %d:\n%s" % (k, k, out))
        line = [l for l in out.splitlines() if l.startswith("jinst: start: ")]
        if k == 2:  # (cycle 1 loads Cycles$Leaf)
            started = line
        elif k > 2 and line != started:
            fail("cycle %d: %s, not %s as the second session" % (k, line, started))
        prog.stdin.write("%d\n" % k)
        prog.stdin.flush()
        answer = prog.stdout.readline().strip()
        if answer != expected_answer(k):
            fail("cycle %d: the program answered %r, not %r" % (k, answer, expected_answer(k)))
        tsv = os.path.join(work, "s%d.tsv" % k)
        want = expected_counts(k, lib is not None)
        for what in ("dump", "stop"):
            rc, out = jinst_run(jinst, what, str(pid))
            if rc != 0:
                fail("cycle %d: %s exited %d:\n%s" % (k, what, rc, out))
            got = read_chrome(tsv[:-3] + "json") if events else read_tsv(tsv)
            if got != want:
                fail("cycle %d, %s: counts %s, not %s" % (k, what, sorted(got.items()), sorted(want.items())))
        if k % 3 == 1 and (k > 1 or not lib):
            folded = open(os.path.join(work, "s%d.folded" % k)).read()
            if ("longRun" in folded) != (k == 1):
                fail("cycle %d: longRun %s the folded stacks" % (k, "not in" if k == 1 else "in"))
        if k in (10, 100, cycles):
            figures[k] = status(pid) + (heap_kib(prog),)
    elapsed = time.monotonic() - t0
    prog.stdin.write("\n")
    prog.stdin.flush()
    rest = prog.stdout.read()
    if prog.wait(60) != 0 or rest.strip() != "cycles: done":
        fail("the program did not end cleanly: %r, exit %s" % (rest, prog.returncode))
    print("%d cycles in %.1f s" % (cycles, elapsed))
    for k in sorted(figures):
        r, t, h = figures[k]
        print("after cycle %d: VmRSS %d KiB, %d threads, heap in use %d KiB" % (k, r, len(t), h))
    if 10 in figures and cycles in figures and cycles > 10:
        (r10, n10, h10), (rn, nn, hn) = figures[10], figures[cycles]
        t10, tn = len(n10), len(nn)
        print("cycles 10 to %d: VmRSS %+d KiB (%.1f KiB a cycle), threads %+d, heap %+d KiB" %
              (cycles, rn - r10, (rn - r10) / (cycles - 10), tn - t10, hn - h10))
        if rn - r10 > RSS_SLACK_KIB:
            fail("VmRSS grew by %d KiB from cycle 10 to %d" % (rn - r10, cycles))
        if h10 < 0 or hn - h10 > HEAP_SLACK_KIB:
            fail("the heap in use grew from %d to %d KiB" % (h10, hn))
        if tn > t10:
            new = list(nn)
            for name in n10:
                if name in new:
                    new.remove(name)
            fail("threads grew from %d to %d: %s" % (t10, tn, ", ".join(new)))
    with open(os.path.join(work, "program.err")) as f:
        log = f.read()
    if fails:
        print("the program's stderr:\n" + log[-4000:])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
