//===- Npz.cpp - NumPy .npy/.npz reading and writing ----------------------===//
//
// .npy is numpy/lib/format.py: "\x93NUMPY", a version, a header length and a
// python-dict header {'descr': ..., 'fortran_order': ..., 'shape': ...}, then
// the raw data. .npz is a zip of .npy entries (PKWARE APPNOTE 6.3; 4.3.7 the
// local header, 4.3.12 the central directory, 4.3.14-16 the end records and
// 4.5.3 the ZIP64 extra field). Reading goes through the central directory;
// every error names the file and, when there is one, the entry.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Support/Npz.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

using namespace llvm;
using namespace lstm_opt::npz;

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50,
                   kEndSig = 0x06054b50, kZip64EndSig = 0x06064b50,
                   kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kMax32 = 0xffffffffu;
constexpr uint64_t kMax16 = 0xffffu;
/// zlib counts in 32-bit uInt; feed it at most this much at a time.
constexpr size_t kZlibChunk = size_t(1) << 30;
/// .npy headers larger than this are refused (numpy writes a few hundred
/// bytes; format 1.0 cannot say more than 64 KiB).
constexpr uint64_t kMaxNpyHeader = uint64_t(1) << 20;
/// The most bytes of a member read (inflated) to parse its header.
constexpr uint64_t kMaxNpyPrefix = kMaxNpyHeader + 12;
/// numpy's own limit on the number of dimensions.
constexpr size_t kMaxNpyRank = 64;
constexpr char kNpyMagic[] = "\x93NUMPY";

uint16_t rd16(const uint8_t *p) { return support::endian::read16le(p); }
uint32_t rd32(const uint8_t *p) { return support::endian::read32le(p); }
uint64_t rd64(const uint8_t *p) { return support::endian::read64le(p); }

/// Where an error happened: the file and, inside an archive, the entry.
struct Ctx {
  StringRef path;
  StringRef entry;
  Error err(const Twine &msg) const {
    if (entry.empty())
      return createStringError(inconvertibleErrorCode(), path + ": " + msg);
    return createStringError(inconvertibleErrorCode(),
                             path + ": entry '" + entry + "': " + msg);
  }
};

