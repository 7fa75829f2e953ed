#!/usr/bin/env python3
"""The rules every jinst command that writes follows (issue 15), held
against real archives, folders and classes built here at test time.

    writer_check.py JINST JAVAC CLASSES WORKDIR COMMAND [ARGS...]

COMMAND [ARGS...] is the command under test with its options, e.g.
`rewrite --frames=recompute --classpath CLASSES` or `instrument --coverage`;
the script adds INPUT... -o OUTPUT (and -j, --force where a case needs
them). CLASSES is tests/data/classes/main: its jinsttest/Features.class is
one that `rewrite --frames=recompute` changes, so every archive here holds
it, and a command that changes every class changes it too.

Each case builds its inputs, runs the command and checks what it wrote:
nested archives (stored and deflated, two levels), multi-release classes,
signed jars (keytool and jarsigner), an empty archive, zip64 (more than
65535 entries and a zip64 extra field), corrupt archives, folders (links, an
empty folder, an archive inside), duplicate entry names, unwritable outputs,
a full disk (a 1 MiB tmpfs, skipped when mount is not permitted), --force,
-o naming an input or a place inside one, an input inside the output, a run
killed part-way, determinism (-j1 against -j4), every output file fsync'd
before its rename (under strace, skipped without it), and that every entry keeps
its order, name, time, method, attributes, extra fields and comments, every
non-class entry its stored bytes. Entries the command adds under
META-INF/jinst/ (instrument's method table, at the root, WEB-INF/classes/
and BOOT-INF/classes/) and its run's classes
(PKG/$JinstRunKEY.class, instrument --trace) must come last; they are not
compared. The inputs are hashed before and checked
after every run: jinst never writes them.
"""
import hashlib
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
import warnings
import zipfile

JINST, JAVAC, CLASSES, WORK = [os.path.abspath(a) if os.sep in a else a for a in sys.argv[1:5]]
COMMAND = sys.argv[5:]
FEATURES = os.path.join(CLASSES, "jinsttest", "Features.class")
# Where a command may add entries of its own (the method table), and the
# run's classes instrument --trace adds beside the classes.
ADDED = "META-INF/jinst/"
RUN_CLASS = "$JinstRun"
# What marks a folder output as jinst's: --force replaces only such a folder
# (or an empty one).
MARK = ".jinst-output"
T2001 = 981173106  # 2001-02-03 04:05:06 UTC


# Class roots inside an archive, which get instrument's method table too.
CLASS_ROOTS = ("", "WEB-INF/classes/", "BOOT-INF/classes/")


def added_name(n):
    return any(n.startswith(r + ADDED) for r in CLASS_ROOTS) or (
        os.path.basename(n).startswith(RUN_CLASS) and n.endswith(".class"))

# Extra fields libzip interprets itself and writes its own way (archive.h).
LIBZIP_FIELDS = {0x0001, 0x7075, 0x6375}
T0 = (2004, 5, 6, 7, 8, 10)

failures = []
inputs_seen = {}


def check(cond, case, what):
    if not cond:
        failures.append("%s: %s" % (case, what))
        print("FAIL %s: %s" % (case, what))
    return cond


def sha(path):
    if os.path.isdir(path):
        h = hashlib.sha256()
        for root, dirs, files in sorted(os.walk(path)):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(root, f)
                h.update(os.path.relpath(p, path).encode())
                h.update(b"L" + os.readlink(p).encode() if os.path.islink(p) else open(p, "rb").read())
        return h.hexdigest()
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def run(case, ins, out, *extra, expect_written=True, jobs="2"):
    """Runs the command; checks that the inputs are untouched."""
    for i in ins:
        inputs_seen.setdefault(i, sha(i))
    args = [JINST] + COMMAND + list(extra) + ["-j", jobs] + list(ins) + ["-o", out]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, TZ="Europe/Paris"))
    for i in ins:
        check(sha(i) == inputs_seen[i], case, "the input %s changed" % i)
    check(r.returncode in (0, 1, 2) and "Sanitizer" not in r.stderr, case, "exit %d: %s" % (
        r.returncode, r.stderr[-600:]))
    folder = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(folder):
        left = [n for n in os.listdir(folder) if n.startswith(".jinst-tmp.")]
        check(not left, case, "temporaries left beside the output: %s" % left)
    if expect_written is not None:
        written = r.returncode in (0, 1) and os.path.exists(out) and "not written" not in r.stderr
        check(written == expect_written, case, "%s (exit %d): %s" % (
            "not written" if expect_written else "written", r.returncode, (r.stderr + r.stdout)[-600:]))
    return r


# ---- building inputs -------------------------------------------------------------------------


def compile_classes():
    src = os.path.join(WORK, "src", "app")
    os.makedirs(src)
    open(os.path.join(src, "Main.java"), "w").write(
        "package app;\n"
        "public class Main {\n"
        "  public static void main(String[] a) { System.out.println(new Helper().greet(a.length > 0 ? a[0] : \"x\")); }\n"
        "}\n"
        "class Helper implements Shape {\n"
        "  String greet(String s) { StringBuilder b = new StringBuilder(); for (int i = 0; i < 3; i++) b.append(s); return b.toString(); }\n"
        "  public double area() { return 2.0; }\n"
        "}\n"
        "interface Shape { double area(); }\n")
    out = os.path.join(WORK, "classes")
    subprocess.run([JAVAC, "--release", "8", "-d", out, os.path.join(src, "Main.java")], check=True)
    classes = {}
    for root, _, files in os.walk(out):
        for f in files:
            p = os.path.join(root, f)
            classes[os.path.relpath(p, out)] = open(p, "rb").read()
    for root, _, files in os.walk(CLASSES):
        for f in files:
            if f.endswith(".class"):
                p = os.path.join(root, f)
                classes[os.path.relpath(p, CLASSES)] = open(p, "rb").read()
    return dict(sorted(classes.items()))


