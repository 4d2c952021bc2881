//===- NpzTest.cpp - NumPy .npy/.npz reading and writing ------------------===//
//
// The fixtures in Inputs/ come from Inputs/make_npz_fixtures.py (numpy's
// np.savez / np.savez_compressed); the expected values here are the same
// np.arange formulas. The directory is $LSTM_OPT_NPZ_INPUTS, else the
// LSTM_OPT_NPZ_INPUTS compile definition, else Inputs/ next to this file.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Support/Npz.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace lstm_opt::npz;

namespace {

using Arrays = std::vector<std::pair<std::string, Array>>;

std::string inputPath(StringRef name) {
  SmallString<256> dir;
  if (const char *env = std::getenv("LSTM_OPT_NPZ_INPUTS")) {
    dir = env;
  } else {
#ifdef LSTM_OPT_NPZ_INPUTS
    dir = LSTM_OPT_NPZ_INPUTS;
#else
    dir = __FILE__;
    sys::path::remove_filename(dir);
    sys::path::append(dir, "Inputs");
#endif
  }
  sys::path::append(dir, name);
  return std::string(dir);
}

template <typename T> std::vector<T> values(const Array &a) {
  EXPECT_EQ(a.data.size(), a.numElements() * sizeof(T));
  std::vector<T> v(a.data.size() / sizeof(T));
  if (!v.empty())
    std::memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

float halfToFloat(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float mag = exp == 0    ? std::ldexp(float(mant), -24)
              : exp == 31 ? (mant ? NAN : INFINITY)
                          : std::ldexp(float(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

/// The message of a failed Expected (empty on success, which fails the test).
template <typename T> std::string errorOf(Expected<T> e) {
  if (e) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return toString(e.takeError());
}

const Array &get(const Arrays &arrays, StringRef key) {
  for (const auto &[k, a] : arrays)
    if (k == key)
      return a;
  ADD_FAILURE() << "no key " << key.str();
  static Array none;
  return none;
}

/// Expects `a` to have `dtype` and `shape`, and element i to be f(i).
template <typename T, typename F>
void expectArray(const Array &a, DType dtype, std::vector<int64_t> shape, F f) {
  EXPECT_EQ(a.dtype, dtype) << dtypeName(a.dtype).str();
  EXPECT_EQ(a.shape, shape);
  std::vector<T> v = values<T>(a);
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(v[i], T(f(int64_t(i)))) << "element " << i;
}

void checkFixtureArrays(const Arrays &arrays) {
  std::vector<std::string> keys;
  for (const auto &kv : arrays)
    keys.push_back(kv.first);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "f32", "f64", "i64", "i32", "i16", "i8", "u8", "u16",
                      "u32", "u64", "bool", "f16", "scalar", "empty", "fortran",
                      "big_endian", "be_fortran_i64", "x:0", "a/b"}));
  expectArray<float>(get(arrays, "f32"), DType::F32, {3, 4},
                     [](int64_t i) { return i * 0.5f - 1; });
  expectArray<double>(get(arrays, "f64"), DType::F64, {2, 3},
                      [](int64_t i) { return i / 3.0; });
  expectArray<int64_t>(get(arrays, "i64"), DType::I64, {5},
                       [](int64_t i) { return (i - 2) * (int64_t(1) << 40); });
  expectArray<int32_t>(get(arrays, "i32"), DType::I32, {2, 2, 2},
                       [](int64_t i) { return i - 3; });
  expectArray<int16_t>(get(arrays, "i16"), DType::I16, {5},
                       [](int64_t i) { return (i - 2) * 1000; });
  expectArray<int8_t>(get(arrays, "i8"), DType::I8, {8},
                      [](int64_t i) { return i - 4; });
  expectArray<uint8_t>(get(arrays, "u8"), DType::U8, {20},
                       [](int64_t i) { return i * 13; });
  expectArray<uint16_t>(get(arrays, "u16"), DType::U16, {4},
                        [](int64_t i) { return i * 20000; });
  expectArray<uint32_t>(get(arrays, "u32"), DType::U32, {3},
                        [](int64_t i) { return i * 2000000000u; });
  expectArray<uint64_t>(get(arrays, "u64"), DType::U64, {3},
                        [](int64_t i) { return uint64_t(i) << 62; });
  expectArray<uint8_t>(get(arrays, "bool"), DType::Bool, {7},
                       [](int64_t i) { return i % 3 == 0; });
  const Array &f16 = get(arrays, "f16");
  EXPECT_EQ(f16.dtype, DType::F16);
  EXPECT_EQ(f16.shape, std::vector<int64_t>{8});
  std::vector<uint16_t> halves = values<uint16_t>(f16);
  for (size_t i = 0; i < halves.size(); ++i)
    EXPECT_EQ(halfToFloat(halves[i]), i * 0.25f - 1) << "element " << i;
  expectArray<double>(get(arrays, "scalar"), DType::F64, {},
                      [](int64_t) { return 2.25; });
  EXPECT_EQ(get(arrays, "scalar").numElements(), 1);
  expectArray<float>(get(arrays, "empty"), DType::F32, {0, 3},
                     [](int64_t) { return 0.0f; });
  EXPECT_TRUE(get(arrays, "empty").data.empty());
  // Fortran-order and big-endian data come back C-order little-endian.
  expectArray<float>(get(arrays, "fortran"), DType::F32, {2, 3, 4},
                     [](int64_t i) { return float(i); });
  expectArray<float>(get(arrays, "big_endian"), DType::F32, {2, 3},
                     [](int64_t i) { return i + 0.5f; });
  expectArray<int64_t>(get(arrays, "be_fortran_i64"), DType::I64, {2, 3},
                       [](int64_t i) { return i - 3; });
  expectArray<float>(get(arrays, "x:0"), DType::F32, {4},
                     [](int64_t i) { return i + 10.0f; });
  expectArray<int64_t>(get(arrays, "a/b"), DType::I64, {3},
                       [](int64_t i) { return i + 7; });
}

TEST(Npz, ReadsSavez) {
  auto arrays = readNpz(inputPath("stored.npz"));
  ASSERT_TRUE(bool(arrays)) << toString(arrays.takeError());
  checkFixtureArrays(*arrays);
}

TEST(Npz, ReadsSavezCompressed) {
  auto arrays = readNpz(inputPath("compressed.npz"));
  ASSERT_TRUE(bool(arrays)) << toString(arrays.takeError());
  checkFixtureArrays(*arrays);
}

TEST(Npz, ReadsZip64Records) {
  auto arrays = readNpz(inputPath("zip64.npz"));
  ASSERT_TRUE(bool(arrays)) << toString(arrays.takeError());
  ASSERT_EQ(arrays->size(), 2u);
  EXPECT_EQ((*arrays)[0].first, "w");
  expectArray<float>((*arrays)[0].second, DType::F32, {2, 3},
                     [](int64_t i) { return i - 2.0f; });
  EXPECT_EQ((*arrays)[1].first, "h");
  expectArray<int32_t>((*arrays)[1].second, DType::I32, {4},
                       [](int64_t i) { return i * 3; });
}

TEST(Npz, ReadsNpyVersions) {
  for (const char *name : {"v1.npy", "v2.npy", "v3.npy"}) {
    auto a = readNpy(inputPath(name));
    ASSERT_TRUE(bool(a)) << name << ": " << toString(a.takeError());
    expectArray<double>(*a, DType::F64, {3, 2},
                        [](int64_t i) { return i * 1.5; });
  }
}

TEST(Npz, RejectsComplexFixture) {
  std::string path = inputPath("complex64.npz");
  std::string msg = errorOf(readNpz(path));
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("'c.npy'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("complex"), std::string::npos) << msg;
}

TEST(Npz, DTypeNames) {
  EXPECT_EQ(dtypeName(DType::F32), "float32");
  EXPECT_EQ(dtypeName(DType::F16), "float16");
  EXPECT_EQ(dtypeName(DType::U64), "uint64");
  EXPECT_EQ(dtypeName(DType::Bool), "bool");
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(dtypeSize(DType::U16), 2u);
}

//===----------------------------------------------------------------------===//
// Tests that write files: each gets a fresh directory.
//===----------------------------------------------------------------------===//

class NpzFiles : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("npz-test", dir));
  }
  void TearDown() override { sys::fs::remove_directories(dir); }