uint32_t crc32Of(uint32_t crc, const uint8_t *p, size_t n) {
  while (n) {
    size_t chunk = std::min(n, kZlibChunk);
    crc = ::crc32(crc, p, static_cast<uInt>(chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

std::string hex32(uint32_t v) {
  std::string digits = utohexstr(v, /*LowerCase=*/true);
  return "0x" + std::string(8 - digits.size(), '0') + digits;
}

//===----------------------------------------------------------------------===//
// .npy header: a python literal (dict of str, bool, tuple of int)
//===----------------------------------------------------------------------===//

struct PyValue {
  enum Kind { Str, Int, Bool, None, Seq, Dict } kind = None;
  std::string str;
  int64_t num = 0; // Int; Bool as 0/1
  bool isList = false;
  std::vector<PyValue> items; // Seq elements; Dict keys and values alternate
};

/// Recursive descent over the subset of python literals numpy headers use.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : s(text) {}
  /// Parses the whole text as one value; on failure returns false and sets
  /// `error`.
  bool parseAll(PyValue &out) {
    if (!parse(out, 0))
      return false;
    skipSpace();
    if (pos != s.size())
      return fail("unexpected text after the dict");
    return true;
  }
  std::string error;

private:
  StringRef s;
  size_t pos = 0;

  bool fail(const Twine &msg) {
    error = (msg + " at offset " + Twine(pos)).str();
    return false;
  }
  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' ||
                              s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool parse(PyValue &v, int depth) {
    if (depth > 32)
      return fail("nesting too deep");
    skipSpace();
    if (pos >= s.size())
      return fail("unexpected end");
    char c = s[pos];
    if ((c == 'u' || c == 'b') && pos + 1 < s.size() &&
        (s[pos + 1] == '\'' || s[pos + 1] == '"'))
      c = s[++pos]; // python 2 u'...' / b'...'
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Str;
      for (++pos; pos < s.size() && s[pos] != c; ++pos) {
        if (s[pos] == '\\' && ++pos >= s.size())
          break;
        v.str += s[pos];
      }
      if (pos >= s.size())
        return fail("unterminated string");
      ++pos;
      return true;
    }
    if (c == '-' || isDigit(c)) {
      v.kind = PyValue::Int;
      bool neg = c == '-';
      if (neg && (++pos >= s.size() || !isDigit(s[pos])))
        return fail("bad number");
      uint64_t mag = 0;
      for (; pos < s.size() && isDigit(s[pos]); ++pos) {
        // Checked before the multiplication, which would otherwise wrap
        // (2^64 read as 0).
        uint64_t digit = s[pos] - '0';
        if (mag > (uint64_t(INT64_MAX) - digit) / 10)
          return fail("integer out of range");
        mag = mag * 10 + digit;
      }
      if (pos < s.size() && (s[pos] == 'L' || s[pos] == 'l'))
        ++pos; // python 2 long
      v.num = neg ? -int64_t(mag) : int64_t(mag);
      return true;
    }
    if (c == '(' || c == '[' || c == '{') {
      bool isDict = c == '{';
      char close = c == '(' ? ')' : c == '[' ? ']' : '}';
      v.kind = isDict ? PyValue::Dict : PyValue::Seq;
      v.isList = c == '[';
      ++pos;
      for (;;) {
        skipSpace();
        if (pos < s.size() && s[pos] == close) {
          ++pos;
          return true;
        }
        v.items.emplace_back();
        if (!parse(v.items.back(), depth + 1))
          return false;
        skipSpace();
        if (isDict) {
          if (pos >= s.size() || s[pos] != ':')
            return fail("expected ':'");
          ++pos;
          v.items.emplace_back();
          if (!parse(v.items.back(), depth + 1))
            return false;
          skipSpace();
        }
        if (pos < s.size() && s[pos] == ',')
          ++pos;
        else if (pos >= s.size() || s[pos] != close)
          return fail(Twine("expected ',' or '") + Twine(close) + "'");
      }
    }
    for (StringRef word : {"True", "False", "None"}) {
      if (s.substr(pos).starts_with(word)) {
        pos += word.size();
        v.kind = word == "None" ? PyValue::None : PyValue::Bool;
        v.num = word == "True";
        return true;
      }
    }
    return fail(Twine("unexpected character '") + Twine(c) + "'");
  }
};

struct DTypeInfo {
  DType dtype;
  const char *name;
  const char *descr; // what np.save writes
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "float32", "<f4"}, {DType::F64, "float64", "<f8"},
    {DType::F16, "float16", "<f2"}, {DType::I64, "int64", "<i8"},
    {DType::I32, "int32", "<i4"},   {DType::I16, "int16", "<i2"},
    {DType::I8, "int8", "|i1"},     {DType::U8, "uint8", "|u1"},
    {DType::U16, "uint16", "<u2"},  {DType::U32, "uint32", "<u4"},
    {DType::U64, "uint64", "<u8"},  {DType::Bool, "bool", "|b1"}};

const DTypeInfo *infoOf(DType dtype) {
  for (const DTypeInfo &i : kDTypes)
    if (i.dtype == dtype)
      return &i;
  return nullptr;
}

/// Maps an .npy 'descr' string to a DType; `swap` is set when the data is in
/// the opposite byte order from little-endian.
Error parseDescr(StringRef descr, DType &dtype, bool &swap, const Ctx &ctx) {
  char order = '='; // no byte-order mark: native
  StringRef code = descr;
  if (!code.empty() && StringRef("<>|=").contains(code.front())) {
    order = code.front();
    code = code.drop_front();
  }
  swap = order == '>' || (order == '=' && sys::IsBigEndianHost);
  for (const DTypeInfo &i : kDTypes) {
    if (code == StringRef(i.descr).drop_front()) {
      dtype = i.dtype;
      return Error::success();
    }
  }
  static const std::pair<char, const char *> kKinds[] = {
      {'f', "extended-precision float"},
      {'i', "unusual integer size"},
      {'u', "unusual integer size"},
      {'b', "unusual bool size"},
      {'c', "complex"},
      {'O', "object; needs pickle"},
      {'V', "void/structured"},
      {'U', "unicode string"},
      {'S', "byte string"},
      {'a', "byte string"},
      {'M', "datetime"},
      {'m', "timedelta"}};
  StringRef what = "unknown type code";
  for (const auto &[kind, name] : kKinds)
    if (code.starts_with(StringRef(&kind, 1)))
      what = name;
  return ctx.err("unsupported dtype '" + descr + "' (" + what + ")");
}

/// What an .npy header says: enough to check a member against what it is
/// for before its data is read or inflated.
struct NpyHeader {
  Array array; // dtype and shape; no data yet
  bool swap = false;
  bool fortran = false;
  uint64_t dataStart = 0;
  uint64_t nbytes = 0;
};

/// Parses the header at the start of \p bytes (which may hold only a prefix
/// of the file) of an .npy whose whole size is \p total bytes; the data that
/// the header's dtype and shape need must be exactly what follows it.
Expected<NpyHeader> parseNpyHeader(ArrayRef<uint8_t> bytes, uint64_t total,
                                   const Ctx &ctx) {
  if (bytes.size() < 6 || std::memcmp(bytes.data(), kNpyMagic, 6) != 0)
    return ctx.err("not a .npy file (bad magic)");
  if (bytes.size() < 10)
    return ctx.err("truncated .npy header");
  unsigned major = bytes[6], minor = bytes[7];
  uint64_t headerLen, headerStart;
  if (major == 1 && minor == 0) {
    headerLen = rd16(&bytes[8]);
    headerStart = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (bytes.size() < 12)
      return ctx.err("truncated .npy header");
    headerLen = rd32(&bytes[8]);
    headerStart = 12;
  } else {
    return ctx.err("unsupported .npy format version " + Twine(major) + "." +
                   Twine(minor));
  }
  if (headerLen > kMaxNpyHeader)
    return ctx.err("bad .npy header: " + Twine(headerLen) +
                   " header bytes declared, more than " +
                   Twine(kMaxNpyHeader));
  if (headerLen > bytes.size() - headerStart)
    return ctx.err("truncated .npy header (" + Twine(headerLen) +
                   " header bytes declared, " +
                   Twine(bytes.size() - headerStart) + " present)");
  StringRef text(reinterpret_cast<const char *>(&bytes[headerStart]),
                 headerLen);
  HeaderParser parser(text);
  PyValue dict;
  if (!parser.parseAll(dict))
    return ctx.err("bad .npy header: " + parser.error);
  if (dict.kind != PyValue::Dict)
    return ctx.err("bad .npy header: not a dict");
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue &key = dict.items[i];
    const PyValue **slot = nullptr;
    if (key.kind == PyValue::Str && key.str == "descr")
      slot = &descr;
    else if (key.kind == PyValue::Str && key.str == "fortran_order")
      slot = &fortran;
    else if (key.kind == PyValue::Str && key.str == "shape")
      slot = &shape;
    if (!slot)
      return ctx.err("bad .npy header: unexpected key in " + text.rtrim());
    if (*slot)
      return ctx.err("bad .npy header: repeated key '" + key.str + "'");
    *slot = &dict.items[i + 1];
  }
  if (!descr || !fortran || !shape)
    return ctx.err("bad .npy header: needs 'descr', 'fortran_order' and "
                   "'shape': " +
                   text.rtrim());
  if (descr->kind == PyValue::Seq)
    return ctx.err("unsupported dtype (structured, with fields): " +
                   text.rtrim());
  if (descr->kind != PyValue::Str)
    return ctx.err("bad .npy header: 'descr' is not a string");
  if (fortran->kind != PyValue::Bool)
    return ctx.err("bad .npy header: 'fortran_order' is not True/False");
  if (shape->kind != PyValue::Seq || shape->isList)
    return ctx.err("bad .npy header: 'shape' is not a tuple");

  NpyHeader h;
  Array &a = h.array;
  if (Error e = parseDescr(descr->str, a.dtype, h.swap, ctx))
    return e;
  if (shape->items.size() > kMaxNpyRank)
    return ctx.err("bad .npy header: rank " + Twine(shape->items.size()) +
                   " is above " + Twine(kMaxNpyRank));
  for (const PyValue &d : shape->items) {
    if (d.kind != PyValue::Int || d.num < 0)
      return ctx.err("bad .npy header: bad dimension in 'shape'");
    a.shape.push_back(d.num);
  }
  std::optional<uint64_t> nbytes = lstm_opt::checkedByteSize(a.shape, a.elementSize());
  if (!nbytes)
    return ctx.err("bad .npy header: shape too large");
  h.fortran = fortran->num;
  h.nbytes = *nbytes;
  h.dataStart = headerStart + headerLen;
  uint64_t present = total - h.dataStart;
  if (present != h.nbytes)
    return ctx.err(Twine(present < h.nbytes ? "truncated .npy data: "
                                            : "bad .npy data: ") +
                   Twine(present) + " bytes after the header, " +
                   dtypeName(a.dtype) + " shape needs " + Twine(h.nbytes));
  return h;
}