def zinfo(name, method=zipfile.ZIP_DEFLATED, when=T0, extra=b"", comment=b"", mode=0o100644):
    i = zipfile.ZipInfo(name, when)
    i.compress_type = method
    i.extra = extra
    i.comment = comment
    i.external_attr = mode << 16
    i.create_system = 3
    return i


def make_zip(path, entries, comment=b""):
    """entries: (ZipInfo, bytes) in order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are meant
        with zipfile.ZipFile(path, "w") as z:
            z.comment = comment
            for info, data in entries:
                z.writestr(info, data)
    return path


def jar_entries(classes, prefix=""):
    """A jar's entries: folders, a manifest, resources with extra fields and comments, the classes."""
    e = [(zinfo("META-INF/", zipfile.ZIP_STORED, extra=b"\xfe\xca\x00\x00", mode=0o40755), b""),
         (zinfo("META-INF/MANIFEST.MF", when=(2002, 3, 4, 5, 6, 8)), b"Manifest-Version: 1.0\r\nMain-Class: app.Main\r\n\r\n"),
         (zinfo("res/stored.bin", zipfile.ZIP_STORED, when=(2003, 4, 5, 6, 7, 10), comment=b"an entry comment",
                extra=b"\x34\x12\x03\x00abc", mode=0o100640), bytes(range(256)) * 4),
         (zinfo("res/text.txt", extra=b"UT\x05\x00\x01\x00\x00\x00\x40"), b"some text\n" * 50)]
    for name, data in classes.items():
        e.append((zinfo(prefix + name), data))
    # In the hour skipped in spring in Paris (the command runs with TZ=Europe/Paris).
    e.append((zinfo("res/gap.txt", when=(2004, 3, 28, 2, 30, 0)), b"a time that does not exist there\n"))
    e.append((zinfo("res/last.txt", when=(2005, 6, 7, 8, 9, 14)), b"the last entry\n"))
    return e


# ---- reading outputs ----------------------------------------------------------------------


def fields(extra):
    out, i = [], 0
    while i + 4 <= len(extra):
        fid, n = struct.unpack("<HH", extra[i:i + 4])
        if fid not in LIBZIP_FIELDS:
            out.append((fid, extra[i + 4:i + 4 + n]))
        i += 4 + n
    return out


def entries(data):
    """Every entry of the zip in data with all that must be kept."""
    import io
    z = zipfile.ZipFile(io.BytesIO(data))
    res = []
    for i in z.infolist():
        off = i.header_offset
        n, m = struct.unpack("<HH", data[off + 26:off + 30])
        local_extra = data[off + 30 + n:off + 30 + n + m]
        start = off + 30 + n + m
        res.append(dict(name=i.orig_filename, method=i.compress_type, time=i.date_time, crc=i.CRC,
                        attr=i.external_attr, system=i.create_system, comment=i.comment,
                        extra=fields(i.extra), local=fields(local_extra),
                        raw=data[start:start + i.compress_size], bytes=z.read(i)))
    return res, z.comment


def is_archive(name):
    return name.lower().endswith((".jar", ".war", ".ear", ".zip"))


def opens(data):
    import io
    try:
        zipfile.ZipFile(io.BytesIO(data))
        return True
    except zipfile.BadZipFile:
        return False


def signature_file(name):
    base = name[9:] if name.upper().startswith("META-INF/") else None
    return base is not None and "/" not in base and (
        base.upper().startswith("SIG-") or base.upper().endswith((".SF", ".RSA", ".DSA", ".EC")))


def same_jar(case, a, b, where="", signed=False):
    """b is a's mirror: same entries, order, metadata; non-class entries as stored."""
    ea, ca = entries(a)
    eb, cb = entries(b)
    if signed:
        ea = [e for e in ea if not signature_file(e["name"])]
    # What the command adds (instrument's method table) comes last.
    known = {e["name"] for e in ea}
    added = [e["name"] for e in eb if e["name"] not in known and added_name(e["name"])]
    check([e["name"] for e in eb[len(eb) - len(added):]] == added, case, "%sadded entries not last" % where)
    eb = [e for e in eb if e["name"] not in added]
    check([e["name"] for e in ea] == [e["name"] for e in eb], case,
          "%sentries differ: %s" % (where, sorted({e["name"] for e in ea} ^ {e["name"] for e in eb})[:5]))
    check(ca == cb, case, "%sarchive comment %r became %r" % (where, ca, cb))
    for x, y in zip(ea, eb):
        name = where + x["name"]
        for k in ("method", "time", "attr", "system", "comment", "extra", "local"):
            check(x[k] == y[k], case, "%s: %s %r became %r" % (name, k, x[k], y[k]))
        if is_archive(x["name"]) and opens(x["bytes"]):
            same_jar(case, x["bytes"], y["bytes"], name + "!", signed)
        elif signed and x["name"].upper() == "META-INF/MANIFEST.MF":
            pass
        elif not x["name"].endswith(".class"):
            check(x["raw"] == y["raw"] and x["crc"] == y["crc"], case, "%s: stored bytes differ" % name)


