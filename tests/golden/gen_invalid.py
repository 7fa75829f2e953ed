#!/usr/bin/env python3
"""Generates the golden INVALID class files and their expected errors.

Each file is a valid class from tests/data/classes with one defect put in.
The expected offset is derived here from the class-file structure (the
generator parses the valid class itself), never copied from jinst's output.

Offset conventions (what "where the defect is" means; see expected.txt):
  * a field that is missing or cut off by the end of the file: the offset
    of that field's first byte (the first read that fails);
  * a length or count that claims more bytes than are left (in the file or
    in the parent attribute): the offset of that length or count. For counts
    this holds as soon as the entries cannot fit even at their minimum size
    (STYLE.md: counts are checked against the bytes left before anything is
    allocated);
  * a wrong value: the offset of the field that holds it (a constant-pool
    tag byte, a constant-pool index, this_class, code_length, an
    exception-table pc, a frame type, an element_value tag);
  * a constant that cannot stand where it is (a Long in the last slot): its
    tag byte;
  * invalid modified UTF-8 (JVMS 4.4.7): the first byte of the first
    malformed sequence;
  * an instruction that is wrong (bad opcode, branch target off the
    instruction boundary, cp index out of range): the offset of its opcode.

Usage: gen_invalid.py [OUTDIR]   (default: the folder of this script)
Deterministic: the same inputs give the same files and expected.txt.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "classes")

u1 = lambda b, o: b[o]
u2 = lambda b, o: struct.unpack_from(">H", b, o)[0]
u4 = lambda b, o: struct.unpack_from(">I", b, o)[0]

# Minimum encoded sizes, for the "count larger than the bytes left" rule.
MIN_CP_ENTRY = 3      # Utf8 with length 0, Class, String, ...
MIN_MEMBER = 8        # access, name, descriptor, attributes_count
MIN_ATTR = 6          # name index and length


class Attr:
    def __init__(self, b, off, cf):
        self.off = off
        self.name_index = u2(b, off)
        self.name = cf.utf8(self.name_index)
        self.length = u4(b, off + 2)
        self.info = off + 6
        self.end = self.info + self.length


def read_attrs(b, off, cf):
    n = u2(b, off)
    p = off + 2
    out = []
    for _ in range(n):
        a = Attr(b, p, cf)
        out.append(a)
        p = a.end
    return out, p


class Member:
    def __init__(self, b, off, cf):
        self.off = off
        self.access = u2(b, off)
        self.name = cf.utf8(u2(b, off + 2))
        self.desc = cf.utf8(u2(b, off + 4))
        self.attrs_off = off + 6
        self.attrs, self.end = read_attrs(b, off + 6, cf)

    def attr(self, name):
        return next((a for a in self.attrs if a.name == name), None)


class ClassFile:
    """Just enough of JVMS chapter 4 to find the offset of every structure."""

    def __init__(self, path):
        self.path = path
        self.b = b = open(path, "rb").read()
        assert u4(b, 0) == 0xCAFEBABE
        self.cp_count = u2(b, 8)
        self.cp = [None] * self.cp_count  # (offset, tag)
        p = 10
        i = 1
        while i < self.cp_count:
            tag = b[p]
            self.cp[i] = (p, tag)
            if tag == 1:
                p += 3 + u2(b, p + 1)
            elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
                p += 5
            elif tag in (5, 6):
                p += 9
                i += 1
            elif tag in (7, 8, 16, 19, 20):
                p += 3
            elif tag == 15:
                p += 4
            else:
                raise ValueError("tag %d" % tag)
            i += 1
        self.cp_end = p
        self.access_off = p
        self.this_off = p + 2
        self.super_off = p + 4
        self.ifaces_off = p + 6
        n = u2(b, p + 6)
        p += 8 + 2 * n
        self.fields_off = p
        self.fields = []
        q = p + 2
        for _ in range(u2(b, p)):
            m = Member(b, q, self)
            self.fields.append(m)
            q = m.end
        p = q
        self.methods_off = p
        self.methods = []
        q = p + 2
        for _ in range(u2(b, p)):
            m = Member(b, q, self)
            self.methods.append(m)
            q = m.end
        self.attrs_off = q
        self.attrs, end = read_attrs(b, q, self)
        assert end == len(b), path

    def utf8(self, i):
        if not (0 < i < self.cp_count) or self.cp[i] is None or self.cp[i][1] != 1:
            return None
        p = self.cp[i][0]
        return self.b[p + 3:p + 3 + u2(self.b, p + 1)]

    def entries(self, tag):
        return [i for i in range(1, self.cp_count) if self.cp[i] and self.cp[i][1] == tag]

    def method(self, name):
        return next(m for m in self.methods if m.name == name.encode())

    def attr(self, name):
        return next((a for a in self.attrs if a.name == name.encode()), None)

    def code(self, method):
        """Offsets inside a method's Code attribute (JVMS 4.7.3)."""
        a = self.method(method).attr(b"Code")
        b = self.b
        c = {"attr": a, "code_length_off": a.info + 4, "code_off": a.info + 8}
        c["code_length"] = u4(b, a.info + 4)
        et = a.info + 8 + c["code_length"]
        c["exc_off"] = et + 2
        c["exc_count"] = u2(b, et)
        c["attrs"], _ = read_attrs(b, et + 2 + 8 * c["exc_count"], self)
        return c