  std::string path(StringRef name) {
    SmallString<256> p(dir);
    sys::path::append(p, name);
    return std::string(p);
  }
  std::string write(StringRef name, StringRef bytes) {
    std::string p = path(name);
    std::error_code ec;
    raw_fd_ostream os(p, ec);
    EXPECT_FALSE(ec) << ec.message();
    os << bytes;
    return p;
  }
  std::string read(StringRef p) {
    auto buf = MemoryBuffer::getFile(p);
    EXPECT_TRUE(bool(buf)) << p.str();
    return buf ? (*buf)->getBuffer().str() : "";
  }
  size_t filesInDir() {
    std::error_code ec;
    size_t n = 0;
    for (sys::fs::directory_iterator it(dir, ec), e; it != e && !ec;
         it.increment(ec))
      ++n;
    return n;
  }

  SmallString<128> dir;
};

Array makeArray(DType dtype, std::vector<int64_t> shape) {
  Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(a.numElements() * a.elementSize());
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = uint8_t(i * 7 + 3);
  if (dtype == DType::Bool)
    for (size_t i = 0; i < a.data.size(); ++i)
      a.data[i] = i % 2;
  return a;
}

Arrays everyDType() {
  Arrays arrays;
  int k = 0;
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I16,
        DType::I8, DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool})
    arrays.emplace_back("t" + std::to_string(k++), makeArray(t, {2, 3}));
  arrays.emplace_back("scalar", makeArray(DType::F64, {}));
  arrays.emplace_back("empty", makeArray(DType::F32, {0, 3}));
  arrays.emplace_back("x:0", makeArray(DType::F32, {4}));
  arrays.emplace_back("a/b", makeArray(DType::I64, {1, 1, 5}));
  float f[] = {1.5f, -2.0f, 3.25f, 0.0f, 8.0f, -0.5f};
  arrays.emplace_back("from_f32", Array::fromF32({3, 2}, f));
  return arrays;
}