def class_count(data):
    n = 0
    for e in entries(data)[0]:
        if e["name"].endswith(".class"):
            n += 1
        elif is_archive(e["name"]) and opens(e["bytes"]):
            n += class_count(e["bytes"])
    return n


def summary_classes(out):
    for line in out.splitlines():
        if " classes: " in line:
            return int(line.split(" classes: ")[0].split()[-1])
    return -1


# ---- the cases ----------------------------------------------------------------------------------


def case_jar(C):
    src = make_zip(os.path.join(WORK, "plain.jar"), jar_entries(C), b"an archive comment")
    out = os.path.join(WORK, "out", "plain.jar")
    r = run("jar", [src], out)
    if check(os.path.exists(out), "jar", "no output"):
        data = open(out, "rb").read()
        same_jar("jar", open(src, "rb").read(), data)
        check(summary_classes(r.stdout) == len(C), "jar", "summary counts %d classes of %d: %s" % (
            summary_classes(r.stdout), len(C), r.stdout))
        check("\r" not in r.stderr, "jar", "a progress bar on stderr, which is no terminal")


def case_nested(C):
    inner = make_zip(os.path.join(WORK, "inner.jar"), jar_entries(C))
    deeper = make_zip(os.path.join(WORK, "deeper.jar"),
                      [(zinfo("lib/", zipfile.ZIP_STORED, mode=0o40755), b""),
                       (zinfo("lib/inner.jar", zipfile.ZIP_STORED), open(inner, "rb").read())] + jar_entries(C))
    src = make_zip(os.path.join(WORK, "boot.jar"),
                   [(zinfo("BOOT-INF/lib/inner.jar", zipfile.ZIP_STORED), open(inner, "rb").read()),
                    (zinfo("WEB-INF/lib/deeper.jar"), open(deeper, "rb").read()),
                    (zinfo("lib/notreally.jar"), b"PK but not a zip at all"),
                    (zinfo("lib/bad.jar", zipfile.ZIP_STORED), make_bad_nested())] + jar_entries(C, "BOOT-INF/classes/"))
    out = os.path.join(WORK, "out", "boot.jar")
    r = run("nested", [src], out)
    if not check(os.path.exists(out), "nested", "no output"):
        return
    a, b = open(src, "rb").read(), open(out, "rb").read()
    same_jar("nested", a, b)
    check(summary_classes(r.stdout) == class_count(a), "nested", "summary counts %d classes, the archives hold %d" % (
        summary_classes(r.stdout), class_count(a)))
    check("boot.jar!lib/bad.jar!p/Bad.class" in r.stderr, "nested",
          "no warning names the bad class two levels down: " + r.stderr[-400:])
    check("lib/notreally.jar" in r.stderr, "nested", "no warning for an entry named like an archive")


def make_bad_nested():
    import io
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr(zinfo("p/Bad.class"), b"\xca\xfe\xba\xbe not a class")
        z.writestr(zinfo("p/Good.class"), open(FEATURES, "rb").read())
    return b.getvalue()


def case_multi_release(C):
    e = jar_entries(C)
    e.insert(2, (zinfo("META-INF/versions/11/jinsttest/Features.class"), open(FEATURES, "rb").read()))
    e.insert(3, (zinfo("META-INF/versions/17/p/Bad.class"), b"\xca\xfe\xba\xbe broken"))
    e[1] = (e[1][0], b"Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n")
    src = make_zip(os.path.join(WORK, "mr.jar"), e)
    out = os.path.join(WORK, "out", "mr.jar")
    r = run("multi-release", [src], out)
    if check(os.path.exists(out), "multi-release", "no output"):
        same_jar("multi-release", open(src, "rb").read(), open(out, "rb").read())
        check(summary_classes(r.stdout) == len(C) + 2, "multi-release", "versioned classes not counted: " + r.stdout)
        check("mr.jar!META-INF/versions/17/p/Bad.class" in r.stderr and "copied unchanged" in r.stderr,
              "multi-release", "no warning for the bad versioned class: " + r.stderr[-300:])


