//===- fuzz_npz.cpp - libFuzzer: the .npz reader ----------------------------===//
//
// The input is an .npz archive (what lstm-run --inputs reads): ZIP records,
// ZIP64 extras, stored or deflated members, .npy headers. Every member's
// header is seen (ReadOptions::checkMember) before it is inflated, and must
// say what the array that reads back is; every array is touched end to end.
// Seeds: test/fuzz/corpus/npz.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Support/Npz.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace lstm_opt::npz;
  std::map<std::string, std::pair<DType, std::vector<int64_t>>> seen;
  ReadOptions options;
  options.checkMember = [&](const MemberInfo &m) -> llvm::Error {
    seen[m.key.str()] = {m.dtype, m.shape};
    return llvm::Error::success();
  };
  auto arrays = readNpzBuffer(llvm::ArrayRef<uint8_t>(data, size), "fuzz.npz",
                              options);
  if (!arrays) {
    llvm::consumeError(arrays.takeError());
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const auto &[name, array] : *arrays) {
    if ((size_t)array.numElements() * array.elementSize() != array.data.size())
      __builtin_trap(); // the reader's own invariant
    auto it = seen.find(name);
    if (it == seen.end() || it->second.first != array.dtype ||
        it->second.second != array.shape)
      __builtin_trap(); // the header checked is the array read
    for (uint8_t b : array.data)
      sink ^= b;
  }
  (void)sink;
  return 0;
}
