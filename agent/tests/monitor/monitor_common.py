"""What monitor_check.py and monitor_restart.py share: a fresh work folder,
the environment a sanitized libjinst.so needs in the JVM, and the lines of
the program's lock sites (the SITE:name markers of its source)."""
import os
import re
import sys


def java_env():
    """The environment for the JVM: with a sanitized build, its runtimes
    preloaded; exits 77 (skipped) when they are not known."""
    env = dict(os.environ)
    if os.environ.get("JINST_SANITIZED") == "ON":
        if not os.environ.get("JINST_PRELOAD"):
            print("SKIP: a sanitized libjinst.so without its runtimes")
            sys.exit(77)
        env["LD_PRELOAD"] = os.environ["JINST_PRELOAD"]
        env["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def lock_sites(source):
    """{name: line} of the SITE:name markers in source."""
    sites = {}
    for i, line in enumerate(open(source), 1):
        m = re.search(r"SITE:(\w+)", line)
        if m:
            sites[m[1]] = i
    return sites


def fresh_workdir(work):
    """work, made if missing, with the files of an earlier run removed."""
    os.makedirs(work, exist_ok=True)
    for f in os.listdir(work):
        if os.path.isfile(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
