#!/usr/bin/env python3
"""clock=cpu against clock=wall on a program that sleeps and one that spins.

    clock_check.py JAVA_HOME LIBJINST JINST RUNTIME_JAR CLASSES WORK

jinstclock.Main (CLASSES, compiled from agent/tests/clock/) runs
Timed.sleeper (Thread.sleep for SLEEP_MS of wall time) and Timed.spinner
(a busy loop until its thread used SPIN_MS of CPU time) at once on two
threads, and prints each method's wall time (System.nanoTime) and its
thread's CPU time (ThreadMXBean) around the call. The profile's inclusive
times must be, within 10%:
  clock=wall  each method's own wall time (the sleeper's ~SLEEP_MS);
  clock=cpu   each method's own CPU time: the spinner's ~SPIN_MS, the
              sleeper's ~0 (under a tenth of its wall time).
CPU time, not wall time, is the reference for cpu, so a loaded machine
(the spinner waiting for a CPU) changes the references, not the check.
Then the same under jinst-runtime.jar alone (jinst instrument, then
-Djinst.clock=cpu), and the refusals: clock=cpu without trace=times, a
clock that is none. Every output names its clock (profile, folded, html).
Exit 0 passed, 1 failed, 77 skipped (no such JDK; a sanitized
libjinst.so without its runtimes skips the agent's runs).
"""
import os
import re
import subprocess
import sys

SLEEP_MS, SPIN_MS = 1000, 1000
TOLERANCE = 0.10
# What a clock's ticks at either end of a call may add or miss (1 ms each
# at the default tick) and the sleeper's few wake-ups measure: a floor for
# figures near zero.
SLACK_NS = 5_000_000

home, lib, jinst, rtjar, classes, work = sys.argv[1:7]
java = os.path.join(home, "bin", "java")
if not os.access(java, os.X_OK):
    print(f"SKIP: no JDK at {home}")
    sys.exit(77)
os.makedirs(work, exist_ok=True)
for f in os.listdir(work):
    p = os.path.join(work, f)
    if os.path.isfile(p):
        os.remove(p)
fails = []


def fail(what):
    print("FAIL: " + what)
    fails.append(what)


