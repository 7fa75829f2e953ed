#!/usr/bin/env python3
"""The records of each entry of a rewritten archive against the input's.

    zip_headers.py IN OUT [IN OUT ...]

Reads both archives' records as stored (APPNOTE.TXT 4.3): for every entry,
in order, the central record and the local header must be the input's
field by field (versions, flags, method, time, date, name, internal and
external attributes, comment, every extra field's id and bytes) but for
the CRC, the sizes and the offset, and the Zip64 extra field's values,
which hold sizes and offsets. An entry whose CRC and sizes are the
input's must have the input's data bytes too (copied as stored); one whose
data changed must keep what a data descriptor implies: the descriptor
(same shape: signature, width) and, in the local header, zeros where the
input had zeros. A nested archive that changed is compared the same way,
recursively. The end records: the archive comment and whether there are
Zip64 end records. Entries the output adds after the input's (the method
table) are listed, not compared. Prints one line per difference and a
closing count; exit status 1 on any difference.
"""
import struct
import sys
import zlib

ZIP64 = 0x0001


def end_records(b):
    for p in range(len(b) - 22, max(-1, len(b) - 22 - 65536), -1):
        if b[p:p + 4] == b"PK\5\6" and p + 22 + struct.unpack_from("<H", b, p + 20)[0] <= len(b):
            break
    else:
        raise ValueError("no end record")
    count, size, off, clen = struct.unpack_from("<HIIH", b, p + 10)
    zip64 = p >= 20 and b[p - 20:p - 16] == b"PK\6\7"
    if zip64:
        z = struct.unpack_from("<Q", b, p - 20 + 8)[0]
        count, size, off = struct.unpack_from("<QQQ", b, z + 32)
    return count, off, zip64, b[p + 22:p + 22 + clen]


def extras(b):
    out, k = [], 0
    while k + 4 <= len(b):
        i, n = struct.unpack_from("<HH", b, k)
        out.append((i, b[k + 4:k + 4 + n]))
        k += 4 + n
    return out


def masked(fields):
    """Extra fields with the Zip64 field's values (sizes, offsets) hidden."""
    return [(i, len(d) if i == ZIP64 else d) for i, d in fields]


def records(b):
    count, off, zip64, comment = end_records(b)
    entries, p = [], off
    for _ in range(count):
        (sig, made, need, flags, method, time, date, crc, csize, usize, n, x, c, disk, iattr, eattr,
         loc) = struct.unpack_from("<IHHHHHHIIIHHHHHII", b, p)
        assert sig == 0x02014b50, "central record"
        name = b[p + 46:p + 46 + n]
        cx = extras(b[p + 46 + n:p + 46 + n + x])
        z = dict(cx).get(ZIP64, b"")
        vals, k = {}, 0
        for key, v in (("usize", usize), ("csize", csize), ("loc", loc)):
            if v == 0xFFFFFFFF:
                vals[key] = struct.unpack_from("<Q", z, k)[0]
                k += 8
            else:
                vals[key] = v
        l = vals["loc"]
        lneed, lflags, lmethod, ltime, ldate, lcrc, lcsize, lusize, ln, lx = struct.unpack_from("<HHHHHIIIHH", b, l + 4)
        lextra = extras(b[l + 30 + ln:l + 30 + ln + lx])
        data = l + 30 + ln + lx
        end = data + vals["csize"]
        desc = b""
        if flags & 8:
            wide = ZIP64 in dict(lextra) or usize == 0xFFFFFFFF or csize == 0xFFFFFFFF
            sig = b[end:end + 4] == b"PK\7\x08"
            desc = b[end:end + (4 if sig else 0) + 4 + (16 if wide else 8)]
        entries.append({
            "central": (made, need, flags, method, time, date, name, masked(cx), b[p + 46 + n + x:p + 46 + n + x + c],
                        disk, iattr, eattr),
            "local": (lneed, lflags, lmethod, ltime, ldate, b[l + 30:l + 30 + ln], masked(lextra)),
            "local_zeros": (lcrc == 0, lcsize == 0, lusize == 0),
            "crc": crc, "sizes": (vals["csize"], vals["usize"]), "method": method,
            "data": b[data:end], "desc_shape": (len(desc), desc[:4] == b"PK\7\x08"),
            "name": name.decode("utf-8", "replace"),
        })
        p += 46 + n + x + c
    return entries, zip64, comment


def plain(e):
    if e["method"] == 0:
        return e["data"]
    return zlib.decompress(e["data"], -15)


def compare(where, a, b, problems, counts):
    ea, za, ca = records(a)
    eb, zb, cb = records(b)
    if (za, ca) != (zb, cb):
        problems.append(f"{where}: end records differ (Zip64 {za}/{zb}, comment {ca!r}/{cb!r})")
    if [e["name"] for e in eb[:len(ea)]] != [e["name"] for e in ea]:
        problems.append(f"{where}: the entries differ in names or order")
        return
    counts["added"] += len(eb) - len(ea)
    for x, y in zip(ea, eb):
        w = f"{where}!{x['name']}"
        counts["entries"] += 1
        same_data = (x["crc"], x["sizes"]) == (y["crc"], y["sizes"])
        cx, cy = x["central"], y["central"]
        if not same_data and x["method"] not in (0, 8):
            cx = cx[:3] + (8,) + cx[4:]  # another method is rewritten deflated
        if cx != cy:
            problems.append(f"{w}: central records differ: {cx} / {cy}")
        lx, ly = x["local"], y["local"]
        if not same_data and x["method"] not in (0, 8):
            lx = lx[:2] + (8,) + lx[3:]
        if lx != ly:
            problems.append(f"{w}: local headers differ: {lx} / {ly}")
        if x["desc_shape"] != y["desc_shape"]:
            problems.append(f"{w}: data descriptors differ: {x['desc_shape']} / {y['desc_shape']}")
        if same_data:
            counts["as stored"] += 1
            if x["data"] != y["data"] or x["local_zeros"] != y["local_zeros"]:
                problems.append(f"{w}: same CRC and sizes, other stored bytes")
            continue
        counts["changed"] += 1
        if (x["central"][2] & 8) and any(
                i and not j for i, j in zip(x["local_zeros"], y["local_zeros"])):
            problems.append(f"{w}: the local header lost the zeros a data descriptor implies")
        if zlib.crc32(plain(y)) != y["crc"] or len(plain(y)) != y["sizes"][1]:
            problems.append(f"{w}: its new data do not match its CRC or size")
        if x["name"].endswith((".jar", ".war", ".ear", ".zip")) and plain(x)[:2] == b"PK":
            compare(w, plain(x), plain(y), problems, counts)


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    problems = []
    counts = {"entries": 0, "as stored": 0, "changed": 0, "added": 0}
    for a, b in zip(args[::2], args[1::2]):
        compare(a.rsplit("/", 1)[-1], open(a, "rb").read(), open(b, "rb").read(), problems, counts)
    for p in problems[:40]:
        print("DIFF", p)
    print(f"{len(args) // 2} archives: {counts['entries']} entries, {counts['as stored']} as stored, "
          f"{counts['changed']} changed, {counts['added']} added; {len(problems)} differences")
    if not counts["changed"]:
        print("FAIL: no entry changed, so nothing was compared but copies")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
