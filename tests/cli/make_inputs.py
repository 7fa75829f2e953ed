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