def case_signed(C):
    src = make_zip(os.path.join(WORK, "signed.jar"), jar_entries(C))
    ks = os.path.join(WORK, "keystore")
    subprocess.run(["keytool", "-genkeypair", "-keystore", ks, "-storepass", "secret", "-keypass", "secret",
                    "-alias", "k", "-keyalg", "RSA", "-dname", "CN=jinst test", "-validity", "2"],
                   check=True, capture_output=True)
    subprocess.run(["jarsigner", "-keystore", ks, "-storepass", "secret", src, "k"], check=True, capture_output=True)
    out = os.path.join(WORK, "out", "signed.jar")
    r = run("signed", [src], out)
    if not check(os.path.exists(out), "signed", "no output"):
        return
    a, b = open(src, "rb").read(), open(out, "rb").read()
    same_jar("signed", a, b, signed=True)
    names = [e["name"] for e in entries(b)[0]]
    check(not any(signature_file(n) for n in names), "signed", "signature files kept: %s" % names[:6])
    with zipfile.ZipFile(out) as z:
        mf = z.read("META-INF/MANIFEST.MF")
    with zipfile.ZipFile(src) as z:
        main = z.read("META-INF/MANIFEST.MF").split(b"\r\n\r\n")[0]
    check(b"-Digest" not in mf, "signed", "digests left in the manifest")
    check(mf.startswith(main + b"\r\n\r\n"), "signed", "the main attributes changed: %r" % mf[:200])
    check(r.stderr.count("signed.jar: signed") == 1, "signed", "not one warning naming the jar: " + r.stderr[-300:])
    v = subprocess.run(["jarsigner", "-verify", out], capture_output=True, text=True)
    check("unsigned" in v.stdout, "signed", "jarsigner does not see an unsigned jar: " + v.stdout[-200:])


def case_empty(C):
    src = os.path.join(WORK, "empty.zip")
    open(src, "wb").write(b"PK\x05\x06" + b"\x00" * 16 + struct.pack("<H", 9) + b"a comment")
    out = os.path.join(WORK, "out", "empty.zip")
    r = run("empty", [src], out)
    if check(os.path.exists(out), "empty", "no output"):
        with zipfile.ZipFile(out) as z:
            check(z.infolist() == [] and z.comment == b"a comment", "empty", "not an empty zip with its comment")
    check(r.returncode == 0, "empty", "exit %d" % r.returncode)


def case_zip64(C):
    e = jar_entries(C)
    e += [(zinfo("many/%05d" % i, zipfile.ZIP_STORED), b"") for i in range(66000)]
    src = make_zip(os.path.join(WORK, "zip64.jar"), e)
    with zipfile.ZipFile(src, "a") as z:  # an entry with a zip64 extra field
        with z.open(zinfo("forced/zip64.bin", zipfile.ZIP_DEFLATED), "w", force_zip64=True) as f:
            f.write(b"zip64 " * 1000)
    out = os.path.join(WORK, "out", "zip64.jar")
    run("zip64", [src], out)
    if check(os.path.exists(out), "zip64", "no output"):
        same_jar("zip64", open(src, "rb").read(), open(out, "rb").read())


