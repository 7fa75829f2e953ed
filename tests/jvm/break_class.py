#!/usr/bin/env python3
"""Breaks one valid class file in a way HotSpot must reject.

  break_class.py HOW IN.class OUT.class [METHOD]
  break_class.py strip-all IN_DIR OUT_DIR

HOW:
  strip-frames   remove the StackMapTable attribute of METHOD (default: the
                 first method that has one). A class of version 50 or later
                 whose method branches then has no frame at a branch target:
                 VerifyError ("Expecting a stackmap frame", JVMS 4.10.1).
  wrong-load     in METHOD, turn the first iload_0 into aload_0: the local
                 holds an int, so the type checker rejects the load
                 (VerifyError "Bad local variable type", JVMS 4.10.1.9).
  future-version set the class-file version to 255.0: no JVM knows it
                 (UnsupportedClassVersionError, JVMS 4.1).
  bad-modifiers  make METHOD (default: the first method) both public and
                 private: ClassFormatError (JVMS 4.6; "Illegal method
                 modifiers"), a check HotSpot makes for boot classes only
                 when verification is on for them.

strip-all: every class file under IN_DIR is copied to the same path under
OUT_DIR with the StackMapTable of every method removed; prints the name of
each class that had one and that HotSpot must therefore reject: version 51
or later (a version 50 class without frames falls back to the old
type-inferencing verifier, JVMS 4.10).

The class is parsed from its structure (JVMS 4.1, 4.4, 4.7); only the bytes
of the change (and the lengths that hold them) differ in the output. Fails
(exit 1) when the class has nothing to break in that way.
"""
import struct
import sys


def u2(b, o):
    return struct.unpack_from(">H", b, o)[0]


def u4(b, o):
    return struct.unpack_from(">I", b, o)[0]


class ClassFile:
    def __init__(self, b):
        self.b = b
        assert u4(b, 0) == 0xCAFEBABE, "not a class file"
        n = u2(b, 8)
        self.utf8 = {}
        self.class_index = {}
        p, i = 10, 1
        while i < n:
            tag = b[p]
            if tag == 1:
                ln = u2(b, p + 1)
                self.utf8[i] = b[p + 3:p + 3 + ln].decode("utf-8", "replace")
                p += 3 + ln
            elif tag == 7:
                self.class_index[i] = u2(b, p + 1)
                p += 3
            elif tag in (8, 16, 19, 20):
                p += 3
            elif tag == 15:
                p += 4
            elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
                p += 5
            elif tag in (5, 6):
                p += 9
                i += 1
            else:
                raise ValueError("constant tag %d at %d" % (tag, p))
            i += 1
        self.this_name = self.utf8[self.class_index[u2(b, p + 2)]]
        p += 6  # access_flags, this_class, super_class
        p += 2 + 2 * u2(b, p)  # interfaces
        p = self.members(p)[0]  # fields
        self.methods_at = p
        p, self.methods = self.members(p)

    def attrs(self, p):
        """(end, [(offset, name, info_offset, length)])"""
        out = []
        n = u2(self.b, p)
        p += 2
        for _ in range(n):
            ln = u4(self.b, p + 2)
            out.append((p, self.utf8[u2(self.b, p)], p + 6, ln))
            p += 6 + ln
        return p, out

    def members(self, p):
        """(end, [dict(offset, name, attrs)])"""
        out = []
        n = u2(self.b, p)
        p += 2
        for _ in range(n):
            m = {"offset": p, "name": self.utf8[u2(self.b, p + 2)]}
            p, m["attrs"] = self.attrs(p + 6)
            out.append(m)
        return p, out

    def code(self, m):
        for a in m["attrs"]:
            if a[1] == "Code":
                return a
        return None


def pick(cf, want, test):
    for m in cf.methods:
        if (want is None or m["name"] == want) and test(m):
            return m
    sys.exit("break_class.py: no method%s to break" % ("" if want is None else " " + want))


def strip_frames(cf, want):
    b = cf.b

    def frames(m):
        code = cf.code(m)
        if code is None:
            return None
        info = code[2]
        clen = u4(b, info + 4)
        p = info + 8 + clen
        p += 2 + 8 * u2(b, p)  # exception table
        for a in cf.attrs(p)[1]:
            if a[1] == "StackMapTable":
                return code, p, a
        return None

    m = pick(cf, want, lambda m: frames(m) is not None)
    (code_off, _, _, code_len), count_at, smt = frames(m)
    cut = 6 + smt[3]
    out = bytearray(b[:smt[0]] + b[smt[0] + cut:])
    struct.pack_into(">H", out, count_at, u2(b, count_at) - 1)
    struct.pack_into(">I", out, code_off + 2, code_len - cut)
    return bytes(out), m["name"]


def wrong_load(cf, want):
    b = cf.b

    def first_iload0(m):
        code = cf.code(m)
        if code is None:
            return None
        start = code[2] + 8
        # Only at offset 0 is "an opcode" certain without decoding the
        # whole method; the samples start with it.
        return start if b[start] == 0x1A else None

    m = pick(cf, want, lambda m: first_iload0(m) is not None)
    out = bytearray(b)
    out[first_iload0(m)] = 0x2A
    return bytes(out), m["name"]


def bad_modifiers(cf, want):
    m = pick(cf, want, lambda m: True)
    out = bytearray(cf.b)
    flags = u2(cf.b, m["offset"])
    struct.pack_into(">H", out, m["offset"], (flags & ~0x0006) | 0x0003)
    return bytes(out), m["name"]


def strip_all(src, dst):
    import os
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".class"):
                continue
            p = os.path.join(root, f)
            out = os.path.join(dst, os.path.relpath(p, src))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(p, "rb") as fh:
                b = fh.read()
            stripped = False
            if f != "module-info.class":
                while True:
                    cf = ClassFile(b)
                    try:
                        b, _ = strip_frames(cf, None)
                        stripped = True
                    except SystemExit:
                        break
            with open(out, "wb") as fh:
                fh.write(b)
            if stripped and u2(b, 6) >= 51:
                print(ClassFile(b).this_name.replace("/", "."))


def future_version(cf, want):
    out = bytearray(cf.b)
    struct.pack_into(">HH", out, 4, 0, 255)
    return bytes(out), "(none)"


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "strip-all":
        strip_all(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    how, src, dst = sys.argv[1:4]
    want = sys.argv[4] if len(sys.argv) == 5 else None
    ops = {"strip-frames": strip_frames, "wrong-load": wrong_load, "bad-modifiers": bad_modifiers,
           "future-version": future_version}
    if how not in ops:
        sys.exit(__doc__)
    with open(src, "rb") as f:
        cf = ClassFile(f.read())
    out, name = ops[how](cf, want)
    with open(dst, "wb") as f:
        f.write(out)
    print("%s: %s in method %s" % (dst, how, name))


if __name__ == "__main__":
    main()