Expected<Array> parseNpy(ArrayRef<uint8_t> bytes, const Ctx &ctx) {
  Expected<NpyHeader> header = parseNpyHeader(bytes, bytes.size(), ctx);
  if (!header)
    return header.takeError();
  Array a = std::move(header->array);
  bool swap = header->swap;
  uint64_t nbytes = header->nbytes;
  int64_t n = a.numElements();
  size_t es = a.elementSize();
  const uint8_t *src = bytes.data() + header->dataStart;

  if (swap && es > 1) {
    a.data.assign(src, src + nbytes);
    for (uint8_t *p = a.data.data(), *e = p + nbytes; p != e; p += es)
      std::reverse(p, p + es);
    src = a.data.data();
  }
  size_t rank = a.shape.size();
  if (!header->fortran || rank < 2 || n < 2) {
    if (src != a.data.data())
      a.data.assign(src, src + nbytes);
    return a;
  }
  // Fortran order: walk the C-order output with an odometer over the indices
  // and keep the Fortran (column-major) source offset in step.
  std::vector<uint8_t> out(nbytes);
  SmallVector<int64_t> idx(rank, 0), stride(rank, 1);
  for (size_t k = 1; k < rank; ++k)
    stride[k] = stride[k - 1] * a.shape[k - 1];
  int64_t from = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&out[i * es], src + from * es, es);
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < a.shape[k]) {
        from += stride[k];
        break;
      }
      from -= (a.shape[k] - 1) * stride[k];
      idx[k] = 0;
    }
  }
  a.data = std::move(out);
  return a;
}

