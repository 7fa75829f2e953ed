#!/usr/bin/env python3
"""append=y: sessions one after the other in the same files, on one running
program (jinstcheck.Cycles, reattach.py's), through jinst attach|dump|stop.

    append.py JAVA_HOME JINST CHECKS WORK

WORK/a.tsv holds an earlier run's lines before the first attach. Cycles 1
to 3 each attach with trace=times,format=counts+profile+folded,append=y,
out=WORK/a, make cycle K's calls, dump, and stop. After each dump and each
stop, a.tsv must be the earlier run's lines, then one part per session so
far, each under its line "# jinst session K, pid PID, started TIME", with
exactly the counts of cycle K (a dump and the stop after it leave one
part, not two); a.txt one ranked profile per session, each under its line;
a.folded one part per session, longRun in the first only (its frame began
in session 1), until it is removed while session 3 runs: then that
session's part alone. Then trace=events,append=y is refused by jinst attach
(exit 2, nothing sent: OUT.json is one document), and a session 4 without
append=y replaces a.tsv with its counts alone. Exit 0 passed, 1 failed, 77
skipped.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reattach  # noqa: E402  (the program's expected calls and answers)

EARLIER = "# jinst session 1, pid 1, started 2000-01-01T00:00:00Z\nold/Cls\tm\t()V\t7\n"
LINE = re.compile(r"^# jinst session (\d+), pid (\d+), started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def parts(path):
    """The parts of an appended file: [(session, pid, [lines])], and the
    lines before the first session's line."""
    before, out = [], []
    with open(path) as f:
        for line in f.read().splitlines():
            m = LINE.match(line)
            if m:
                out.append((int(m.group(1)), int(m.group(2)), []))
            elif out:
                out[-1][2].append(line)
            else:
                before.append(line)
    return before, out


def counts(lines):
    rows = {}
    for line in lines:
        c, m, _, n = line.split("\t")
        if c.startswith("jinstcheck/"):
            rows[(c, m)] = rows.get((c, m), 0) + int(n)
    return rows


def check_files(work, pid, k, when):
    tag = "cycle %d, %s" % (k, when)
    before, tsv = parts(os.path.join(work, "a.tsv"))
    if before or tsv[:1] != [(1, 1, ["old/Cls\tm\t()V\t7"])]:
        reattach.fail("%s: the earlier run's lines are not kept first: %r, %r" % (tag, before, tsv[:1]))
    got = [(s, p) for s, p, _ in tsv[1:]]
    if got != [(j, pid) for j in range(1, k + 1)]:
        reattach.fail("%s: a.tsv's sessions %s, not 1 to %d of pid %d" % (tag, got, k, pid))
    for s, _, lines in tsv[1:]:
        want = reattach.expected_counts(s, False)
        if counts(lines) != want:
            reattach.fail("%s: session %d's counts %s, not %s" % (tag, s, sorted(counts(lines).items()),
                                                                   sorted(want.items())))
    for ext in ("txt", "folded"):
        before, got = parts(os.path.join(work, "a." + ext))
        # (a.folded is removed while session 3 runs: that session alone)
        if before or [s for s, _, _ in got] != ([3] if ext == "folded" and k == 3 else list(range(1, k + 1))):
            reattach.fail("%s: a.%s's sessions %s, %d lines before them" % (tag, ext, [s for s, _, _ in got],
                                                                             len(before)))
            continue
        for s, _, lines in got:
            text = "\n".join(lines)
            if ext == "txt" and not (lines[0].startswith("WALL TIME (ms) BEGIN") and lines[-1] == "WALL TIME (ms) END"):
                reattach.fail("%s: session %d's profile is not whole: %r" % (tag, s, lines[:1] + lines[-1:]))
            if ext == "folded" and ("longRun" in text) != (s == 1):
                reattach.fail("%s: longRun %s session %d's stacks" % (tag, "not in" if s == 1 else "in", s))


def main():
    home, jinst, checks, work = sys.argv[1:5]
    jinst, checks, work = (os.path.abspath(p) for p in (jinst, checks, work))
    java, env = reattach.java_env(home)
    if not java:
        print("SKIP: " + env)
        return 77
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    with open(os.path.join(work, "a.tsv"), "w") as f:
        f.write(EARLIER)
    prog = reattach.launch([java, "-cp", checks, "jinstcheck.Cycles"], work, env)
    if not prog:
        return 1
    pid = prog.pid
    options = "include=jinstcheck.**,out=%s/a" % work
    for k in range(1, 4):
        rc, out = reattach.jinst_run(jinst, "attach", str(pid), "trace=times,format=counts+profile+folded,append=y,"
                                     + options)
        if rc != 0 or "appended to (append=y)" not in out:
            reattach.fail("cycle %d: attach exited %d, or did not say it appends:\n%s" % (k, rc, out))
            break
        prog.stdin.write("%d\n" % k)
        prog.stdin.flush()
        answer = prog.stdout.readline().strip()
        if answer != reattach.expected_answer(k):
            reattach.fail("cycle %d: the program answered %r" % (k, answer))
        if k == 3:
            os.remove(os.path.join(work, "a.folded"))
        for what in ("dump", "stop"):
            rc, out = reattach.jinst_run(jinst, what, str(pid))
            if rc != 0:
                reattach.fail("cycle %d: %s exited %d:\n%s" % (k, what, rc, out))
            check_files(work, pid, k, what)
    rc, out = reattach.jinst_run(jinst, "attach", str(pid), "trace=events,append=y," + options)
    print(out.strip())
    if rc != 2 or "format=chrome (OUT.json" not in out or "nothing was sent" not in out:
        reattach.fail("trace=events,append=y: exit %d, not 2 with the reason" % rc)
    rc, out = reattach.jinst_run(jinst, "attach", str(pid), "trace=counts," + options)
    prog.stdin.write("4\n")
    prog.stdin.flush()
    prog.stdout.readline()
    rc2, _ = reattach.jinst_run(jinst, "stop", str(pid))
    with open(os.path.join(work, "a.tsv")) as f:
        lines = f.read().splitlines()
    if rc != 0 or rc2 != 0 or counts(lines) != reattach.expected_counts(4, False) or any(
            line.startswith("#") for line in lines):
        reattach.fail("session 4 without append=y: exit %d, %d; a.tsv %r" % (rc, rc2, lines[:3]))
    prog.stdin.write("\n")
    prog.stdin.flush()
    rest = prog.stdout.read()
    if prog.wait(60) != 0 or rest.strip() != "cycles: done":
        reattach.fail("the program did not end cleanly: %r, exit %s" % (rest, prog.returncode))
    print("3 sessions appended to a.tsv, a.txt, a.folded after an earlier run's lines, each exactly its calls")
    return 1 if reattach.fails else 0


if __name__ == "__main__":
    sys.exit(main())
