#!/usr/bin/env python3
"""`jinst instrument` keeps every entry's records: zip_headers.py over real
jars and over archives of the shapes real jars come in.

    headers_check.py JINST WORK [JAR...]

The JARs (Debian's, each as its packager's tool wrote it) and three made
here from the classes of the first: one written by the JDK's `jar` (data
descriptors with their signature, the 0xCAFE extra field, the UTF-8 flag),
one through a stream by Python with Zip64 forced (descriptors with 8-byte
sizes, Zip64 fields in every record), and one with extra fields of its own
(Info-ZIP's extended time and Unicode path fields, an unknown id) in
either record, entry comments, an archive comment, and a nested jar that
changes. All go through `jinst instrument --coverage -j 2` into WORK/out;
every record of every entry must be the input's but for CRC, sizes and
offsets (zip_headers.py), and a second run at -j 1 must give the same
bytes.
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zip_headers  # noqa: E402


class Stream(io.RawIOBase):
    """A file Python's zipfile cannot seek in: it writes data descriptors."""

    def __init__(self, f):
        self.f = f

    def writable(self):
        return True

    def write(self, b):
        return self.f.write(b)


def classes_of(jar, n=12):
    with zipfile.ZipFile(jar) as z:
        return [(i.filename, z.read(i)) for i in z.infolist() if i.filename.endswith(".class")][:n]


def with_jar_tool(work, classes):
    tree = os.path.join(work, "tree")
    for name, data in classes:
        os.makedirs(os.path.join(tree, os.path.dirname(name)), exist_ok=True)
        open(os.path.join(tree, name), "wb").write(data)
    os.makedirs(os.path.join(tree, "res"), exist_ok=True)
    open(os.path.join(tree, "res", "caf\u00e9.txt"), "w").write("a name beyond ASCII\n")
    out = os.path.join(work, "jar-tool.jar")
    subprocess.run(["jar", "cf", out, "-C", tree, "."], check=True)
    return out


def zip64_stream(work, classes):
    out = os.path.join(work, "zip64-stream.jar")
    with open(out, "wb") as f, zipfile.ZipFile(Stream(f), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in classes:
            with z.open(name, "w", force_zip64=True) as e:
                e.write(data)
        with z.open("res/text.txt", "w", force_zip64=True) as e:
            e.write(b"text\n")
    return out


def extras(work, classes):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in classes[:3]:
            z.writestr(name, data)
    out = os.path.join(work, "extras.jar")
    ut = struct.pack("<HHBI", 0x5455, 5, 1, 1500000000)
    unknown = struct.pack("<HH", 0x7a7a, 3) + b"xyz"
    with zipfile.ZipFile(out, "w") as z:
        for k, (name, data) in enumerate(classes):
            i = zipfile.ZipInfo(name, (2015, 7, 14, 2, 40, 0))
            i.compress_type = zipfile.ZIP_STORED if k % 3 == 2 else zipfile.ZIP_DEFLATED
            i.extra = ut + (unknown if k % 2 else b"")
            i.comment = b"entry %d" % k
            i.create_system = 3
            i.external_attr = 0o100644 << 16
            z.writestr(i, data)
        i = zipfile.ZipInfo("lib/inner.jar", (2016, 1, 1, 0, 0, 0))
        i.compress_type = zipfile.ZIP_STORED
        i.extra = unknown
        z.writestr(i, inner.getvalue())
        z.comment = b"the archive's comment"
    return out


def run(jinst, inputs, out, jobs):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([jinst, "instrument", "--coverage", "--quiet", "-j", str(jobs)] + inputs + ["-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: jinst instrument exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    jinst, work = sys.argv[1:3]
    jars = [j for j in sys.argv[3:] if os.path.isfile(j)]
    if not jars:
        print("SKIP: none of the jars is installed")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    classes = classes_of(jars[0])
    made = [with_jar_tool(work, classes), zip64_stream(work, classes), extras(work, classes)]
    # Copies, so the inputs have distinct names (several are links to one jar).
    inputs = []
    for j in jars:
        inputs.append(os.path.join(work, os.path.basename(j)))
        shutil.copyfile(j, inputs[-1])
    inputs += made
    out = os.path.join(work, "out")
    run(jinst, inputs, out, 2)
    pairs = [x for j in inputs for x in (j, os.path.join(out, os.path.basename(j)))]
    problems, counts = [], {"entries": 0, "as stored": 0, "changed": 0, "added": 0}
    for a, b in zip(pairs[::2], pairs[1::2]):
        zip_headers.compare(os.path.basename(a), open(a, "rb").read(), open(b, "rb").read(), problems, counts)
    again = os.path.join(work, "again")
    run(jinst, inputs, again, 1)
    for j in inputs:
        name = os.path.basename(j)
        if open(os.path.join(out, name), "rb").read() != open(os.path.join(again, name), "rb").read():
            problems.append(f"{name}: -j 1 and -j 2 wrote different bytes")
    for p in problems[:40]:
        print("DIFF", p)
    print(f"{len(inputs)} archives ({len(made)} made here): {counts['entries']} entries, {counts['as stored']} "
          f"as stored, {counts['changed']} changed; {len(problems)} differences")
    if counts["changed"] < len(inputs):
        print("FAIL: too few entries changed for the comparison to mean anything")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