def case_corrupt(C):
    good = open(make_zip(os.path.join(WORK, "good.jar"), jar_entries(C)), "rb").read()
    bad_crc = bytearray(good)
    with zipfile.ZipFile(os.path.join(WORK, "good.jar")) as z:
        i = z.getinfo("jinsttest/Features.class")
    n, m = struct.unpack("<HH", good[i.header_offset + 26:i.header_offset + 30])
    bad_crc[i.header_offset + 30 + n + m + 5] ^= 0xFF
    for name, data in (("truncated.jar", good[:len(good) // 2]), ("crc.jar", bytes(bad_crc)),
                       ("garbage.jar", b"PK\x03\x04" + bytes(200))):
        src = os.path.join(WORK, name)
        open(src, "wb").write(data)
        out = os.path.join(WORK, "out", name)
        r = run("corrupt " + name, [src], out, expect_written=False)
        check(r.returncode != 0 and name in r.stderr, "corrupt " + name, "no error naming it: " + r.stderr[-300:])
    # The folders made for an output that is not written are removed again.
    out = os.path.join(WORK, "out", "made", "deeper", "crc.jar")
    run("corrupt into new folders", [os.path.join(WORK, "crc.jar")], out, expect_written=False)
    check(not os.path.exists(os.path.join(WORK, "out", "made")), "corrupt", "the folders made for it are left")
    run("good into new folders", [os.path.join(WORK, "good.jar")], out)
    # A corrupt archive among good inputs: nothing at all is written.
    out = os.path.join(WORK, "out", "several")
    run("corrupt among others", [os.path.join(WORK, "good.jar"), os.path.join(WORK, "crc.jar")], out,
        expect_written=False)


def case_folder(C):
    src = os.path.join(WORK, "folder")
    for name, data in C.items():
        p = os.path.join(src, "classes", name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").write(data)
    os.makedirs(os.path.join(src, "empty", "deeper"))
    open(os.path.join(src, "readme.txt"), "wb").write(b"read me\n")
    os.chmod(os.path.join(src, "readme.txt"), 0o640)
    os.symlink("readme.txt", os.path.join(src, "link.txt"))
    os.makedirs(os.path.join(src, "lib"))
    shutil.copy(os.path.join(WORK, "inner.jar"), os.path.join(src, "lib", "inner.jar"))
    # Files and folders inside keep their times (a resource, a class, a jar,
    # a folder), as an archive's entries do.
    dated = ["readme.txt", os.path.join("classes", "jinsttest", "Features.class"), os.path.join("lib", "inner.jar"),
             os.path.join("empty", "deeper"), "empty"]
    for name in dated:
        os.utime(os.path.join(src, name), (T2001, T2001))
    out = os.path.join(WORK, "out", "folder")
    r = run("folder", [src], out)
    if not check(os.path.isdir(out), "folder", "no output folder"):
        return
    for name in dated:
        check(os.stat(os.path.join(out, name)).st_mtime == T2001, "folder", "%s did not keep its time" % name)
    check(os.path.isfile(os.path.join(out, MARK)), "folder", "no %s in the output folder" % MARK)
    listing = lambda d: sorted(os.path.relpath(os.path.join(r_, f), d) for r_, ds, fs in os.walk(d) for f in fs + ds)
    mine = [p for p in listing(out) if p not in listing(src) and (ADDED.startswith(p + "/") or added_name(p)
                                                                  or p == MARK)]
    check(listing(src) == [p for p in listing(out) if p not in mine], "folder", "the layouts differ: %s" % (
        set(listing(src)) ^ set(listing(out))))
    check(open(os.path.join(out, "readme.txt"), "rb").read() == b"read me\n", "folder", "a file changed")
    check(os.stat(os.path.join(out, "readme.txt")).st_mode & 0o777 == 0o640, "folder", "a file's mode changed")
    check(os.path.islink(os.path.join(out, "link.txt")) and os.readlink(os.path.join(out, "link.txt")) == "readme.txt",
          "folder", "the link is not a link to the same target")
    same_jar("folder", open(os.path.join(src, "lib", "inner.jar"), "rb").read(),
             open(os.path.join(out, "lib", "inner.jar"), "rb").read(), "lib/inner.jar!")
    check(summary_classes(r.stdout) == 2 * len(C), "folder", "classes of the folder and its jar not all counted: "
          + r.stdout)


def case_links(C):
    """Links in a folder input: one inside the input stays a link (to the
    output's copy); one to a file outside is read through, its content
    mirrored as a file's under the link's name (Debian's class paths link
    into /usr/share/java); one to a folder outside, or to nothing, stays a
    link, with a warning that names it."""
    src = os.path.join(WORK, "links")
    os.makedirs(os.path.join(src, "app"))
    shutil.copy(FEATURES, os.path.join(src, "app", "Own.class"))
    os.symlink("Own.class", os.path.join(src, "app", "Inside.class"))
    os.symlink(FEATURES, os.path.join(src, "app", "Features.class"))
    os.symlink(os.path.join("..", "..", "inner.jar"), os.path.join(src, "app", "up.jar"))
    os.symlink(os.path.join(WORK, "inner.jar"), os.path.join(src, "inner.jar"))
    os.symlink(CLASSES, os.path.join(src, "outside"))
    os.symlink("nothing-here", os.path.join(src, "dangling"))
    out = os.path.join(WORK, "out", "links")
    r = run("links", [src], out)
    if not check(os.path.isdir(out), "links", "no output folder"):
        return
    check(os.path.islink(os.path.join(out, "app", "Inside.class")) and
          os.readlink(os.path.join(out, "app", "Inside.class")) == "Own.class", "links",
          "a link inside the input is not kept as it was")
    feat = os.path.join(out, "app", "Features.class")
    check(not os.path.islink(feat) and os.path.isfile(feat), "links", "a link to a class outside is still a link")
    if os.path.isfile(feat):
        orig = open(FEATURES, "rb").read()
        check((open(feat, "rb").read() != orig) == (open(os.path.join(out, "app", "Own.class"), "rb").read() != orig),
              "links", "the class a link leads to was not transformed as its copy in the folder was")
    for name in (os.path.join("app", "up.jar"), "inner.jar"):
        p = os.path.join(out, name)
        if check(not os.path.islink(p) and os.path.isfile(p), "links", "%s is still a link" % name):
            same_jar("links", open(os.path.join(WORK, "inner.jar"), "rb").read(), open(p, "rb").read(), name + "!")
    inner = class_count(open(os.path.join(WORK, "inner.jar"), "rb").read())
    check(summary_classes(r.stdout) == 2 + 2 * inner, "links", "the classes behind the links not all counted: "
          + r.stdout)
    check(os.path.islink(os.path.join(out, "outside")) and os.path.islink(os.path.join(out, "dangling")), "links",
          "a link to a folder outside or to nothing is not kept as a link")
    for name in ("outside", "dangling"):
        check(any("warning" in l and os.path.join(src, name) in l for l in r.stderr.splitlines()), "links",
              "no warning names the link %s: %s" % (name, r.stderr[-400:]))


def case_duplicates(C):
    e = jar_entries(C)
    e.append((zinfo("res/text.txt"), b"the second res/text.txt\n"))
    src = make_zip(os.path.join(WORK, "dup.jar"), e)
    out = os.path.join(WORK, "out", "dup.jar")
    # Both kept, in their order (the JVM loads the last of a name, in the
    # output as in the input), with a warning that names the entry.
    r = run("duplicates", [src], out)
    if os.path.exists(out):
        a = entries(open(src, "rb").read())[0]
        b = entries(open(out, "rb").read())[0]
        texts = [x["bytes"] for x in b if x["name"] == "res/text.txt"]
        check(texts == [x["bytes"] for x in a if x["name"] == "res/text.txt"] and len(texts) == 2, "duplicates",
              "the two entries of one name are not both there, in their order")
        check([x["name"] for x in b][:len(a)] == [x["name"] for x in a], "duplicates", "the entries' order changed")
        check("warning" in r.stderr and "res/text.txt" in r.stderr and "dup.jar" in r.stderr, "duplicates",
              "no warning naming the jar and the entry: " + r.stderr[-300:])


def case_unwritable(C):
    src = os.path.join(WORK, "plain.jar")
    blocker = os.path.join(WORK, "a-file")
    open(blocker, "w").write("not a folder")
    r = run("unwritable (a file as folder)", [src], os.path.join(blocker, "out.jar"), expect_written=False)
    check(r.returncode != 0 and "a-file" in r.stderr, "unwritable", "no error naming the path: " + r.stderr[-200:])
    ro = os.path.join(WORK, "read-only")
    os.makedirs(ro)
    os.chmod(ro, 0o555)
    if not os.access(ro, os.W_OK):
        run("unwritable (read-only folder)", [src], os.path.join(ro, "out.jar"), expect_written=False)
        os.chmod(ro, 0o755)
        return
    # Root writes into any folder: a read-only file system stops it.
    os.chmod(ro, 0o755)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro], capture_output=True, text=True)
    if m.returncode != 0:
        print("SKIP unwritable (read-only): root writes any folder, and mount is refused (%s)" % m.stderr.strip())
        return
    try:
        for name, ins in (("jar", [src]), ("folder", [os.path.join(WORK, "folder")])):
            r = run("unwritable (read-only file system) " + name, ins, os.path.join(ro, "out"), expect_written=False)
            check("Read-only file system" in r.stderr, "unwritable", "no message says why: " + r.stderr[-200:])
    finally:
        subprocess.run(["umount", ro])


def case_full_disk(C):
    mnt = os.path.join(WORK, "full")
    os.makedirs(mnt)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], capture_output=True, text=True)
    if m.returncode != 0:
        print("SKIP full disk: mount of a 1 MiB tmpfs not permitted (%s)" % m.stderr.strip())
        return
    try:
        e = jar_entries(C) + [(zinfo("res/random.bin", zipfile.ZIP_STORED), random.Random(1).randbytes(3 << 20))]
        src = make_zip(os.path.join(WORK, "big.jar"), e)
        big = os.path.join(WORK, "big-folder")
        shutil.copytree(os.path.join(WORK, "folder"), big, symlinks=True)
        open(os.path.join(big, "random.bin"), "wb").write(random.Random(2).randbytes(3 << 20))
        for name, ins in (("big.jar", [src]), ("big-folder", [big])):
            r = run("full disk " + name, ins, os.path.join(mnt, name), expect_written=False)
            check("No space left on device" in r.stderr, "full disk " + name, "no message says why: "
                  + r.stderr[-300:])
            check(os.listdir(mnt) == [], "full disk " + name, "left on the disk: %s" % os.listdir(mnt))
    finally:
        subprocess.run(["umount", mnt])