# Operand lengths of opcodes without variable layout (JVMS 6.5).
def insn_length(code, pc):
    op = code[pc]
    if op == 0xAA:  # tableswitch
        p = (pc + 4) & ~3
        lo, hi = struct.unpack_from(">ii", code, p + 4)
        return p + 12 + 4 * (hi - lo + 1) - pc
    if op == 0xAB:  # lookupswitch
        p = (pc + 4) & ~3
        n = struct.unpack_from(">i", code, p + 4)[0]
        return p + 8 + 8 * n - pc
    if op == 0xC4:  # wide
        return 6 if code[pc + 1] == 0x84 else 4
    two = {0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3A, 0xA9, 0xBC}
    three = {0x11, 0x13, 0x14, 0x84, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xBB, 0xBD,
             0xC0, 0xC1, 0xC6, 0xC7} | set(range(0x99, 0xA9))
    if op in two:
        return 2
    if op in three:
        return 3
    if op in (0xB9, 0xBA, 0xC8, 0xC9):
        return 5
    if op == 0xC5:
        return 4
    return 1


def insns(code):
    pc = 0
    out = []
    while pc < len(code):
        out.append(pc)
        pc += insn_length(code, pc)
    assert pc == len(code)
    return out


def put_u1(b, o, v):
    b[o] = v


def put_u2(b, o, v):
    struct.pack_into(">H", b, o, v)


def put_u4(b, o, v):
    struct.pack_into(">I", b, o, v)


def count_too_large(count, min_size, left):
    return count * min_size > left


class Gen:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lines = []

    def emit(self, name, data, code, offset, mode, msg, why):
        assert name.endswith(".class")
        with open(os.path.join(self.outdir, name), "wb") as f:
            f.write(bytes(data))
        self.lines.append("%-36s %-11s %-5s %7d  %s" % (name, code, mode, offset, msg))
        self.lines.append("#   %s" % why)

    def write_expected(self):
        with open(os.path.join(self.outdir, "expected.txt"), "w") as f:
            f.write(EXPECTED_HEADER)
            for line in self.lines:
                f.write(line + "\n")


EXPECTED_HEADER = """\
# Golden invalid class files and their expected errors.
# Generated by gen_invalid.py (do not edit by hand; rerun the script).
#
# Columns: file, error code name, mode, byte offset of the defect, then the
# rest of the line is a substring the formatted diagnostic (jinst_diag_format:
# code, offset, where, message) must contain, case-insensitive; "-" means any
# non-empty message.
# Mode "parse": jinst_class_parse() must fail with that code and offset.
# Mode "deep":  parse succeeds and a default write gives back the input bytes
#               (nothing decoded, nothing checked), and the defect shows when
#               decoding: jinst_class_write(JINST_WRITE_FROM_MODEL) must fail
#               with that code and offset.
# The line under each entry says why the offset is where it is.
"""


