#!/usr/bin/env python3
"""jinst attach against a fake target: a process that passes for a HotSpot VM
(it maps a file named libjvm.so, as /proc/PID/maps shows) and listens on
/tmp/.java_pidPID, as a VM's attach listener does, but speaks only half of
the protocol.

    attach_fake.py JINST WORK

Each case starts a fake (this script, `serve MODE`), runs jinst attach on
it with --reply-timeout 1, and checks the exit status, the message and the
time taken:
  silent   takes the request and never answers: exit 1 within a few
           seconds, "took the request but gave no answer in 1 s", what to do
  partial  answers the status line and never ends the reply: exit 1,
           "answered in part"
  whole    answers as HotSpot does ("0", "return code: 0", then closes):
           exit 0 (the fake is a target the tool accepts, so the two cases
           above time out on the answer alone); the request it read is
           HotSpot's protocol: "1", "load", the agent, "true", the options
           with reply=, each NUL-terminated
  other    as whole, but its agent properties name another library as the
           VM's agent (jinst.agent): the load names that one, and the tool
           says so
  none     jinst dump on a fake whose agent properties have no jinst.agent:
           exit 1, "has no jinst session", and no load sent
Before the load, each fake answers agentProperties (the tool's first
question) with properties of its own. The reply file the agent is given
is 0600 in a folder of its own, 0700; neither is left in /tmp, also after a
timeout, and an agent that answers late cannot make the file anew. Exit 0
passed, 1 failed.
"""
import mmap
import os
import socket
import subprocess
import sys
import time

fails = []
OTHER = b"/opt/an:other/libjinst.so"


def fail(msg):
    print("FAIL: " + msg, flush=True)
    fails.append(msg)


def serve(mode, work):
    """The fake target: listen, take one request, answer as mode says."""
    lib = os.path.join(work, "libjvm.so")
    with open(lib, "wb") as f:
        f.write(b"\0" * 4096)
    with open(lib, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
    path = "/tmp/.java_pid%d" % os.getpid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        request = b""
        while request.count(b"\0") < 5:
            more = conn.recv(4096)
            if not more:
                break
            request += more
        if request.split(b"\0")[1:2] != [b"agentProperties"]:
            break
        # as VMSupport.serializeAgentPropertiesToByteArray: Properties.store
        props = b"0\n#Fri Nov 27 18:00:00 UTC 2026\nsun.jvm.args=-Xmx1g\n"
        if mode == "other":
            props += b"jinst.agent=" + OTHER.replace(b":", b"\\:") + b"\n"
        conn.sendall(props)
        conn.close()
    with open(os.path.join(work, "request-" + mode), "wb") as f:
        f.write(request)
    # the reply file as the agent finds it: its mode and its folder's
    reply = request.split(b"reply=")[-1].split(b"\0")[0].decode()
    with open(os.path.join(work, "modes-" + mode), "w") as f:
        f.write("%o %o" % (os.stat(reply).st_mode & 0o777, os.stat(os.path.dirname(reply)).st_mode & 0o777))
    if mode in ("whole", "other"):
        conn.sendall(b"0\nreturn code: 0\n")
        conn.close()
    elif mode == "partial":
        conn.sendall(b"0\n")
    time.sleep(60)  # (killed by the test, which removes the socket)
    mapped.close()


def run_case(jinst, work, mode):
    fake = subprocess.Popen([sys.executable, os.path.abspath(__file__), "serve", mode, work],
                            stdout=subprocess.PIPE, text=True)
    try:
        if fake.stdout.readline().strip() != "ready":
            fail("%s: the fake target did not start" % mode)
            return
        t0 = time.monotonic()
        args = ["dump", str(fake.pid)] if mode == "none" else ["attach", str(fake.pid), "trace=counts,out=/tmp/x"]
        r = subprocess.run([jinst, args[0], "--reply-timeout", "1", "--agent", os.path.abspath(__file__)] + args[1:],
                           capture_output=True, text=True, timeout=30)
        took = time.monotonic() - t0
    finally:
        fake.kill()
        fake.wait()
        if os.path.exists("/tmp/.java_pid%d" % fake.pid):
            os.unlink("/tmp/.java_pid%d" % fake.pid)
    out = r.stdout + r.stderr
    print("%s: exit %d in %.1f s: %s" % (mode, r.returncode, took, out.strip()))
    want = {
        "silent": (1, "timeout: process %d took the request but gave no answer in 1 s" % fake.pid),
        "partial": (1, "timeout: process %d answered in part (2 bytes) and not to the end in 1 s" % fake.pid),
        "whole": (0, "jinst attach: process %d: done (return code 0)" % fake.pid),
        "other": (0, "process %d has the agent %s, not %s: asking that one" %
                  (fake.pid, OTHER.decode(), os.path.abspath(__file__))),
        "none": (1, "jinst dump: process %d has no jinst session, nothing to dump" % fake.pid),
    }[mode]
    if r.returncode != want[0] or want[1] not in out:
        fail("%s: exit %d, not %d with %r" % (mode, r.returncode, want[0], want[1]))
    if mode == "silent" and "--reply-timeout S" not in out:
        fail("silent: the message does not say how to wait longer")
    if took > 5:
        fail("%s: took %.1f s with --reply-timeout 1" % (mode, took))
    request = os.path.join(work, "request-" + mode)
    if mode == "none":
        if os.path.exists(request):
            fail("none: a load was sent: %r" % open(request, "rb").read())
        return
    with open(request, "rb") as f:
        parts = f.read().split(b"\0")
    reply = ""
    lib = OTHER if mode == "other" else os.path.abspath(__file__).encode()
    if parts[:4] != [b"1", b"load", lib, b"true"] or not parts[4].startswith(
            b"trace=counts,out=/tmp/x,reply=/tmp/jinst-reply."):
        fail("%s: the request was %r" % (mode, parts))
    else:
        reply = parts[4].split(b"reply=")[1].decode()
    if os.path.exists(reply) or os.path.exists(os.path.dirname(reply)):
        fail("%s: the reply file %s or its folder was left" % (mode, reply))
    with open(os.path.join(work, "modes-" + mode)) as f:
        modes = f.read()
    if modes != "600 700":
        fail("%s: the reply file and its folder had modes %s, not 600 700" % (mode, modes))
    # a VM that answers after the tool gave up: the agent appends to
    # reply= (fopen "a", which creates a missing file): nothing is left
    try:
        with open(reply, "a") as f:
            f.write("jinst: late\n")
        fail("%s: the agent could still write %s after the tool's exit" % (mode, reply))
        os.unlink(reply)
    except FileNotFoundError:
        pass


def main():
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
        return 0
    jinst, work = (os.path.abspath(p) for p in sys.argv[1:3])
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    for mode in ("silent", "partial", "whole", "other", "none"):
        run_case(jinst, work, mode)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
