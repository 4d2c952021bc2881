//===- CheckedMath.h - Products of sizes that cannot overflow ---*- C++ -*-===//
//
// Every size a model file states (a dimension, a hidden size, a count) is
// attacker-controlled: a product of two of them can pass 2^63, and signed
// overflow is undefined behaviour. Every product of sizes in lstm-opt goes
// through these helpers, which answer std::nullopt instead of overflowing.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_SUPPORT_CHECKEDMATH_H
#define LSTM_OPT_SUPPORT_CHECKEDMATH_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace lstm_opt {

/// a * b, or std::nullopt where the product does not fit in int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The element count of a shape (1 for rank 0, 0 when a dimension is 0), or
/// std::nullopt when a dimension is negative (dynamic) or the product of the
/// non-zero dimensions passes \p limit. Zero dimensions are skipped while the
/// product is bounded, so a shape accepted here makes every running product
/// of its dimensions, in any order, fit in int64_t (what MLIR's
/// ShapedType::getNumElements computes without a check).
inline std::optional<int64_t>
checkedNumElements(llvm::ArrayRef<int64_t> shape,
                   int64_t limit = INT64_MAX) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d == 0) {
      zero = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n) || n > limit)
      return std::nullopt;
  }
  return zero ? 0 : n;
}

/// The byte size of a dense tensor of \p shape with \p elementBytes bytes an
/// element, or std::nullopt on a negative dimension or overflow of uint64_t.
inline std::optional<uint64_t> checkedByteSize(llvm::ArrayRef<int64_t> shape,
                                               uint64_t elementBytes) {
  std::optional<int64_t> n = checkedNumElements(shape);
  if (!n)
    return std::nullopt;
  uint64_t r;
  if (__builtin_mul_overflow(uint64_t(*n), elementBytes, &r))
    return std::nullopt;
  return r;
}

} // namespace lstm_opt

#endif // LSTM_OPT_SUPPORT_CHECKEDMATH_H
