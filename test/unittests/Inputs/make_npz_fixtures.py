#!/usr/bin/env python3
"""Writes the .npz/.npy fixtures NpzTest.cpp reads.

Run with the project's venv from anywhere:
    .venv/bin/python test/unittests/Inputs/make_npz_fixtures.py
Every value is a deterministic function of np.arange so the C++ test can
recompute it; keep the two in sync.

  stored.npz        np.savez (stored entries, zip64 local extras)
  compressed.npz    np.savez_compressed (deflated entries), same arrays
  zip64.npz         hand-built: zip64 extras in local and central headers and a
                    zip64 end-of-central-directory record, like a > 4 GiB file
  complex64.npz     np.savez of a complex64 array (unsupported dtype)
  v1.npy v2.npy v3.npy   one array saved with .npy format versions 1.0/2.0/3.0
"""
import os
import struct
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def arrays():
    """The arrays of stored.npz/compressed.npz, in file order."""
    a = {}
    a["f32"] = (np.arange(12, dtype=np.float32) * 0.5 - 1).reshape(3, 4)
    a["f64"] = np.arange(6, dtype=np.float64).reshape(2, 3) / 3
    a["i64"] = (np.arange(5, dtype=np.int64) - 2) * 2**40
    a["i32"] = np.arange(-3, 5, dtype=np.int32).reshape(2, 2, 2)
    a["i16"] = np.arange(-2, 3, dtype=np.int16) * 1000
    a["i8"] = np.arange(-4, 4, dtype=np.int8)
    a["u8"] = np.arange(20, dtype=np.uint8) * 13
    a["u16"] = np.arange(4, dtype=np.uint16) * 20000
    a["u32"] = np.arange(3, dtype=np.uint32) * 2000000000
    a["u64"] = np.arange(3, dtype=np.uint64) * np.uint64(2**62)
    a["bool"] = np.arange(7) % 3 == 0
    a["f16"] = np.arange(8, dtype=np.float16) * np.float16(0.25) - np.float16(1)
    a["scalar"] = np.array(2.25, dtype=np.float64)
    a["empty"] = np.zeros((0, 3), dtype=np.float32)
    a["fortran"] = np.asfortranarray(
        np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    a["big_endian"] = np.arange(6).reshape(2, 3).astype(">f4") + np.float32(0.5)
    a["big_endian"] = a["big_endian"].astype(">f4")
    a["be_fortran_i64"] = np.asfortranarray(
        (np.arange(6).reshape(2, 3) - 3).astype(">i8"))
    a["x:0"] = np.arange(4, dtype=np.float32) + 10
    a["a/b"] = np.arange(3, dtype=np.int64) + 7
    return a


def check_layout(a):
    assert a["fortran"].flags.f_contiguous and not a["fortran"].flags.c_contiguous
    assert a["big_endian"].dtype.str == ">f4"
    assert a["be_fortran_i64"].dtype.str == ">i8"
    assert a["be_fortran_i64"].flags.f_contiguous


def local_header(name, crc, size, zip64):
    extra = struct.pack("<HHQQ", 1, 16, size, size) if zip64 else b""
    size32 = 0xFFFFFFFF if zip64 else size
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc,
                       size32, size32, len(name), len(extra)) + name + extra


def central_header(name, crc, size, offset):
    # All three 32-bit fields overflow to the zip64 extra, in spec order.
    extra = struct.pack("<HHQQQ", 1, 24, size, size, offset)
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21,
                       crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra), 0,
                       0, 0, 0, 0xFFFFFFFF) + name + extra


def write_zip64(path, entries):
    """A stored zip whose every size/offset/count goes through zip64 records."""
    out = bytearray()
    central = bytearray()
    for key, arr in entries.items():
        import io
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr)
        data = buf.getvalue()
        name = (key + ".npy").encode()
        crc = zlib.crc32(data)
        offset = len(out)
        out += local_header(name, crc, len(data), True) + data
        central += central_header(name, crc, len(data), offset)
    cd_offset = len(out)
    out += central
    z64_offset = len(out)
    n = len(entries)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n,
                       len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, z64_offset, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF,
                       0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(path, "wb") as f:
        f.write(out)


def main():
    a = arrays()
    check_layout(a)
    np.savez(os.path.join(HERE, "stored.npz"), **a)
    np.savez_compressed(os.path.join(HERE, "compressed.npz"), **a)
    zip64_entries = {"w": np.arange(6, dtype=np.float32).reshape(2, 3) - 2,
                     "h": np.arange(4, dtype=np.int32) * 3}
    write_zip64(os.path.join(HERE, "zip64.npz"), zip64_entries)
    np.savez(os.path.join(HERE, "complex64.npz"),
             c=np.arange(3).astype(np.complex64))
    v = np.arange(6, dtype=np.float64).reshape(3, 2) * 1.5
    for major in (1, 2, 3):
        with open(os.path.join(HERE, "v%d.npy" % major), "wb") as f:
            np.lib.format.write_array(f, v, version=(major, 0))

    # Self-check: numpy and zipfile read back what was written.
    for name in ("stored.npz", "compressed.npz"):
        with np.load(os.path.join(HERE, name)) as z:
            assert list(z.keys()) == list(a.keys()), z.keys()
            for k, arr in a.items():
                assert z[k].dtype == arr.dtype and z[k].shape == arr.shape, k
                assert np.array_equal(z[k], arr), k
    with zipfile.ZipFile(os.path.join(HERE, "compressed.npz")) as z:
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())
    with zipfile.ZipFile(os.path.join(HERE, "stored.npz")) as z:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    with zipfile.ZipFile(os.path.join(HERE, "zip64.npz")) as z:
        assert z.testzip() is None
    with np.load(os.path.join(HERE, "zip64.npz")) as z:
        for k, arr in zip64_entries.items():
            assert np.array_equal(z[k], arr), k
    for major in (1, 2, 3):
        path = os.path.join(HERE, "v%d.npy" % major)
        with open(path, "rb") as f:
            assert f.read(8)[6:] == bytes([major, 0])
        assert np.array_equal(np.load(path), v)


if __name__ == "__main__":
    main()
