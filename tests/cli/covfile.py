"""The coverage data file (docs/coverage-format.md), written and merged in
Python straight from the specification: a second implementation, so the
CLI tests check jinst's reader and writer against the document rather
than against themselves.

A model is (sessions, classes): sessions a list of (name, start_ms,
dump_ms), classes a dict {(name, identity): (kind, probes)} with kind
"b" (probes a list of 0/1) or "c" (a list of counts). Names are str,
written as modified UTF-8 (JVMS 4.4.7).
"""
import struct
import zlib

MAGIC = b"\x89JCOV\r\n\x1a"
U64_MAX = 2**64 - 1


def mutf8(s):
    """Modified UTF-8: UTF-16 code units, each as UTF-8 would write it
    alone (a supplementary character as two 3-byte surrogates), NUL as
    C0 80."""
    out = bytearray()
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        u = units[i] << 8 | units[i + 1]
        if u == 0:
            out += b"\xc0\x80"
        elif u < 0x80:
            out.append(u)
        elif u < 0x800:
            out += bytes([0xC0 | u >> 6, 0x80 | u & 0x3F])
        else:
            out += bytes([0xE0 | u >> 12, 0x80 | u >> 6 & 0x3F, 0x80 | u & 0x3F])
    return bytes(out)


def _name(s):
    b = mutf8(s)
    return struct.pack(">H", len(b)) + b


def _uleb(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _probes(kind, probes):
    if kind == "c":
        return b"".join(_uleb(v) for v in probes)
    bits = bytearray((len(probes) + 7) // 8)
    for i, hit in enumerate(probes):
        if hit:
            bits[i // 8] |= 1 << (i % 8)
    return bytes(bits)


def encode(sessions, classes, version=1):
    out = bytearray(MAGIC + struct.pack(">H", version))
    sess = sorted(set(sessions), key=lambda s: (s[1], s[2], mutf8(s[0])))
    out += struct.pack(">I", len(sess))
    for name, start, dump in sess:
        out += _name(name) + struct.pack(">qq", start, dump)
    keys = sorted(classes, key=lambda k: (mutf8(k[0]), k[1]))
    out += struct.pack(">I", len(keys))
    for name, identity in keys:
        kind, probes = classes[(name, identity)]
        out += struct.pack(">Q", identity) + _name(name)
        out += struct.pack(">IB", len(probes), 0 if kind == "b" else 1) + _probes(kind, probes)
    return bytes(out + struct.pack(">I", zlib.crc32(bytes(out)) & 0xFFFFFFFF))


def merge(a, b):
    """The merge rules of the specification, on two models."""
    sessions = list(a[0]) + list(b[0])
    classes = dict(a[1])
    for key, (kind, probes) in b[1].items():
        if key not in classes:
            classes[key] = (kind, list(probes))
            continue
        k0, p0 = classes[key]
        assert len(p0) == len(probes)
        if k0 == "b" and kind == "b":
            classes[key] = ("b", [x | y for x, y in zip(p0, probes)])
        else:
            classes[key] = ("c", [min(U64_MAX, x + y) for x, y in zip(p0, probes)])
    return sessions, classes


# The CLI tests' inputs. a and b share p/A (booleans) and p/B (counts, one
# of them saturating), hold p/V in two versions (a conflict), and b has a
# counts record of p/M where a has booleans.
A = ([("a", 1000, 2000)],
     {("p/A", 1): ("b", [1, 0, 0, 1]), ("p/B", 2): ("c", [3, 0, 5]),
      ("p/V", 16): ("b", [1, 0]), ("p/M", 5): ("b", [1, 0, 1])})
B = ([("b", 3000, 4000)],
     {("p/A", 1): ("b", [0, 1, 0, 1]), ("p/B", 2): ("c", [1, 0, U64_MAX]),
      ("p/V", 17): ("b", [0, 1]), ("p/M", 5): ("c", [0, 7, 2]),
      ("p/Caf\u00e9", 3): ("c", [])})
# p/A with another probe count under the same identity: cannot be merged.
PROBES = ([], {("p/A", 1): ("b", [1, 1, 1])})


def write_inputs(out):
    """a.cov, b.cov and broken files for the CLI cases, into folder out."""
    import os
    a = encode(*A)
    files = {
        "a.cov": a,
        "b.cov": encode(*B),
        "probes.cov": encode(*PROBES),
        "newer.cov": encode(*A, version=2),
        "truncated.cov": a[:-5],
        "notcov.cov": b"p/A 1 1001\n",
        "empty.cov": b"",
    }
    damaged = bytearray(a)
    damaged[-5] ^= 0x02  # a probe bit of the last class (p/V): only the CRC sees it
    files["damaged.cov"] = bytes(damaged)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