void expectSame(const Arrays &got, const Arrays &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.dtype, want[i].second.dtype) << want[i].first;
    EXPECT_EQ(got[i].second.shape, want[i].second.shape) << want[i].first;
    EXPECT_EQ(got[i].second.data, want[i].second.data) << want[i].first;
  }
}

TEST_F(NpzFiles, RoundTrip) {
  Arrays arrays = everyDType();
  std::string p = path("out.npz");
  ASSERT_FALSE(bool(writeNpz(p, arrays)));
  auto got = readNpz(p);
  ASSERT_TRUE(bool(got)) << toString(got.takeError());
  expectSame(*got, arrays);
  EXPECT_EQ(values<float>(get(*got, "from_f32"))[2], 3.25f);
  EXPECT_EQ(filesInDir(), 1u) << "the temporary file is gone";
}

TEST_F(NpzFiles, RoundTripForcedZip64) {
  Arrays arrays = everyDType();
  std::string p = path("out64.npz");
  WriteOptions options;
  options.forceZip64 = true;
  ASSERT_FALSE(bool(writeNpz(p, arrays, options)));
  auto got = readNpz(p);
  ASSERT_TRUE(bool(got)) << toString(got.takeError());
  expectSame(*got, arrays);
}

TEST_F(NpzFiles, RoundTripEmptyArchive) {
  std::string p = path("none.npz");
  ASSERT_FALSE(bool(writeNpz(p, {})));
  auto got = readNpz(p);
  ASSERT_TRUE(bool(got)) << toString(got.takeError());
  EXPECT_TRUE(got->empty());
}

TEST_F(NpzFiles, WritesNumpyHeaders) {
  float f[12] = {};
  std::string p = path("h.npz");
  ASSERT_FALSE(bool(writeNpz(p, {{"a", Array::fromF32({3, 4}, f)}})));
  std::string bytes = read(p);
  size_t at = bytes.find("\x93NUMPY");
  ASSERT_NE(at, std::string::npos);
  // What np.save writes: version 1.0, padded so the data is 64-aligned.
  EXPECT_EQ(bytes.substr(at + 6, 2), std::string("\x01\x00", 2));
  uint16_t hlen = support::endian::read16le(bytes.data() + at + 8);
  EXPECT_EQ((10 + hlen) % 64, 0);
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  std::string header = bytes.substr(at + 10, hlen);
  EXPECT_EQ(header, dict + std::string(hlen - dict.size() - 1, ' ') + "\n");
}

TEST_F(NpzFiles, FailedWriteLeavesTargetAlone) {
  std::string p = path("keep.npz");
  float f[2] = {1, 2};
  ASSERT_FALSE(bool(writeNpz(p, {{"a", Array::fromF32({2}, f)}})));
  std::string before = read(p);

  Array bad = Array::fromF32({2}, f);
  bad.shape = {3}; // data too short for the shape
  Error e = writeNpz(p, {{"a", Array::fromF32({2}, f)}, {"bad", bad}});
  std::string msg = toString(std::move(e));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad"), std::string::npos) << msg;
  msg = toString(writeNpz(p, {{"a", bad}, {"a", bad}}));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_EQ(read(p), before);
  EXPECT_EQ(filesInDir(), 1u);

  std::string missing = path("no/such/dir/x.npz");
  msg = toString(writeNpz(missing, {{"a", Array::fromF32({2}, f)}}));
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
}

