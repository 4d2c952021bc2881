//===- fuzz_npz.cpp - libFuzzer: the .npz reader ----------------------------===//
//
// The input is an .npz archive (what lstm-run --inputs reads): ZIP records,
// ZIP64 extras, stored or deflated members, .npy headers. Every array that
// reads back is touched end to end. Seeds: test/fuzz/corpus/npz.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Support/Npz.h"

#include "llvm/Support/Error.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto arrays = lstm_opt::npz::readNpzBuffer(llvm::ArrayRef<uint8_t>(data, size),
                                             "fuzz.npz");
  if (!arrays) {
    llvm::consumeError(arrays.takeError());
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const auto &[name, array] : *arrays) {
    if ((size_t)array.numElements() * array.elementSize() != array.data.size())
      __builtin_trap(); // the reader's own invariant
    for (uint8_t b : array.data)
      sink ^= b;
  }
  (void)sink;
  return 0;
}