agent_env = dict(os.environ)
agent_ok = True
if os.environ.get("JINST_SANITIZED") == "ON":
    if os.environ.get("JINST_PRELOAD"):
        agent_env["LD_PRELOAD"] = os.environ["JINST_PRELOAD"]
        agent_env["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0"
        agent_env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    else:
        print("note: a sanitized libjinst.so without its runtimes: the agent's runs are skipped")
        agent_ok = False


def run(name, opts, cp, args=(str(SLEEP_MS), str(SPIN_MS)), env=None):
    """Runs Main; returns (exit code, {method: (wall ns, cpu ns)}, stderr)."""
    r = subprocess.run([java] + opts + ["-cp", cp, "jinstclock.Main"] + list(args), capture_output=True,
                       text=True, env=env, timeout=120)
    with open(os.path.join(work, name + ".err"), "w") as f:
        f.write(r.stderr)
    measured = {}
    for line in r.stdout.splitlines():
        m = re.fullmatch(r"(sleeper|spinner) (\d+) (\d+)", line)
        if m:
            measured[m[1]] = (int(m[2]), int(m[3]))
    return r.returncode, measured, r.stderr


def profile(path):
    """The profile's header and each Timed method's inclusive ns."""
    try:
        text = open(path).read()
    except OSError as e:
        fail(f"{path}: {e}")
        return "", {}
    total = {}
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s+\S+%\s+\S+%\s+\d+\s+([\d.]+)\s+([\d.]+)\s+jinstclock/Timed\.(\w+)\(", line)
        if m:
            total[m[3]] = round(float(m[2]) * 1e6)
    return text.splitlines()[0] if text else "", total


def near(tag, got, want, floor=0):
    ok = abs(got - want) <= max(TOLERANCE * want, floor)
    print(f"{tag}: {got / 1e6:.1f} ms, reference {want / 1e6:.1f} ms ({'ok' if ok else 'off'})")
    if not ok:
        fail(f"{tag}: {got / 1e6:.1f} ms against {want / 1e6:.1f} ms, not within {TOLERANCE:.0%}")


def check(tag, clock, out):
    """The figures of one run (name tag, outputs at out.*) under clock."""
    code, measured, err = runs[tag]
    if code != 0 or len(measured) != 2:
        fail(f"{tag}: exit {code}, measured {measured}: {err}")
        return
    head, total = profile(out + ".txt")
    words = {"wall": "WALL TIME", "cpu": "CPU TIME"}[clock]
    if not head.startswith(f"{words} (ms) BEGIN (total = ") or f") clock {clock}, unit ms" not in head:
        fail(f"{tag}: the profile's header does not name clock {clock}: {head}")
    if set(total) != {"sleeper", "spinner"}:
        fail(f"{tag}: the profile has {sorted(total)}, not sleeper and spinner")
        return
    (sleep_wall, sleep_cpu), (spin_wall, spin_cpu) = measured["sleeper"], measured["spinner"]
    if clock == "wall":
        near(f"{tag} sleeper", total["sleeper"], sleep_wall)
        near(f"{tag} spinner", total["spinner"], spin_wall)
    else:
        near(f"{tag} sleeper", total["sleeper"], sleep_cpu, SLACK_NS)
        near(f"{tag} spinner", total["spinner"], spin_cpu)
        if total["sleeper"] > TOLERANCE * sleep_wall:
            fail(f"{tag}: the sleeper shows {total['sleeper'] / 1e6:.1f} ms of CPU for {sleep_wall / 1e6:.0f} ms asleep")


print(subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0])
runs = {}
traced = "trace=times,include=jinstclock.Timed,format=profile+folded+html"
if agent_ok:
    for clock in ("wall", "cpu"):
        out = os.path.join(work, clock)
        runs[clock] = run(clock, [f"-agentpath:{lib}={traced},clock={clock},out={out}"], classes, env=agent_env)
        check(clock, clock, out)
        try:
            folded = open(out + ".folded").readline()
            html = open(out + ".html").read()
        except OSError as e:
            fail(f"{clock}: {e}")
            continue
        if not folded.startswith(f"# jinst folded stacks: clock {clock}, unit ns"):
            fail(f"{clock}: the folded stacks do not name their clock: {folded}")
        if f'"clock":"{clock}"' not in html:
            fail(f"{clock}: the flame graph does not name its clock")
    # Refused before the program runs: the VM does not start.
    for opts, say in ((f"clock=cpu,out={work}/x", "clock=cpu needs trace=times: trace=counts (the default)"),
                      (f"trace=events,clock=cpu,out={work}/x", "clock=cpu needs trace=times: trace=events"),
                      (f"trace=times,clock=cycles,out={work}/x", "clock=cycles: expected wall or cpu")):
        code, _, err = run("refused", [f"-agentpath:{lib}={opts}"], classes, ("1", "1"), agent_env)
        if code == 0 or say not in err:
            fail(f"{opts}: exit {code}, not refused with '{say}': {err}")

# The runtime alone: the same program instrumented ahead of time.
offline = os.path.join(work, "offline")
r = subprocess.run([jinst, "instrument", "--trace=times", "--include", "jinstclock.Timed", "--quiet", "--force",
                    classes, "-o", offline], capture_output=True, text=True)
if r.returncode != 0:
    fail(f"jinst instrument: {r.stderr}")
else:
    cp = offline + os.pathsep + rtjar
    out = os.path.join(work, "alone")
    runs["alone"] = run("alone", ["-Djinst.trace=times", "-Djinst.clock=cpu", f"-Djinst.out={out}"], cp)
    check("alone", "cpu", out)
    code, _, err = run("alone-bad", ["-Djinst.trace=times", "-Djinst.clock=cycles", f"-Djinst.out={out}-bad"], cp,
                       ("1", "1"))
    if code != 0 or "jinst.clock=cycles: expected wall or cpu; recording nothing" not in err or \
            os.path.exists(out + "-bad.txt"):
        fail(f"jinst.clock=cycles: exit {code}, not refused: {err}")

print(f"{len(fails)} failed" if fails else "passed")
sys.exit(1 if fails else 0)