//===----------------------------------------------------------------------===//
// Zip reading
//===----------------------------------------------------------------------===//

/// Replaces each saturated 32/16-bit header field (`saturated[i]`) by the
/// 64-bit value from the ZIP64 extra field (id 1), which holds just those
/// fields, in order.
Error applyZip64Extra(ArrayRef<uint8_t> extra, uint64_t *fields[],
                      const bool saturated[], unsigned count, const Ctx &ctx) {
  bool any = false;
  for (unsigned i = 0; i < count; ++i)
    any |= saturated[i];
  for (size_t pos = 0; any && pos + 4 <= extra.size();) {
    uint16_t id = rd16(&extra[pos]), len = rd16(&extra[pos + 2]);
    if (len > extra.size() - pos - 4)
      break;
    if (id == 1) {
      size_t at = pos + 4, end = at + len;
      for (unsigned i = 0; i < count; ++i) {
        if (!saturated[i])
          continue;
        if (at + 8 > end)
          return ctx.err("ZIP64 extra field too short");
        *fields[i] = rd64(&extra[at]);
        at += 8;
      }
      return Error::success();
    }
    pos += 4 + len;
  }
  if (any)
    return ctx.err("sizes need a ZIP64 extra field, which is missing");
  return Error::success();
}

/// Inflates the raw deflate stream \p in into \p out, which must be exactly
/// its size; with \p prefixOnly, \p out may be a prefix (inflation stops
/// once it is full).
Error inflateRaw(ArrayRef<uint8_t> in, MutableArrayRef<uint8_t> out,
                 const Ctx &ctx, bool prefixOnly = false) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -15) != Z_OK)
    return ctx.err("zlib inflateInit2 failed");
  uint8_t dummy = 0; // zlib rejects a null next_out
  zs.next_in = const_cast<Bytef *>(in.data());
  zs.next_out = out.empty() ? &dummy : out.data();
  const uint8_t *inEnd = in.data() + in.size();
  uint8_t *outEnd = out.empty() ? &dummy : out.data() + out.size();
  int rc;
  for (;;) {
    if (zs.avail_in == 0)
      zs.avail_in = uInt(std::min<size_t>(inEnd - zs.next_in, kZlibChunk));
    if (zs.avail_out == 0)
      zs.avail_out = uInt(std::min<size_t>(outEnd - zs.next_out, kZlibChunk));
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK)
      break;
  }
  bool outFull = zs.next_out == outEnd;
  std::string msg = zs.msg ? zs.msg : "";
  inflateEnd(&zs);
  if ((rc == Z_STREAM_END || (prefixOnly && rc == Z_BUF_ERROR)) && outFull)
    return Error::success();
  if (rc == Z_STREAM_END)
    return ctx.err("deflated data is shorter than the declared size " +
                   Twine(out.size()));
  if (rc == Z_BUF_ERROR && outFull)
    return ctx.err("deflated data is longer than the declared size " +
                   Twine(out.size()));
  if (rc == Z_BUF_ERROR)
    return ctx.err("truncated deflate stream");
  return ctx.err("corrupt deflate stream" + (msg.empty() ? "" : ": " + msg));
}

