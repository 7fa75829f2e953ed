#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_archive into corpus/fuzz_archive/: small
jars with stored and deflated entries, a folder entry, entry and archive
comments, an extra field, a .jmod header, data descriptors (one of Zip64),
and damaged copies (truncated, a wrong CRC, a size that lies). Deterministic: fixed times, no randomness.

    make_archive_seeds.py [OUT_DIR]
"""
import io
import os
import struct
import sys
import zipfile

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "fuzz_archive")
os.makedirs(out, exist_ok=True)
when = (2001, 2, 3, 4, 5, 6)


def jar():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = b"archive comment"
        z.writestr(zipfile.ZipInfo("META-INF/", when), b"")
        info = zipfile.ZipInfo("META-INF/MANIFEST.MF", when)
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, b"Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n")
        info = zipfile.ZipInfo("p/C.class", when)
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o100644 << 16
        info.comment = b"entry comment"
        # an extended-timestamp extra field (0x5455): flags, mtime
        info.extra = struct.pack("<HHBI", 0x5455, 5, 1, 981173106)
        z.writestr(info, b"\xca\xfe\xba\xbe" + bytes(28))
        info = zipfile.ZipInfo("res/data.bin", when)
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, bytes(range(256)) * 8)
    return buf.getvalue()


def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


good = jar()
write("jar", good)
write("jmod", b"JM\x01\x00" + good)
write("truncated", good[: len(good) // 2])


def patch(data, entry, local_off, central_off, fn):
    """A copy of data with fn(buf, offset) applied to entry's local header
    field at local_off and central record field at central_off."""
    buf = bytearray(data)
    # signature, offset of the name length, of the name, of the field
    for sig, len_at, name_at, off in ((b"PK\x03\x04", 26, 30, local_off), (b"PK\x01\x02", 28, 46, central_off)):
        pos = buf.find(sig)
        while pos >= 0:
            name_len = struct.unpack_from("<H", buf, pos + len_at)[0]
            if bytes(buf[pos + name_at : pos + name_at + name_len]) == entry:
                fn(buf, pos + off)
            pos = buf.find(sig, pos + 4)
    return bytes(buf)


def flip(buf, at):
    buf[at] ^= 0xFF


# The stored class's CRC, flipped in its local header and central record.
write("bad_crc", patch(good, b"p/C.class", 14, 16, flip))
# The deflated resource says it is 64 times smaller than it inflates to.
write("lying_size", patch(good, b"res/data.bin", 22, 24, lambda buf, at: struct.pack_into("<I", buf, at, 32)))
write("empty", b"PK\x05\x06" + bytes(18))


class Stream(io.RawIOBase):
    """Unseekable: zipfile writes data descriptors after each entry's data."""

    def __init__(self):
        self.buf = io.BytesIO()

    def writable(self):
        return True

    def write(self, b):
        return self.buf.write(b)


def descriptors():
    s = Stream()
    with zipfile.ZipFile(s, "w", zipfile.ZIP_DEFLATED) as z:
        for k, name in enumerate(("p/C.class", "res/a.txt")):
            with z.open(zipfile.ZipInfo(name, when), "w", force_zip64=k == 0) as e:
                e.write(b"\xca\xfe\xba\xbe" + bytes(60) if k == 0 else b"text " * 20)
    return s.buf.getvalue()


# Data descriptors after the data, one with 8-byte sizes and a Zip64 field.
write("descriptors", descriptors())
