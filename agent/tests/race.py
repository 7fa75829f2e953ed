#!/usr/bin/env python3
"""Sessions that start and stop while others ask at the same time: CYCLES
cycles on one program (jinstcheck.Hammer) whose two threads call
jinst.rt.Control.dump() without end.

    race.py JAVA_HOME JINST CHECKS WORK CYCLES

Each cycle: two `jinst attach PID trace=counts,append=y,out=WORK/r` at
once, of which one starts the session and the other is refused ("already
tracing"); then `jinst stop` and `jinst dump` at once: the stop succeeds,
the dump too when it came first, else it is refused ("stopped"). All the
while the program's dumps write r.tsv. At the end r.tsv must hold each
session once, in order (a dump that came while a session started or
stopped would write an earlier session's records under a later one's line,
or a part twice), every line a record; the program must end cleanly, with
dumps made, and no failure in its log. Under the sanitizers nothing is
refused (HotSpot 17 reads a refused library's name after unloading it,
which ASan reports): one attach, a dump, a stop in turn. 200 cycles in
scripts/test-full.sh. Exit 0 passed, 1 failed, 77 skipped.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import append  # noqa: E402  (the parts of an appended file)
import reattach  # noqa: E402  (java, jinst_run, fail)


def at_once(jinst, *commands):
    """Runs the jinst commands at the same time: [(exit status, output)]."""
    procs = [subprocess.Popen([jinst] + list(c), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for c in commands]
    return [(p.wait(60), p.stdout.read()) for p in procs]


def cycle(jinst, pid, k, options, sanitized):
    if sanitized:
        for what, opts in (("attach", [options]), ("dump", []), ("stop", [])):
            rc, out = reattach.jinst_run(jinst, what, str(pid), *opts)
            if rc != 0:
                reattach.fail("cycle %d: %s exited %d:\n%s" % (k, what, rc, out))
        return
    got = at_once(jinst, ["attach", str(pid), options], ["attach", str(pid), options])
    refused = [out for rc, out in got if rc == 1 and "runs in this VM already" in out]
    if sorted(rc for rc, _ in got) != [0, 1] or len(refused) != 1:
        reattach.fail("cycle %d: two attaches at once: %s" % (k, got))
    (src, sout), (drc, dout) = at_once(jinst, ["stop", str(pid)], ["dump", str(pid)])
    if src != 0 or not (drc == 0 or (drc == 1 and ") was stopped, nothing to dump" in dout)):
        reattach.fail("cycle %d: stop and dump at once: %d %s; %d %s" % (k, src, sout, drc, dout))


def main():
    home, jinst, checks, work, cycles = sys.argv[1:6]
    jinst, checks, work = (os.path.abspath(p) for p in (jinst, checks, work))
    java, env = reattach.java_env(home)
    if not java:
        print("SKIP: " + env)
        return 77
    sanitized = os.environ.get("JINST_SANITIZED", "OFF") == "ON"
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    err = open(os.path.join(work, "program.err"), "w")
    prog = subprocess.Popen([java, "-cp", checks, "jinstcheck.Hammer", "2"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, env=env, text=True, cwd=work)
    err.close()
    if prog.stdout.readline().strip() != "hammer: running":
        reattach.fail("the program did not start")
        prog.kill()
        return 1
    options = "trace=counts,include=jinstcheck.**,append=y,log=%s/agent.log,out=%s/r" % (work, work)
    # (scripts/test-full.sh: 200 cycles)
    cycles = 200 if os.environ.get("JINST_CORPUS_SAMPLE") == "1" else int(cycles)
    for k in range(1, cycles + 1):
        cycle(jinst, prog.pid, k, options, sanitized)
    prog.stdin.close()
    rest = prog.stdout.read()
    if prog.wait(60) != 0 or not rest.startswith("hammer: done, ") or rest.split()[2] == "0":
        reattach.fail("the program did not end cleanly, or made no dump: %r, exit %s" % (rest, prog.returncode))
    before, parts = append.parts(os.path.join(work, "r.tsv"))
    sessions = [s for s, p, _ in parts if p == prog.pid]
    if before or sessions != list(range(1, cycles + 1)) or len(parts) != cycles:
        reattach.fail("r.tsv's sessions %s, not 1 to %d once each" % ([(s, p) for s, p, _ in parts], cycles))
    for s, _, lines in parts:
        bad = [line for line in lines if len(line.split("\t")) != 4 or not line.split("\t")[3].isdigit()]
        if bad:
            reattach.fail("session %d: lines that are no record: %r" % (s, bad[:3]))
    with open(os.path.join(work, "agent.log")) as f:
        log = f.read()
    with open(os.path.join(work, "program.err")) as f:
        log += f.read()
    wrote = log.count("jinst: wrote ")
    bad = [line for line in log.splitlines() if re.search(r"failed:|[1-9][0-9]* failed|Exception|not written|Error", line)]
    if bad:
        reattach.fail("failures in the log: %s" % bad[:5])
    print("%d cycles, %s; %d writes; r.tsv's sessions checked" % (cycles, rest.strip(), wrote))
    return 1 if reattach.fails else 0


if __name__ == "__main__":
    sys.exit(main())