TEST_F(NpzFiles, RejectsTruncatedFiles) {
  std::string whole = read(inputPath("stored.npz"));
  ASSERT_GT(whole.size(), 100u);
  for (size_t len : {size_t(0), size_t(3), size_t(30), whole.size() / 2,
                     whole.size() - 23, whole.size() - 1}) {
    std::string p = write("t" + std::to_string(len) + ".npz",
                          StringRef(whole).take_front(len));
    std::string msg = errorOf(readNpz(p));
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    if (len >= 4) {
      EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    }
  }
  std::string npy = read(inputPath("v1.npy"));
  ASSERT_GT(npy.size(), 3u);
  std::string p = write("t.npy", StringRef(npy).drop_back(3));
  std::string msg = errorOf(readNpy(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST_F(NpzFiles, RejectsCorruptData) {
  // A flipped byte in the last array's data (just before the central
  // directory) fails its CRC; in a deflated entry it fails one way or other.
  std::string stored = read(inputPath("stored.npz"));
  size_t cd = stored.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  stored[cd - 1] ^= 0x20;
  std::string p = write("crc.npz", stored);
  std::string msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("CRC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'a/b.npy'"), std::string::npos) << msg;

  std::string compressed = read(inputPath("compressed.npz"));
  cd = compressed.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  compressed[cd - 5] ^= 0x55;
  p = write("crc2.npz", compressed);
  msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;

  // A flipped CRC in the central directory disagrees with the data (and the
  // local header).
  stored = read(inputPath("stored.npz"));
  stored[stored.find("PK\x01\x02") + 16] ^= 1;
  p = write("crc3.npz", stored);
  msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("'f32.npy'"), std::string::npos) << msg;
}

TEST_F(NpzFiles, RejectsNonZips) {
  std::string p = write("garbage.npz", std::string(300, 'x') + "garbage");
  std::string msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a zip"), std::string::npos) << msg;

  p = write("empty.npz", "");
  msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;

  p = write("array.npz", read(inputPath("v2.npy")));
  msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(".npy file"), std::string::npos) << msg;

  p = path("does-not-exist.npz");
  msg = errorOf(readNpz(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  msg = errorOf(readNpy(p));
  EXPECT_NE(msg.find(p), std::string::npos) << msg;

  p = write("garbage.npy", "\x93NUMPX\x01\x00");
  msg = errorOf(readNpy(p));
  EXPECT_NE(msg.find("bad magic"), std::string::npos) << msg;
}

/// An .npy file: version major.0, `dict` as the header, then `payload`.
std::string makeNpy(StringRef dict, StringRef payload, char major = 1) {
  std::string header = dict.str() + "\n";
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  char len[4];
  support::endian::write32le(len, header.size());
  out.append(len, major == 1 ? 2 : 4);
  return out + header + payload.str();
}

struct ZipEntry {
  std::string name, data;
  uint16_t method = 0;
};

/// A zip of stored entries, each written as is (whatever `method` claims).
std::string makeZip(const std::vector<ZipEntry> &entries) {
  std::string out, central;
  auto le = [](std::string &s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      s += char(v >> (8 * i));
  };
  for (const ZipEntry &e : entries) {
    uint32_t crc = crc32(arrayRefFromStringRef(e.data));
    size_t offset = out.size();
    for (std::string *s : {&out, &central}) {
      bool isLocal = s == &out;
      le(*s, isLocal ? 0x04034b50 : 0x02014b50, 4);
      if (!isLocal)
        le(*s, 20, 2);
      for (uint64_t v : {20, 0, int(e.method), 0, 0})
        le(*s, v, 2);
      for (uint64_t v : {uint64_t(crc), e.data.size(), e.data.size()})
        le(*s, v, 4);
      le(*s, e.name.size(), 2);
      le(*s, 0, 2);
      if (!isLocal) {
        le(*s, 0, 6); // comment length, disk, internal attributes
        le(*s, 0, 4);
        le(*s, offset, 4);
      }
      *s += e.name;
    }
    out += e.data;
  }
  size_t cdOffset = out.size();
  out += central;
  le(out, 0x06054b50, 4);
  le(out, 0, 4);
  le(out, entries.size(), 2);
  le(out, entries.size(), 2);
  le(out, central.size(), 4);
  le(out, cdOffset, 4);
  le(out, 0, 2);
  return out;
}

TEST_F(NpzFiles, HandBuiltZipReads) {
  std::string npy =
      makeNpy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
              std::string("\1\0\2\0", 4));
  std::string p = write("ok.npz", makeZip({{"k.npy", npy}}));
  auto got = readNpz(p);
  ASSERT_TRUE(bool(got)) << toString(got.takeError());
  expectArray<int16_t>(get(*got, "k"), DType::I16, {2},
                       [](int64_t i) { return i + 1; });
}

TEST_F(NpzFiles, RejectsBadArchives) {
  std::string npy =
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
              std::string(4, '\0'));
  struct Case {
    const char *file;
    std::vector<ZipEntry> entries;
    const char *expected;
  } cases[] = {
      {"dup.npz", {{"a.npy", npy}, {"a.npy", npy}}, "duplicate key 'a'"},
      {"bzip2.npz", {{"a.npy", npy, 12}}, "compression method 12 (bzip2)"},
      {"notnpy.npz", {{"a.txt", "hello"}}, "not a .npy entry"},
  };
  for (const Case &c : cases) {
    std::string p = write(c.file, makeZip(c.entries));
    std::string msg = errorOf(readNpz(p));
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
}

TEST_F(NpzFiles, RejectsUnsupportedDTypes) {
  struct Case {
    const char *descr, *expected;
  } cases[] = {
      {"'|O'", "object"},
      {"'<c8'", "complex"},
      {"'<c16'", "complex"},
      {"'<U3'", "unicode"},
      {"'|S2'", "byte string"},
      {"'<M8[s]'", "datetime"},
      {"'<f16'", "float"},
      {"'<i3'", "integer"},
      {"[('a', '<f4')]", "structured"},
  };
  int n = 0;
  for (const Case &c : cases) {
    std::string npy = makeNpy(std::string("{'descr': ") + c.descr +
                                  ", 'fortran_order': False, 'shape': (1,), }",
                              std::string(16, '\0'));
    std::string p = write("d" + std::to_string(n++) + ".npy", npy);
    std::string msg = errorOf(readNpy(p));
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    EXPECT_NE(msg.find("unsupported dtype"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    // The same inside an .npz names the entry too.
    p = write("d" + std::to_string(n++) + ".npz", makeZip({{"x:0.npy", npy}}));
    msg = errorOf(readNpz(p));
    EXPECT_NE(msg.find(p + ": entry 'x:0.npy'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
}

TEST_F(NpzFiles, RejectsBadHeaders) {
  std::string four(4, '\0');
  struct Case {
    const char *dict;
    const char *expected;
  } cases[] = {
      {"[1, 2]", "not a dict"},
      {"{'descr': '<f4', 'shape': (1,), }", "needs 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unexpected key"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
       "fortran_order"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1], }", "tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
       "dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "expected"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
       "truncated .npy data"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), } x",
       "after the dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999, 99999999999, 99999999999), }",
       "too large"},
  };
  int n = 0;
  for (const Case &c : cases) {
    std::string p =
        write("h" + std::to_string(n++) + ".npy", makeNpy(c.dict, four));
    std::string msg = errorOf(readNpy(p));
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
  std::string p =
      write("v4.npy", makeNpy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1,), }",
                              four, 4));
  std::string msg = errorOf(readNpy(p));
  EXPECT_NE(msg.find("version 4.0"), std::string::npos) << msg;
}

} // namespace

