#!/usr/bin/env python3
"""Convert Joe and Kuo's Sobol direction-number table between its published text layout and
warpmc's packed form (host/data/sobol/README.md describes both).

    pack.py pack   new-joe-kuo-6.21201 new-joe-kuo-6.21201.pack   # text -> pack, checked
    pack.py unpack new-joe-kuo-6.21201.pack new-joe-kuo-6.21201     # pack -> text, checked

Packing checks every row before it writes anything: the header, d = 2, 3, ... without gaps,
1 <= s <= 18, a < 2^(s-1), exactly s initial numbers, every m_i odd and below 2^i. Those checks
are what make the pack lossless: m_1 = 1 and the low bit of every m_i are implied, so they are
not stored. Unpacking repeats the checks on what it decoded. Only the standard library is used.
"""

import sys

MAGIC = b"JKSOBOL1"
HEADER = "d       s       a       m_i"
S_BITS = 5  # s <= 18 < 2^5
S_MAX = 18


def check_row(d, s, a, m, expect_d):
    where = f"row d = {d}"
    if d != expect_d:
        raise ValueError(f"{where}: expected d = {expect_d} (rows must run 2, 3, ... without gaps)")
    if not 1 <= s <= S_MAX:
        raise ValueError(f"{where}: s = {s} outside 1..={S_MAX}")
    if not 0 <= a < (1 << (s - 1)):
        raise ValueError(f"{where}: a = {a} does not fit in s - 1 = {s - 1} bits")
    if len(m) != s:
        raise ValueError(f"{where}: {len(m)} initial numbers for degree s = {s}")
    for i, mi in enumerate(m, start=1):
        if mi % 2 != 1 or not 0 < mi < (1 << i):
            raise ValueError(f"{where}: m_{i} = {mi} is not odd and below 2^{i}")


def read_text(path):
    with open(path, encoding="ascii") as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split() != HEADER.split():
        raise ValueError(f"{path}: first line is not the header {HEADER!r}")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        nums = [int(t) for t in line.split()]
        if len(nums) < 4:
            raise ValueError(f"{path}:{n}: fewer than four numbers")
        d, s, a, m = nums[0], nums[1], nums[2], nums[3:]
        check_row(d, s, a, m, len(rows) + 2)
        rows.append((d, s, a, m))
    return rows


def write_text(rows, path):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(HEADER + "\n")
        for d, s, a, m in rows:
            f.write(f"{d:<8d}{s:<8d}{a:<8d}" + " ".join(str(x) for x in m) + "\n")


def pack(rows):
    bits = []  # (value, width), most significant bit first

    for d, s, a, m in rows:
        bits.append((s, S_BITS))
        bits.append((a, s - 1))
        for i in range(2, s + 1):
            bits.append((m[i - 1] >> 1, i - 1))
    acc, nacc, out = 0, 0, bytearray()
    for value, width in bits:
        acc = (acc << width) | value
        nacc += width
        while nacc >= 8:
            nacc -= 8
            out.append((acc >> nacc) & 0xFF)
        acc &= (1 << nacc) - 1
    if nacc:
        out.append((acc << (8 - nacc)) & 0xFF)
    return MAGIC + len(rows).to_bytes(4, "little") + bytes(out)


def unpack(blob):
    if blob[:8] != MAGIC:
        raise ValueError("not a pack: bad magic")
    count = int.from_bytes(blob[8:12], "little")
    data = blob[12:]
    pos = 0  # bit position

    def take(width):
        nonlocal pos
        v = 0
        for _ in range(width):
            byte = data[pos >> 3]
            v = (v << 1) | ((byte >> (7 - (pos & 7))) & 1)
            pos += 1
        return v

    rows = []
    for k in range(count):
        d = k + 2
        s = take(S_BITS)
        if not 1 <= s <= S_MAX:
            raise ValueError(f"row d = {d}: s = {s} outside 1..={S_MAX}")
        a = take(s - 1)
        m = [1] + [(take(i - 1) << 1) | 1 for i in range(2, s + 1)]
        check_row(d, s, a, m, d)
        rows.append((d, s, a, m))
    if (len(data) * 8 - pos) >= 8 or (pos % 8 and take(8 - pos % 8) != 0):
        raise ValueError("trailing data after the last row")
    return rows


def main(argv):
    if len(argv) != 4 or argv[1] not in ("pack", "unpack"):
        sys.exit(__doc__)
    if argv[1] == "pack":
        rows = read_text(argv[2])
        blob = pack(rows)
        if unpack(blob) != rows:
            raise AssertionError("pack does not round-trip")
        with open(argv[3], "wb") as f:
            f.write(blob)
    else:
        with open(argv[2], "rb") as f:
            rows = unpack(f.read())
        write_text(rows, argv[3])
    print(f"{len(rows)} rows, dimensions 2..={len(rows) + 1}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