StringRef methodName(unsigned method) {
  switch (method) {
  case 9:
    return "deflate64";
  case 12:
    return "bzip2";
  case 14:
    return "lzma";
  case 93:
    return "zstd";
  case 95:
    return "xz";
  default:
    return "unknown";
  }
}

} // namespace

int64_t Array::numElements() const {
  // The readers refuse shapes whose count does not fit; -1 otherwise.
  return lstm_opt::checkedNumElements(shape).value_or(-1);
}

size_t Array::elementSize() const { return dtypeSize(dtype); }

Array Array::fromF32(std::vector<int64_t> shape, const float *p) {
  Array a;
  a.dtype = DType::F32;
  a.shape = std::move(shape);
  size_t n = a.numElements();
  a.data.resize(n * 4);
  for (size_t i = 0; i < n; ++i)
    support::endian::write32le(&a.data[i * 4], llvm::bit_cast<uint32_t>(p[i]));
  return a;
}

size_t lstm_opt::npz::dtypeSize(DType dtype) {
  const DTypeInfo *info = infoOf(dtype);
  return info ? info->descr[2] - '0' : 0;
}

StringRef lstm_opt::npz::dtypeName(DType dtype) {
  const DTypeInfo *info = infoOf(dtype);
  return info ? info->name : "unknown";
}

Expected<Array> lstm_opt::npz::readNpy(StringRef path) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!buf)
    return Ctx{path, ""}.err(buf.getError().message());
  ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
      (*buf)->getBufferSize());
  return parseNpy(bytes, Ctx{path, ""});
}

Expected<std::vector<std::pair<std::string, Array>>>
lstm_opt::npz::readNpz(StringRef path, const ReadOptions &options) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!buf)
    return Ctx{path, ""}.err(buf.getError().message());
  return readNpzBuffer(
      ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
          (*buf)->getBufferSize()),
      path, options);
}