def case_force(C):
    src = os.path.join(WORK, "plain.jar")
    out = os.path.join(WORK, "out", "exists.jar")
    open(out, "wb").write(b"an older output")
    r = run("force (without)", [src], out, expect_written=None)
    check(r.returncode != 0 and "exists.jar" in r.stderr and "--force" in r.stderr, "force", "no error names it: "
          + r.stderr[-200:])
    check(open(out, "rb").read() == b"an older output", "force", "the existing output changed without --force")
    run("force", [src], out, "--force")
    check(open(out, "rb").read() == open(os.path.join(WORK, "out", "plain.jar"), "rb").read(), "force",
          "--force did not replace the output with the same bytes")
    # A file replaced by a folder, a folder by a folder.
    d = os.path.join(WORK, "out", "was-a-file")
    open(d, "wb").write(b"a file")
    run("force a folder over a file", [os.path.join(WORK, "folder")], d, "--force")
    check(os.path.isdir(d) and sha(d) == sha(os.path.join(WORK, "out", "folder")), "force", "the file was not replaced")
    os.makedirs(os.path.join(d, "stale"))
    run("force a folder over a folder", [os.path.join(WORK, "folder")], d, "--force")
    check(not os.path.exists(os.path.join(d, "stale")), "force", "the old folder's contents survived")
    # Never a FIFO, a device, a link, nor a folder jinst did not write; an
    # empty folder, yes.
    folder = [os.path.join(WORK, "folder")]
    fifo = os.path.join(WORK, "out", "fifo")
    os.mkfifo(fifo)
    refused = [("a FIFO", fifo, [src], lambda: os.stat(fifo).st_mode & 0o170000 == 0o010000)]
    dev = os.path.join(WORK, "out", "null-device")
    try:
        os.mknod(dev, 0o020666, os.makedev(1, 3))
        refused.append(("a device", dev, [src], lambda: os.stat(dev).st_mode & 0o170000 == 0o020000))
    except PermissionError:
        print("SKIP force a device: mknod not permitted")
    link = os.path.join(WORK, "out", "link.jar")
    os.symlink(out, link)
    refused.append(("a link", link, [src], lambda: os.path.islink(link) and os.readlink(link) == out))
    notes = os.path.join(WORK, "out", "notes")
    os.makedirs(notes)
    open(os.path.join(notes, "notes.txt"), "w").write("important")
    # (One file into a folder goes into it by its name: the folder stays.)
    refused.append(("a folder of notes", notes, [], lambda: os.listdir(notes) == ["notes.txt"]))
    for name, path, file_in, same in refused:
        for ins in (file_in, folder):
            if not ins:
                continue
            r = run("force over " + name, ins, path, "--force", expect_written=None)
            check(r.returncode != 0 and path in r.stderr and "not written" not in r.stderr and same(), "force",
                  "%s was not refused, or changed: %s" % (name, r.stderr[-300:]))
    check("jinst did not write" in r.stderr, "force", "the refusal of a folder does not say why: " + r.stderr[-300:])
    empty = os.path.join(WORK, "out", "was-empty")
    os.makedirs(empty)
    run("force an empty folder", folder, empty, "--force")
    # One file into an existing folder goes in by its own name.
    d = os.path.join(WORK, "out", "a-folder")
    os.makedirs(d)
    run("a file into a folder", [src], os.path.join(d, "plain.jar"), expect_written=None)
    run("a file into a folder", [src], d, "--force", expect_written=None)
    check(os.path.isfile(os.path.join(d, "plain.jar")), "force", "a file given a folder as -o did not go into it")


