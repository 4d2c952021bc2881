//===- Npz.h - NumPy .npy/.npz reading and writing --------------*- C++ -*-===//
//
// A self-contained reader and writer for NumPy's .npz archives (a zip of .npy
// files, what np.savez / np.savez_compressed write) and for single .npy files.
// lstm-run uses it for inputs and outputs: an npz key is an ONNX graph
// input/output name, its value the tensor.
//
// Reading handles stored and deflated entries, ZIP64, CRC checks, .npy format
// versions 1.0-3.0, big-endian data and Fortran order; the result is always
// little-endian and C-contiguous. Writing produces an uncompressed (stored)
// archive np.load reads, replacing the destination atomically.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_SUPPORT_NPZ_H
#define LSTM_OPT_SUPPORT_NPZ_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lstm_opt {
namespace npz {

/// The element types an Array can hold (numpy's bool, intN, uintN, floatN).
enum class DType { F32, F64, F16, I64, I32, I16, I8, U8, U16, U32, U64, Bool };

/// A dense n-d array.
struct Array {
  DType dtype = DType::F32;
  /// Dimensions in C (row-major) order; empty for a 0-d array.
  std::vector<int64_t> shape;
  /// Little-endian, C-contiguous, numElements() * elementSize() bytes. Bool
  /// elements are one byte each (numpy writes 0 or 1; read bytes are kept).
  std::vector<uint8_t> data;

  /// Product of the dimensions (1 for a 0-d array, 0 if any dimension is 0).
  int64_t numElements() const;
  /// Bytes per element of dtype.
  size_t elementSize() const;

  /// A float32 array of the given shape whose numElements() values are
  /// copied from \p p (host float layout).
  static Array fromF32(std::vector<int64_t> shape, const float *p);
};

/// Size in bytes of one element of \p dtype.
size_t dtypeSize(DType dtype);

/// numpy's name of \p dtype: "float32", "int64", "bool", ...
llvm::StringRef dtypeName(DType dtype);

/// What an .npz member's .npy header says, known before its data is inflated.
struct MemberInfo {
  /// The entry name without ".npy".
  llvm::StringRef key;
  DType dtype;
  llvm::ArrayRef<int64_t> shape;
  /// The size the member inflates to, its .npy header included (the header's
  /// dtype and shape account for exactly this many bytes, or the read fails
  /// before the check).
  uint64_t bytes;
};

/// Knobs of readNpz.
struct ReadOptions {
  /// Called for every member once its .npy header has been read (from the
  /// member's first bytes only: at most 1 MiB is inflated for it) and before
  /// its data is inflated or allocated; an error stops the read. lstm-run
  /// checks the dtype, the rank, the shape and the size against the model's
  /// input, so a small archive cannot make it inflate gigabytes.
  std::function<llvm::Error(const MemberInfo &member)> checkMember;
};

/// Reads every array of the .npz at \p path, in archive order. A key is the
/// entry name without its ".npy" suffix (it may contain '/' or ':').
llvm::Expected<std::vector<std::pair<std::string, Array>>>
readNpz(llvm::StringRef path, const ReadOptions &options = {});

/// The same for the bytes of an .npz in memory; \p name is the file name
/// that error messages give.
llvm::Expected<std::vector<std::pair<std::string, Array>>>
readNpzBuffer(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name,
              const ReadOptions &options = {});

/// Reads the single array of the .npy file at \p path.
llvm::Expected<Array> readNpy(llvm::StringRef path);

/// Knobs of writeNpz; the defaults are what callers want.
struct WriteOptions {
  /// Write ZIP64 records (extras and the zip64 end of central directory)
  /// even when nothing needs them. For tests of the > 4 GiB code path.
  bool forceZip64 = false;
};

/// Writes \p arrays as an uncompressed .npz at \p path (key "k" becomes entry
/// "k.npy"). The file is written to a temporary in the same directory and
/// renamed over \p path, so on failure \p path is untouched.
llvm::Error writeNpz(llvm::StringRef path,
                     llvm::ArrayRef<std::pair<std::string, Array>> arrays);
llvm::Error writeNpz(llvm::StringRef path,
                     llvm::ArrayRef<std::pair<std::string, Array>> arrays,
                     const WriteOptions &options);

} // namespace npz
} // namespace lstm_opt

#endif // LSTM_OPT_SUPPORT_NPZ_H