def truncations(g, cf, tag):
    b = cf.b

    def cut(name, at, off, msg, why):
        g.emit("trunc_%s_%s.class" % (tag, name), b[:at], "EMALFORMED", off, "parse", msg,
               "truncated to %d bytes; %s" % (at, why))

    cut("empty", 0, 0, "-", "no magic at all")
    cut("magic", 2, 0, "-", "magic (offset 0) is cut off")
    cut("minor", 4, 4, "-", "minor_version (offset 4) missing")
    cut("major", 7, 6, "-", "major_version (offset 6) is cut off")
    cut("cpcount", 9, 8, "-", "constant_pool_count (offset 8) is cut off")

    # Late in the pool, so the count check (MIN_CP_ENTRY per entry) passes and
    # the first missing or incomplete entry is the defect.
    last = cf.cp_count - 1
    while cf.cp[last] is None:
        last -= 1
    k = last - 2
    while cf.cp[k] is None:
        k -= 1
    off_k = cf.cp[k][0]
    assert not count_too_large(cf.cp_count - 1, MIN_CP_ENTRY, off_k - 10)
    cut("cp_entry_missing", off_k, off_k, "-",
        "constant pool #%d (tag byte at %d) missing" % (k, off_k))
    utf = [i for i in cf.entries(1) if i > cf.cp_count // 2 and u2(b, cf.cp[i][0] + 1) >= 4]
    i = utf[-1]
    p = cf.cp[i][0]
    cut("cp_utf8_bytes", p + 4, p + 1, "-",
        "Utf8 constant #%d at %d: its length (at %d) declares %d bytes, the file ends first"
        % (i, p, p + 1, u2(b, p + 1)))
    refs = [i for i in cf.entries(10) if i > cf.cp_count // 2] or cf.entries(10)
    if refs:
        i = refs[-1]
        p = cf.cp[i][0]
        cut("cp_methodref", p + 3, p + 3, "-",
            "Methodref constant #%d at %d is cut after its class_index: name_and_type_index "
            "(at %d) missing" % (i, p, p + 3))
    cut("access_flags", cf.cp_end + 1, cf.cp_end, "-",
        "access_flags (offset %d) is cut off" % cf.cp_end)
    cut("this_class", cf.this_off, cf.this_off, "-", "this_class (offset %d) missing" % cf.this_off)
    cut("fields_count", cf.fields_off, cf.fields_off, "-",
        "fields_count (offset %d) missing" % cf.fields_off)

    # Inside the last method's Code: the attribute's declared length passes
    # the end. The counts that enclose it still fit in the bytes left.
    m = cf.methods[-1] if cf.methods else None
    a = m and m.attr(b"Code")
    at = a.info + a.length // 2 if a else None
    if a:
        assert not count_too_large(len(cf.methods), MIN_MEMBER, at - cf.methods_off - 2)
        assert not count_too_large(len(m.attrs), MIN_ATTR, at - m.attrs_off - 2)
        cut("in_code", at, a.off + 2, "attribute_length",
            "the Code attribute of %s (at %d): attribute_length (at %d) declares %d bytes, "
            "the file ends first" % (m.name.decode(), a.off, a.off + 2, a.length))
    cut("attributes_count", cf.attrs_off + 1, cf.attrs_off, "-",
        "the class's attributes_count (offset %d) is cut off" % cf.attrs_off)
    a = cf.attrs[-1]
    cut("class_attr", a.off + 6 + a.length - 1, a.off + 2, "attribute_length",
        "the last class attribute (at %d): attribute_length (at %d) declares %d bytes, one is "
        "missing" % (a.off, a.off + 2, a.length))


def structural(g, cf, tag):
    b0 = cf.b

    def mutate(name, edit, off, msg, why, mode="parse", code="EMALFORMED"):
        b = bytearray(b0)
        b = edit(b) or b
        g.emit("%s_%s.class" % (name, tag), b, code, off, mode, msg, why)

    mutate("bad_magic", lambda b: put_u4(b, 0, 0xCAFEBABF), 0, "magic", "magic is 0xCAFEBABF")
    mutate("bad_magic_zero", lambda b: put_u4(b, 0, 0), 0, "magic", "magic is 0")

    # A bad tag in the middle of the pool (on a Utf8 that is a string value,
    # not an attribute name).
    s = cf.entries(8)[0]
    i = u2(b0, cf.cp[s][0] + 1)
    p = cf.cp[i][0]
    mutate("bad_cp_tag2", lambda b: put_u1(b, p, 2), p, "tag",
           "constant pool #%d: tag 2 is not a constant-pool tag" % i)
    mutate("bad_cp_tag21", lambda b: put_u1(b, p, 21), p, "tag",
           "constant pool #%d: tag 21 is not a constant-pool tag" % i)
    mutate("bad_cp_tag0", lambda b: put_u1(b, p, 0), p, "tag",
           "constant pool #%d: tag 0 is not a constant-pool tag" % i)

    # Counts that cannot fit in the bytes left.
    mutate("cp_count_huge", lambda b: put_u2(b, 8, 0xFFFF), 8, "constant_pool_count",
           "constant_pool_count 65535 needs at least %d bytes, %d are left"
           % (65534 * MIN_CP_ENTRY, len(b0) - 10))
    mutate("cp_count_zero", lambda b: put_u2(b, 8, 0), 8, "constant_pool_count",
           "constant_pool_count must be at least 1 (JVMS 4.1)")
    assert count_too_large(0xFFFF, 2, len(b0) - cf.ifaces_off - 2)
    mutate("interfaces_count_huge", lambda b: put_u2(b, cf.ifaces_off, 0xFFFF), cf.ifaces_off, "interfaces_count",
           "interfaces_count 65535 needs 131070 bytes")
    mutate("fields_count_huge", lambda b: put_u2(b, cf.fields_off, 0xFFFF), cf.fields_off, "fields_count",
           "fields_count 65535 needs at least %d bytes" % (0xFFFF * MIN_MEMBER))
    mutate("methods_count_huge", lambda b: put_u2(b, cf.methods_off, 0xFFFF), cf.methods_off, "methods_count",
           "methods_count 65535 needs at least %d bytes" % (0xFFFF * MIN_MEMBER))
    mutate("class_attributes_count_huge", lambda b: put_u2(b, cf.attrs_off, 0xFFFF), cf.attrs_off, "attributes_count",
           "the class's attributes_count 65535 needs at least %d bytes" % (0xFFFF * MIN_ATTR))
    m = cf.methods[0]
    mutate("method_attributes_count_huge", lambda b: put_u2(b, m.attrs_off, 0xFFFF), m.attrs_off, "attributes_count",
           "attributes_count of the first method needs at least %d bytes" % (0xFFFF * MIN_ATTR))

    # Bad constant-pool references.
    mutate("this_class_out_of_range", lambda b: put_u2(b, cf.this_off, cf.cp_count), cf.this_off,
           "this_class", "this_class = constant_pool_count")
    mutate("this_class_zero", lambda b: put_u2(b, cf.this_off, 0), cf.this_off,
           "this_class", "this_class = 0")
    u = cf.entries(1)[0]
    mutate("this_class_utf8", lambda b: put_u2(b, cf.this_off, u), cf.this_off,
           "this_class", "this_class = #%d, a Utf8" % u)
    mutate("super_class_utf8", lambda b: put_u2(b, cf.super_off, u), cf.super_off,
           "super_class", "super_class = #%d, a Utf8" % u)
    mr = cf.entries(10)[0]
    p = cf.cp[mr][0]
    mutate("methodref_class_utf8", lambda b: put_u2(b, p + 1, u), p + 1, "Class",
           "Methodref #%d (at %d): class_index (at %d) #%d is a Utf8" % (mr, p, p + 1, u))
    mutate("methodref_class_out_of_range", lambda b: put_u2(b, p + 1, 0xFFFF), p + 1, "range",
           "Methodref #%d (at %d): class_index (at %d) 65535 is out of range" % (mr, p, p + 1))
    mutate("methodref_nat_zero", lambda b: put_u2(b, p + 3, 0), p + 3, "-",
           "Methodref #%d (at %d): name_and_type_index (at %d) is 0" % (mr, p, p + 3))
    c = cf.entries(7)[0]
    p7 = cf.cp[c][0]
    mutate("class_name_not_utf8", lambda b: put_u2(b, p7 + 1, c), p7 + 1, "Utf8",
           "Class #%d (at %d): name_index (at %d) names the Class itself, not a Utf8"
           % (c, p7, p7 + 1))

    # A Long whose second slot would be index constant_pool_count (JVMS 4.4.5).
    def long_last(b):
        put_u2(b, 8, cf.cp_count + 1)
        return b[:cf.cp_end] + bytes([5]) + struct.pack(">q", 7) + b[cf.cp_end:]
    mutate("long_in_last_slot", long_last, cf.cp_end, "Long",
           "a Long at #%d (at %d), the last index: its second slot is out of the pool"
           % (cf.cp_count, cf.cp_end))

    # Modified UTF-8 (JVMS 4.4.7), in the Utf8 of a string constant.
    strs = [u2(b0, cf.cp[s][0] + 1) for s in cf.entries(8)]
    i = next(i for i in strs if u2(b0, cf.cp[i][0] + 1) >= 4 and all(x < 0x80 for x in cf.utf8(i)))
    p = cf.cp[i][0] + 3
    n = u2(b0, p - 2)
    what = "Utf8 #%d, its bytes start at %d" % (i, p)

    def setb(at, *vals):
        def f(b):
            for k, v in enumerate(vals):
                b[at + k] = v
        return f
    mutate("utf8_nul", setb(p + 1, 0), p + 1, "UTF-8", "%s: byte 1 is NUL" % what)
    mutate("utf8_4byte", setb(p, 0xF0, 0x9F, 0x98, 0x80), p, "UTF-8",
           "%s: starts with a 4-byte form F0 9F 98 80" % what)
    mutate("utf8_truncated_seq", setb(p + n - 1, 0xC3), p + n - 1, "UTF-8",
           "%s: the last byte C3 starts a 2-byte sequence that is cut off" % what)
    mutate("utf8_truncated_seq3", setb(p + n - 2, 0xE4, 0xB8), p + n - 2, "UTF-8",
           "%s: E4 B8 at the end, a 3-byte sequence cut off" % what)
    mutate("utf8_lone_continuation", setb(p + 1, 0x80), p + 1, "UTF-8",
           "%s: byte 1 is a lone continuation byte" % what)
    mutate("utf8_bad_continuation", setb(p, 0xE4, 0x41, 0x41), p, "UTF-8",
           "%s: E4 followed by a non-continuation byte" % what)
    mutate("utf8_byte_ff", setb(p + 2, 0xFF), p + 2, "UTF-8", "%s: byte 2 is FF" % what)

    # Attribute lengths.
    a = cf.attrs[-1]
    mutate("attr_length_past_end", lambda b: put_u4(b, a.off + 2, a.length + 1), a.off + 2,
           "attribute_length", "the last class attribute (at %d): its attribute_length (at %d) "
           "is one byte longer than the file" % (a.off, a.off + 2))
    m = cf.methods[0]
    ma = m.attrs[0]
    mutate("attr_length_huge", lambda b: put_u4(b, ma.off + 2, 0xFFFFFFF0), ma.off + 2,
           "attribute_length", "the first method's first attribute (at %d) has attribute_length "
           "(at %d) 0xFFFFFFF0" % (ma.off, ma.off + 2))

    mutate("trailing_byte", lambda b: b + b"\0", len(b0), "after",
           "one byte after the last attribute (the class ends at %d)" % len(b0))
    mutate("trailing_bytes", lambda b: b + b"\xca\xfe\xba\xbe", len(b0), "after",
           "four bytes after the last attribute (the class ends at %d)" % len(b0))


def replace_code(b, cf, c, new_info):
    """b with the info of Code attribute c replaced by new_info."""
    a = c["attr"]
    out = bytearray(b[:a.off + 2]) + struct.pack(">I", len(new_info)) + new_info + b[a.end:]
    return out


def decode_level(g, cf, tag):
    b0 = cf.b

    def mutate(name, edit, off, msg, why, code="EMALFORMED"):
        b = bytearray(b0)
        b = edit(b) or b
        g.emit("%s_%s.class" % (name, tag), b, code, off, "deep", msg, why)

    # Code with code_length 0 (JVMS 4.7.3: code_length must be greater than zero).
    c = cf.code("guarded")
    info = struct.pack(">HHIHH", u2(b0, c["attr"].info), u2(b0, c["attr"].info + 2), 0, 0, 0)
    mutate("code_length_zero", lambda b: replace_code(b, cf, c, info), c["code_length_off"],
           "code_length", "Code of guarded (at %d): code_length 0 at %d" % (c["attr"].off, c["code_length_off"]))

    # Exception table: end_pc beyond code_length.
    assert c["exc_count"] >= 1
    e = c["exc_off"]
    mutate("exception_end_pc", lambda b: put_u2(b, e + 2, c["code_length"] + 1), e + 2, "-",
           "guarded's first exception_table entry (at %d): end_pc %d > code_length %d"
           % (e, c["code_length"] + 1, c["code_length"]))
    mutate("exception_handler_pc", lambda b: put_u2(b, e + 4, 0xFFF0), e + 4, "-",
           "guarded's first exception_table entry (at %d): handler_pc 65520 out of the code" % e)
    mutate("exception_start_after_end", lambda b: put_u2(b, e, u2(b0, e + 2)), e, "-",
           "guarded's first exception_table entry (at %d): start_pc == end_pc" % e)

    # Reserved StackMapTable frame type (JVMS 4.7.4: 128-246 are reserved).
    smt = next(a for a in c["attrs"] if a.name == b"StackMapTable")
    f = smt.info + 2
    mutate("stackmap_reserved_type", lambda b: put_u1(b, f, 128), f, "-",
           "guarded's first stack_map_frame (at %d) has the reserved type 128" % f)

    # A nested attribute of Code whose length runs past the Code attribute.
    # The last one: an earlier one's overrun would show first as a bad name
    # index of the attribute after it.
    last = c["attrs"][-1]
    mutate("code_attr_past_parent", lambda b: put_u4(b, last.off + 2, last.length + 2), last.off + 2,
           "attribute_length", "guarded's %s (at %d), the last attribute of its Code: its "
           "attribute_length (at %d) runs 2 bytes past the Code attribute"
           % (last.name.decode(), last.off, last.off + 2))

    # Bad element_value tag (JVMS 4.7.16.1) in the class's @Info annotation:
    # RuntimeVisibleAnnotations: num_annotations, type_index, num_pairs,
    # then the first pair: element_name_index, tag.
    rva = cf.attr("RuntimeVisibleAnnotations")
    t = rva.info + 2 + 2 + 2 + 2
    assert b0[t] == ord("B")
    mutate("element_value_tag", lambda b: put_u1(b, t, ord("X")), t, "-",
           "the first element_value of the class's first annotation (tag at %d) has tag 'X'" % t)

    # Branch to the middle of an instruction.
    c = cf.code("guarded")
    code = b0[c["code_off"]:c["code_off"] + c["code_length"]]
    starts = insns(code)
    gpc = next(pc for pc in starts if code[pc] == 0xA7)  # goto
    inside = next(pc for pc in range(len(code)) if pc not in starts)
    at = c["code_off"] + gpc
    mutate("branch_mid_instruction",
           lambda b: struct.pack_into(">h", b, at + 1, inside - gpc), at, "-",
           "guarded: goto at pc %d (offset %d) jumps to pc %d, inside an instruction"
           % (gpc, at, inside))
    mutate("branch_past_end",
           lambda b: struct.pack_into(">h", b, at + 1, len(code) - gpc), at, "-",
           "guarded: goto at pc %d (offset %d) jumps to pc %d == code_length"
           % (gpc, at, len(code)))

    # An undefined opcode and a cp index out of range in code.
    c = cf.code("classify")
    code = b0[c["code_off"]:c["code_off"] + c["code_length"]]
    ipc = next(pc for pc in insns(code) if code[pc] == 0xB6)  # invokevirtual
    at = c["code_off"] + ipc
    mutate("code_cp_index_out_of_range", lambda b: put_u2(b, at + 1, 0xFFFF), at, "-",
           "classify: invokevirtual at pc %d (offset %d) names #65535" % (ipc, at))
    mutate("code_bad_opcode", lambda b: put_u1(b, at, 0xCB), at, "opcode",
           "classify: opcode 0xCB (undefined) at pc %d (offset %d)" % (ipc, at))

    # newarray of an undefined type (JVMS 4.9.1: atype 4 to 11): arrays'
    # anewarray (3 bytes) becomes newarray 18; nop.
    c = cf.code("arrays")
    code = b0[c["code_off"]:c["code_off"] + c["code_length"]]
    apc = next(pc for pc in insns(code) if code[pc] == 0xBD)  # anewarray
    at2 = c["code_off"] + apc
    mutate("code_newarray_bad_type", lambda b: b.__setitem__(slice(at2, at2 + 3), bytes([0xBC, 18, 0x00])), at2, "-",
           "arrays: newarray of type 18 at pc %d (offset %d)" % (apc, at2))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    for name in os.listdir(outdir):
        if name.endswith(".class"):
            os.remove(os.path.join(outdir, name))
    g = Gen(outdir)
    feat = ClassFile(os.path.join(DATA, "main", "jinsttest", "Features.class"))
    truncations(g, feat, "features")
    structural(g, feat, "features")
    decode_level(g, feat, "features")
    # A second shape of class for the cheap structural cases.
    mod = ClassFile(os.path.join(DATA, "main", "module-info.class"))
    truncations(g, mod, "module")
    g.write_expected()


if __name__ == "__main__":
    main()