def case_refusals(C):
    src = os.path.join(WORK, "plain.jar")
    folder = os.path.join(WORK, "folder")
    for name, ins, out in (("-o the input", [src], src),
                           ("-o the input by another path", [src], os.path.join(WORK, ".", "out", "..", "plain.jar")),
                           ("-o inside the input folder", [folder], os.path.join(folder, "out")),
                           ("an input inside the output", [os.path.join(folder, "readme.txt"), src], folder)):
        r = run(name, ins, out, "--force", expect_written=None)
        check(r.returncode != 0 and ("input" in r.stderr), name, "not refused with a message: " + r.stderr[-200:])
    here = os.path.join(WORK, "out", "here")
    os.makedirs(os.path.join(here, "kept"))
    r = subprocess.run([JINST] + COMMAND + [folder, "-o", "..", "--force"], capture_output=True, text=True, cwd=here)
    check(r.returncode != 0 and "current folder" in r.stderr and os.path.isdir(os.path.join(here, "kept")),
          "-o a folder above the current one", r.stderr[-200:])
    r = subprocess.run([JINST] + COMMAND + [src, "-o"], capture_output=True, text=True)
    check(r.returncode == 2 and "-o needs" in r.stderr, "-o without a value", r.stderr[-200:])
    r = subprocess.run([JINST] + COMMAND + [src, os.path.join(WORK, "inner.jar"), os.path.join(WORK, "src", "..",
                        "inner.jar"), "-o", os.path.join(WORK, "out", "two")], capture_output=True, text=True)
    check(r.returncode != 0 and "name" in r.stderr, "two inputs of one name", r.stderr[-200:])


def case_determinism(C):
    src = os.path.join(WORK, "boot.jar")
    outs = []
    for jobs in ("1", "4"):
        out = os.path.join(WORK, "out", "det-%s.jar" % jobs)
        run("determinism", [src], out, jobs=jobs)
        outs.append(open(out, "rb").read() if os.path.exists(out) else b"")
    check(outs[0] == outs[1] and outs[0], "determinism", "-j1 and -j4 give different bytes")
    dirs = []
    for jobs in ("1", "4"):
        out = os.path.join(WORK, "out", "det-%s" % jobs)
        run("determinism", [os.path.join(WORK, "folder")], out, jobs=jobs)
        dirs.append(sha(out))
    check(dirs[0] == dirs[1], "determinism", "-j1 and -j4 give different folders")


def case_synced(C):
    """Every output file is fsync'd, through the descriptor that wrote it,
    before the rename that puts it (or the folder holding it) in place:
    strace's record (every thread's) of one input (a file output) and of
    two (a folder)."""
    if not shutil.which("strace"):
        print("SKIP synced: no strace")
        return
    a = make_zip(os.path.join(WORK, "sync-a.jar"), jar_entries(C))
    b = make_zip(os.path.join(WORK, "sync-b.jar"), jar_entries(C, "b/"))
    for ins, out in (([a], os.path.join(WORK, "out", "sync.jar")), ([a, b], os.path.join(WORK, "out", "sync"))):
        log = os.path.join(WORK, "sync.strace")
        args = ["strace", "-f", "-qq", "-o", log, "-e", "trace=openat,fsync,close,rename,renameat2"]
        # LeakSanitizer cannot run under ptrace; the other cases check leaks.
        env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
        r = subprocess.run(args + [JINST] + COMMAND + ["-j", "2"] + ins + ["-o", out], capture_output=True, text=True,
                           env=env)
        case = "synced (%d inputs)" % len(ins)
        if not check(r.returncode == 0, case, "exit %d: %s" % (r.returncode, r.stderr[-600:])):
            continue
        made, open_fds, synced, renamed = [], {}, set(), False
        unfinished = {}  # pid: the start of a call another thread's call interrupted in the log
        for line in open(log):
            pid, call = line.split(None, 1) if line[:1].isdigit() else ("", line)
            # The writer fsyncs on a thread of its own: strace -f splits a
            # call that another thread's interleaves into "CALL(ARGS
            # <unfinished ...>" and "<... NAME resumed>REST".
            if call.rstrip().endswith("<unfinished ...>"):
                unfinished[pid] = call.rstrip()[:-len("<unfinished ...>")].rstrip()
                continue
            if call.startswith("<... ") and pid in unfinished:
                call = unfinished.pop(pid) + call.split("resumed>", 1)[1]
            ret = call.rsplit("=", 1)[-1].split()[0] if "=" in call else ""
            if call.startswith("openat(") and "O_CREAT" in call and ".jinst-tmp." in call and ret.isdigit():
                path = call.split('"')[1]
                made.append(path)
                open_fds[ret] = path
            elif call.startswith("fsync(") and ret == "0":
                synced.add(open_fds.get(call[6:].split(")")[0]))
            elif call.startswith("close("):
                open_fds.pop(call[6:].split(")")[0], None)
            elif call.startswith("rename") and ".jinst-tmp." in call and ret == "0" and not renamed:
                renamed = True
                check(made and all(m in synced for m in made), case, "renamed into place before an fsync of %s" % (
                    [m for m in made if m not in synced] or "anything"))
        # Each input's output, and in a folder of several the mark that it is jinst's.
        check(renamed and len(made) == len(ins) + (len(ins) > 1), case, "%d files made, %s renamed" % (len(made),
                                                                                                     renamed))


