#!/usr/bin/env python3
"""Builds the inputs of the CLI tests into OUTDIR (see each file below).

padded_switch.class: jinsttest/Features with the padding bytes of its first
switch set to 0xFF. JVMS 6.5 calls them padding; the deep round trip writes
zeros there, so the output is not byte-identical but means the same: the case
that `jinst roundtrip --deep` counts as "equivalent".
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, HERE)
from gen_invalid import ClassFile, insns  # noqa: E402  (the generator's class-file reader)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
src = os.path.join(HERE, "..", "data", "classes", "main", "jinsttest", "Features.class")
cf = ClassFile(src)
b = bytearray(open(src, "rb").read())
done = False
for m in cf.methods:
    if done or not m.attr(b"Code"):
        continue
    c = cf.code(m.name.decode())
    code = b[c["code_off"]:c["code_off"] + c["code_length"]]
    for pc in insns(code):
        if code[pc] in (0xAA, 0xAB) and (pc + 1) % 4:
            for k in range(pc + 1, (pc + 4) & ~3):
                b[c["code_off"] + k] = 0xFF
            done = True
            break
if not done:
    sys.exit("no switch with padding in Features.class")
open(os.path.join(out, "padded_switch.class"), "wb").write(b)

# version70.class: the same class claiming class-file version 70, one past
# what jinst knows: read because its structure parses, with a note.
v = bytearray(open(src, "rb").read())
v[6:8] = (70).to_bytes(2, "big")
open(os.path.join(out, "version70.class"), "wb").write(v)

# Coverage data files (a.cov, b.cov and broken ones), written by covfile.py
# from the format's specification.
import covfile  # noqa: E402
covfile.write_inputs(out)

# badjar/lib.jar: a folder of classes holding a .jar that is no zip.
os.makedirs(os.path.join(out, "badjar"), exist_ok=True)
open(os.path.join(out, "badjar", "lib.jar"), "wb").write(b"not a zip\n")

# cp/app.jar: Features with a manifest whose Class-Path names a jar beside it
# (cp/lib/dep.jar, a copy of the same class), one that is nowhere, and an
# absolute path, continued on a second line, and a Main-Class. dup.jar: Features twice under
# one name, the second a copy with version 70 (the JVM loads the last).
import zipfile  # noqa: E402
import warnings  # noqa: E402
os.makedirs(os.path.join(out, "cp", "lib"), exist_ok=True)
features = open(src, "rb").read()
with zipfile.ZipFile(os.path.join(out, "cp", "app.jar"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nClass-Path: lib/dep.jar missing.jar /nonexist\r\n"
               " ent/orig.jar\r\nMain-Class: jinsttest.Features\r\n\r\n")
    z.writestr("jinsttest/Features.class", features)
with zipfile.ZipFile(os.path.join(out, "cp", "lib", "dep.jar"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("jinsttest/Features.class", features)
with warnings.catch_warnings(), zipfile.ZipFile(os.path.join(out, "dup.jar"), "w", zipfile.ZIP_DEFLATED) as z:
    warnings.simplefilter("ignore")  # the duplicate name is meant
    z.writestr("jinsttest/Features.class", features)
    z.writestr("jinsttest/Features.class", bytes(v))

# huge/Huge.class: version 49 (no frames), m(I)I 9,000 conditional jumps
# long (63,004 bytes of code), which coverage's probes would take past the
# 65,535 of JVMS 4.7.3, and n()I, which takes its probe: the class is
# instrumented with m left alone.
import struct  # noqa: E402


def utf8(s):
    return b"\x01" + struct.pack(">H", len(s)) + s


def method(name, desc, code, max_stack, max_locals):
    attr = struct.pack(">HHI", max_stack, max_locals, len(code)) + code + struct.pack(">HH", 0, 0)
    return struct.pack(">HHHH", 0x0009, name, desc, 1) + struct.pack(">HI", 7, len(attr)) + attr


pool = [utf8(b"huge/Huge"), b"\x07\x00\x01", utf8(b"java/lang/Object"), b"\x07\x00\x03", utf8(b"m"),
        utf8(b"(I)I"), utf8(b"Code"), utf8(b"n"), utf8(b"()I")]
# iload_0; ifeq +6; iinc 1 1: the jump lands on the next iload_0.
m = b"\x03\x3c" + b"\x1a\x99\x00\x06\x84\x01\x01" * 9000 + b"\x1b\xac"
huge = (struct.pack(">IHHH", 0xCAFEBABE, 0, 49, len(pool) + 1) + b"".join(pool) +
        struct.pack(">HHHHH", 0x0021, 2, 4, 0, 0) + struct.pack(">H", 2) +
        method(5, 6, m, 1, 2) + method(8, 9, b"\x04\xac", 1, 0) + struct.pack(">H", 0))
os.makedirs(os.path.join(out, "huge"), exist_ok=True)
open(os.path.join(out, "huge", "Huge.class"), "wb").write(huge)

# data.jmod: what the jmod tool writes, "JM" 1 0 and a zip whose classes
# are under classes/ (jdk.internal.jmod.JmodFile), here Features and Shape.
import io  # noqa: E402
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    for n in ("Features", "Shape"):
        z.write(os.path.join(HERE, "..", "data", "classes", "main", "jinsttest", n + ".class"),
                "classes/jinsttest/" + n + ".class")
open(os.path.join(out, "data.jmod"), "wb").write(b"JM\x01\x00" + buf.getvalue())