Expected<std::vector<std::pair<std::string, Array>>>
lstm_opt::npz::readNpzBuffer(ArrayRef<uint8_t> bytes, StringRef name,
                             const ReadOptions &options) {
  Ctx ctx{name, ""};
  const uint8_t *p = bytes.data();
  uint64_t size = bytes.size();

  // The end of central directory record: 22 bytes plus a comment of at most
  // 64 KiB at the very end of the file.
  uint64_t end = UINT64_MAX;
  for (uint64_t pos = size >= 22 ? size - 22 + 1 : 0; pos-- > 0;) {
    if (rd32(p + pos) == kEndSig && pos + 22 + rd16(p + pos + 20) <= size) {
      end = pos;
      break;
    }
    if (size - pos >= 22 + kMax16)
      break;
  }
  if (end == UINT64_MAX) {
    if (size >= 6 && std::memcmp(p, kNpyMagic, 6) == 0)
      return ctx.err("is a .npy file, not an .npz archive");
    if (size >= 4 && rd32(p) == kLocalSig)
      return ctx.err("truncated zip archive (no end of central directory "
                     "record)");
    return ctx.err("not a zip archive (no end of central directory record)");
  }
  uint64_t disk = rd16(p + end + 4), cdDisk = rd16(p + end + 6);
  uint64_t count = rd16(p + end + 10), cdSize = rd32(p + end + 12),
           cdOffset = rd32(p + end + 16), cdLimit = end;
  if (end >= 20 && rd32(p + end - 20) == kZip64LocatorSig) {
    uint64_t z = rd64(p + end - 12);
    if (z > end - 20 || end - 20 - z < 56 || rd32(p + z) != kZip64EndSig)
      return ctx.err("corrupt ZIP64 end of central directory record");
    disk = rd32(p + z + 16);
    cdDisk = rd32(p + z + 20);
    count = rd64(p + z + 32);
    cdSize = rd64(p + z + 40);
    cdOffset = rd64(p + z + 48);
    cdLimit = z;
  } else if (count == kMax16 || cdSize == kMax32 || cdOffset == kMax32) {
    return ctx.err("ZIP64 end of central directory locator is missing");
  }
  if (disk != 0 || cdDisk != 0)
    return ctx.err("multi-volume zip archives are not supported");
  if (cdOffset > cdLimit || cdSize > cdLimit - cdOffset)
    return ctx.err("truncated or corrupt zip archive (central directory at " +
                   Twine(cdOffset) + "+" + Twine(cdSize) + " is past " +
                   Twine(cdLimit) + ")");
  if (count > cdSize / 46)
    return ctx.err("corrupt central directory (" + Twine(count) +
                   " entries cannot fit in " + Twine(cdSize) + " bytes)");

  std::vector<std::pair<std::string, Array>> result;
  StringSet<> keys;
  uint64_t pos = cdOffset, cdEnd = cdOffset + cdSize;
  for (uint64_t i = 0; i < count; ++i) {
    ctx.entry = "";
    if (cdEnd - pos < 46 || rd32(p + pos) != kCentralSig)
      return ctx.err("corrupt central directory (entry " + Twine(i) +
                     " at offset " + Twine(pos) + ")");
    const uint8_t *h = p + pos;
    uint16_t flags = rd16(h + 8), method = rd16(h + 10);
    uint32_t crc = rd32(h + 16);
    uint64_t compSize = rd32(h + 20), rawSize = rd32(h + 24);
    uint64_t nameLen = rd16(h + 28), extraLen = rd16(h + 30),
             commentLen = rd16(h + 32), entryDisk = rd16(h + 34),
             local = rd32(h + 42);
    if (cdEnd - pos - 46 < nameLen + extraLen + commentLen)
      return ctx.err("corrupt central directory (entry " + Twine(i) +
                     " overruns it)");
    StringRef name(reinterpret_cast<const char *>(h + 46), nameLen);
    ctx.entry = name;
    pos += 46 + nameLen + extraLen + commentLen;
    uint64_t *fields[] = {&rawSize, &compSize, &local, &entryDisk};
    bool saturated[] = {rawSize == kMax32, compSize == kMax32, local == kMax32,
                        entryDisk == kMax16};
    if (Error e = applyZip64Extra(ArrayRef(h + 46 + nameLen, extraLen), fields,
                                  saturated, 4, ctx))
      return e;
    if (entryDisk != 0)
      return ctx.err("multi-volume zip archives are not supported");
    if (flags & 1)
      return ctx.err("encrypted entries are not supported");
    if (method != 0 && method != 8)
      return ctx.err("unsupported compression method " + Twine(method) + " (" +
                     methodName(method) + "); only stored and deflate are");
    if (!name.ends_with(".npy"))
      return ctx.err("not a .npy entry (an .npz holds only NAME.npy files)");
    StringRef key = name.drop_back(4);
    if (!keys.insert(key).second)
      return ctx.err("duplicate key '" + key + "'");

    // The local header: only its name and extra lengths locate the data,
    // but what it says must agree with the central directory.
    if (local > size || size - local < 30 || rd32(p + local) != kLocalSig)
      return ctx.err("bad local header offset " + Twine(local));
    const uint8_t *l = p + local;
    uint64_t lNameLen = rd16(l + 26), lExtraLen = rd16(l + 28);
    uint64_t dataStart = local + 30 + lNameLen + lExtraLen;
    if (dataStart > size)
      return ctx.err("truncated local header");
    if (StringRef(reinterpret_cast<const char *>(l + 30), lNameLen) != name)
      return ctx.err("local header name does not match the central directory");
    uint64_t lComp = rd32(l + 18), lRaw = rd32(l + 22);
    uint64_t *lFields[] = {&lRaw, &lComp};
    bool lSaturated[] = {lRaw == kMax32, lComp == kMax32};
    if (lSaturated[0] || lSaturated[1]) // the local extra holds both sizes
      lSaturated[0] = lSaturated[1] = true;
    if (Error e = applyZip64Extra(ArrayRef(l + 30 + lNameLen, lExtraLen),
                                  lFields, lSaturated, 2, ctx))
      return e;
    if (rd16(l + 8) != method ||
        (!(flags & 8) &&
         (rd32(l + 14) != crc || lComp != compSize || lRaw != rawSize)))
      return ctx.err("local header disagrees with the central directory");
    if (compSize > size - dataStart)
      return ctx.err("truncated entry data (" + Twine(compSize) +
                     " bytes at offset " + Twine(dataStart) + ", file is " +
                     Twine(size) + " bytes)");

    ArrayRef<uint8_t> raw(p + dataStart, compSize);
    if (method == 0 && compSize != rawSize)
      return ctx.err("stored entry has compressed size " + Twine(compSize) +
                     " != size " + Twine(rawSize));
    // The .npy header first, from the member's first bytes (inflating only
    // those): its dtype and shape must account for the declared size, and
    // the caller sees them before anything else is allocated.
    ArrayRef<uint8_t> prefix = raw.take_front(kMaxNpyPrefix);
    std::vector<uint8_t> inflatedPrefix;
    if (method != 0) {
      inflatedPrefix.resize(std::min<uint64_t>(rawSize, kMaxNpyPrefix));
      if (Error e = inflateRaw(raw, inflatedPrefix, ctx, /*prefixOnly=*/true))
        return e;
      prefix = inflatedPrefix;
    }
    Expected<NpyHeader> header = parseNpyHeader(prefix, rawSize, ctx);
    if (!header)
      return header.takeError();
    if (options.checkMember) {
      MemberInfo info{key, header->array.dtype, header->array.shape, rawSize};
      if (Error e = options.checkMember(info))
        return e;
    }
    std::vector<uint8_t> inflated;
    if (method != 0) {
      // Deflate expands at most ~1032:1; refuse absurd sizes before
      // allocating them.
      if (rawSize / 1032 > compSize + 1024)
        return ctx.err("implausible uncompressed size " + Twine(rawSize));
      inflated.resize(rawSize);
      if (Error e = inflateRaw(raw, inflated, ctx))
        return e;
      raw = inflated;
    }
    uint32_t actual = crc32Of(0, raw.data(), raw.size());
    if (actual != crc)
      return ctx.err("CRC-32 mismatch (directory says " + hex32(crc) +
                     ", data has " + hex32(actual) + ")");
    Expected<Array> array = parseNpy(raw, ctx);
    if (!array)
      return array.takeError();
    result.emplace_back(key.str(), std::move(*array));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// The .npy header numpy's np.save writes for a C-order array, byte for byte
/// (version 1.0 unless the header needs more than 65535 bytes).
std::string npyHeader(const Array &a) {
  std::string dict = std::string("{'descr': '") + infoOf(a.dtype)->descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(a.shape[i]);
  dict += a.shape.size() == 1 ? ",), }" : "), }";
  // Room to grow the first axis in place (numpy's GROWTH_AXIS_MAX_DIGITS).
  if (!a.shape.empty())
    dict.append(21 - std::to_string(a.shape[0]).size(), ' ');
  size_t hlen = dict.size() + 1; // + '\n'
  unsigned lenBytes = 2;
  size_t pad = 64 - (6 + 2 + lenBytes + hlen) % 64;
  if (hlen + pad > kMax16) {
    lenBytes = 4;
    pad = 64 - (6 + 2 + lenBytes + hlen) % 64;
  }
  std::string out(kNpyMagic, 6);
  out += char(lenBytes == 2 ? 1 : 2);
  out += char(0);
  uint8_t len[4];
  support::endian::write32le(len, uint32_t(hlen + pad));
  out.append(reinterpret_cast<const char *>(len), lenBytes);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

struct EntryInfo {
  std::string name;
  uint32_t crc;
  uint64_t size, offset;
  uint16_t flags;
};

/// Writes little-endian fields like python's struct.pack('<' + fmt, ...):
/// H is 2 bytes, I 4, Q 8.
void pack(raw_ostream &os, StringRef fmt, std::initializer_list<uint64_t> vs) {
  assert(fmt.size() == vs.size() && "one format letter per value");
  const char *f = fmt.begin();
  for (uint64_t v : vs) {
    char b[8];
    support::endian::write64le(b, v);
    os.write(b, *f == 'H' ? 2 : *f == 'I' ? 4 : 8);
    ++f;
  }
}

constexpr uint64_t kDosDate = 0x21; // 1980-01-01 00:00: reproducible output

} // namespace

Error lstm_opt::npz::writeNpz(StringRef path,
                              ArrayRef<std::pair<std::string, Array>> arrays) {
  return writeNpz(path, arrays, WriteOptions());
}

Error lstm_opt::npz::writeNpz(StringRef path,
                              ArrayRef<std::pair<std::string, Array>> arrays,
                              const WriteOptions &options) {
  // Check everything before creating any file.
  StringSet<> keys;
  for (const auto &[key, a] : arrays) {
    Ctx ctx{path, key};
    if (key.empty())
      return Ctx{path, ""}.err("cannot write an array with an empty key");
    if (!keys.insert(key).second)
      return ctx.err("duplicate key");
    if (key.size() + 4 > kMax16)
      return ctx.err("key too long");
    if (!infoOf(a.dtype))
      return ctx.err("invalid dtype");
    std::optional<int64_t> count = lstm_opt::checkedNumElements(a.shape);
    if (!count)
      return ctx.err("invalid shape");
    int64_t n = *count;
    if (uint64_t(n) > SIZE_MAX / a.elementSize() ||
        a.data.size() != uint64_t(n) * a.elementSize())
      return ctx.err("has " + Twine(a.data.size()) + " bytes of data, its " +
                     dtypeName(a.dtype) + " shape needs " +
                     Twine(uint64_t(n) * a.elementSize()));
  }

  // A fresh file next to `path`, renamed over it at the end. (Not
  // sys::fs::TempFile: its name model would expand any '%' in `path`.)
  Ctx ctx{path, ""};
  SmallString<256> tmp;
  int fd = -1;
  std::error_code ec;
  for (unsigned attempt = 0; attempt < 64; ++attempt) {
    tmp = path;
    tmp += ".tmp-" + utohexstr(sys::Process::GetRandomNumber()) +
           utohexstr(sys::Process::GetRandomNumber());
    ec = sys::fs::openFileForWrite(tmp, fd, sys::fs::CD_CreateNew);
    if (ec != std::errc::file_exists)
      break;
  }
  if (ec)
    return ctx.err("cannot create temporary file '" + tmp +
                   "': " + ec.message());
  sys::RemoveFileOnSignal(tmp);
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    bool force = options.forceZip64;
    std::vector<EntryInfo> entries;
    for (const auto &[key, a] : arrays) {
      std::string header = npyHeader(a);
      EntryInfo e;
      e.name = key + ".npy";
      e.size = header.size() + a.data.size();
      e.offset = os.tell();
      bool utf8 = llvm::any_of(e.name, [](char c) { return c & 0x80; });
      e.flags = utf8 ? 0x800 : 0;
      e.crc = crc32Of(0, reinterpret_cast<const uint8_t *>(header.data()),
                      header.size());
      e.crc = crc32Of(e.crc, a.data.data(), a.data.size());
      // Local header: version needed, flags, method 0 (stored), time, date,
      // crc, sizes, name and extra lengths; the ZIP64 extra has both sizes.
      bool big = force || e.size >= kMax32;
      uint64_t size32 = big ? kMax32 : e.size;
      pack(os, "IHHHHHIIIHH",
           {kLocalSig, big ? 45u : 20u, e.flags, 0, 0, kDosDate, e.crc, size32,
            size32, e.name.size(), big ? 20u : 0u});
      os << e.name;
      if (big)
        pack(os, "HHQQ", {1, 16, e.size, e.size});
      os << header;
      os.write(reinterpret_cast<const char *>(a.data.data()), a.data.size());
      entries.push_back(std::move(e));
    }
    uint64_t cdOffset = os.tell();
    for (const EntryInfo &e : entries) {
      // Central header: made by (Unix, 4.5), the local header's fields,
      // comment length, disk, attributes (a -rw-r--r-- file), local offset;
      // the ZIP64 extra holds just the saturated fields, in this order.
      bool bigSize = force || e.size >= kMax32;
      bool bigOffset = force || e.offset >= kMax32;
      unsigned extra = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0);
      uint64_t size32 = bigSize ? kMax32 : e.size;
      pack(os, "IHHHHHHIIIHHHHHII",
           {kCentralSig, 0x0300 | 45, extra ? 45u : 20u, e.flags, 0, 0,
            kDosDate, e.crc, size32, size32, e.name.size(),
            extra ? extra + 4 : 0u, 0, 0, 0, 0100644u << 16,
            bigOffset ? kMax32 : e.offset});
      os << e.name;
      if (extra)
        pack(os, "HH", {1, extra});
      if (bigSize)
        pack(os, "QQ", {e.size, e.size});
      if (bigOffset)
        pack(os, "Q", {e.offset});
    }
    uint64_t cdEnd = os.tell(), cdSize = cdEnd - cdOffset, n = entries.size();
    bool big = force || n >= kMax16 || cdSize >= kMax32 || cdOffset >= kMax32;
    if (big) {
      // ZIP64 end of central directory record (size of the rest, versions,
      // disks, entry counts, directory size and offset) and its locator.
      pack(os, "IQHHIIQQQQ",
           {kZip64EndSig, 44, 45, 45, 0, 0, n, n, cdSize, cdOffset});
      pack(os, "IIQI", {kZip64LocatorSig, 0, cdEnd, 1});
    }
    pack(os, "IHHHHIIH",
         {kEndSig, 0, 0, big ? kMax16 : n, big ? kMax16 : n,
          big ? kMax32 : cdSize, big ? kMax32 : cdOffset, 0});
    os.close(); // flushes; a failed write or close is in os.error()
    ec = os.error();
    os.clear_error();
  }
  StringRef failed = "write failed";
  if (!ec) {
    failed = "cannot rename the temporary file into place";
    ec = sys::fs::rename(tmp, path);
  }
  if (ec)
    sys::fs::remove(tmp);
  sys::DontRemoveFileOnSignal(tmp);
  if (ec)
    return ctx.err(failed + ": " + ec.message());
  return Error::success();
}