def case_killed(C):
    e = jar_entries(C)
    feat = open(FEATURES, "rb").read()
    e += [(zinfo("copies/F%05d.class" % i), feat) for i in range(4000)]
    e += [(zinfo("res/big%d.bin" % i, zipfile.ZIP_STORED), random.Random(i).randbytes(8 << 20)) for i in range(2)]
    src = make_zip(os.path.join(WORK, "large.jar"), e)
    out = os.path.join(WORK, "out", "killed.jar")
    ref = os.path.join(WORK, "out", "killed-ref.jar")
    t = time.monotonic()
    run("killed (reference)", [src], ref)
    took = time.monotonic() - t
    reference = open(ref, "rb").read() if os.path.exists(ref) else None
    open(out, "wb").write(b"the output before")
    killed = 0
    # Later fractions only when every run so far ended first: the reference
    # run's time is this host's at that moment, and a run under less load
    # than it can end before 30% of it.
    for frac in (0.3, 0.7, 0.95, 0.1, 0.03, 0.01):
        if frac < 0.3 and killed:
            break
        inputs_seen.setdefault(src, sha(src))
        p = subprocess.Popen([JINST] + COMMAND + ["--force", src, "-o", out], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(took * frac)
        p.send_signal(signal.SIGKILL)
        rc = p.wait()
        killed += rc == -signal.SIGKILL
        now = open(out, "rb").read()
        check(now in (b"the output before", reference), "killed", "after a kill at %.0f%% the output is neither "
              "the old one nor the whole new one (%d bytes)" % (frac * 100, len(now)))
        check(sha(src) == inputs_seen[src], "killed", "the input changed")
        if now == reference:
            open(out, "wb").write(b"the output before")
    check(killed > 0, "killed", "no run was killed part-way (each ended first); the test proved nothing")
    # The next run removes what the killed ones left.
    run("killed (next run)", [src], out, "--force")
    check(open(out, "rb").read() == reference, "killed", "the next run's output differs from the reference")


def case_stopped(C):
    """A run stopped by SIGINT, SIGTERM or SIGHUP part-way removes its
    temporary (a folder output's is as large as the output), then dies of
    the signal; the output is as it was."""
    src = os.path.join(WORK, "large.jar")
    ins = [src, os.path.join(WORK, "plain.jar")]
    out = os.path.join(WORK, "out", "stopped")
    t = time.monotonic()
    run("stopped (reference)", ins, out)
    took = time.monotonic() - t
    before = sha(out)
    stopped = 0
    # A second round sooner when every run of the first ended first (as in
    # case_killed).
    for sig, frac in [(s, 0.5) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] + \
            [(s, 0.1) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]:
        if frac < 0.5 and stopped:
            break
        p = subprocess.Popen([JINST] + COMMAND + ["--force"] + ins + ["-o", out], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(took * frac)
        p.send_signal(sig)
        err = p.communicate()[1]
        stopped += p.returncode == -sig
        check(p.returncode in (0, -sig), "stopped", "exit %d after %s: %s" % (p.returncode, sig.name, err[-300:]))
        left = [n for n in os.listdir(os.path.dirname(out)) if n.startswith(".jinst-tmp.")]
        check(not left, "stopped", "left after %s: %s" % (sig.name, left))
        check(sha(out) == before, "stopped", "the output changed after %s" % sig.name)
    check(stopped > 0, "stopped", "no run was stopped part-way (each ended first); the test proved nothing")


def main():
    for mnt in ("full", "read-only"):  # left mounted by a run that was killed
        subprocess.run(["umount", os.path.join(WORK, mnt)], capture_output=True)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(WORK, "out"))
    C = compile_classes()
    for case in (case_jar, case_nested, case_multi_release, case_signed, case_empty, case_zip64, case_corrupt,
                 case_folder, case_links, case_duplicates, case_unwritable, case_full_disk, case_force, case_refusals,
                 case_determinism, case_synced, case_killed, case_stopped):
        before, t = len(failures), time.monotonic()
        case(C)
        print("%s %s (%.1f s)" % ("ok  " if len(failures) == before else "FAIL", case.__name__[5:],
                                  time.monotonic() - t))
    print("writer_check %s: %s" % (" ".join(COMMAND[:1]), "ok" if not failures else "%d failures" % len(failures)))
    sys.exit(1 if failures else 0)


main()