namespace {
/// A .npy file with the given header dictionary and no data.
std::string writeNpyWithHeader(StringRef dict) {
  SmallString<128> path;
  llvm::sys::fs::createTemporaryFile("npz-test", "npy", path);
  std::string header = dict.str();
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  bytes += header;
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << bytes;
  return std::string(path);
}
} // namespace

TEST(Npz, RejectsDimensionsPastInt64InsteadOfWrapping) {
  // 2^64 and 2^64 + 1 once wrapped to 0 and 1 (numpy refuses the file).
  for (StringRef dim : {"18446744073709551616", "18446744073709551617",
                        "9223372036854775808"}) {
    std::string path = writeNpyWithHeader(
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dim + ", 4), }")
            .str());
    auto a = readNpy(path);
    ASSERT_FALSE(a) << dim.str();
    std::string msg = llvm::toString(a.takeError());
    EXPECT_NE(msg.find("integer out of range"), std::string::npos) << msg << " for " << dim.str();
    llvm::sys::fs::remove(path);
  }
  // The largest int64 still parses, and is then too large a shape.
  std::string path = writeNpyWithHeader(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 4), }");
  auto a = readNpy(path);
  ASSERT_FALSE(a);
  EXPECT_NE(llvm::toString(a.takeError()).find("shape too large"), std::string::npos);
  llvm::sys::fs::remove(path);
}
