//===- fuzz_onnx_import.cpp - libFuzzer: the ONNX reader alone ------------===//
//
// The input is a binary ONNX model, read as lstm-opt reads it (protobuf,
// bounds, the ONNX library's shape inference, the importer, the ops'
// verifiers) and nothing more: ten to a hundred times the executions a
// second of lstm-opt-fuzz-onnx-binary, for long campaigns of the
// structure-aware mutator (ModelMutator.h), which changes dimensions,
// element types, attributes and wiring. Seeds: test/fuzz/corpus/onnx_binary.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "ModelMutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lstm_opt::ONNXImportOptions options;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)lstm_opt::importONNXBuffer(bytes, lstm_opt::ONNXFileFormat::Binary,
                                   "fuzz.onnx", /*baseDir=*/"",
                                   &lstm_opt::fuzz::context(), options);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return lstm_opt::fuzz::mutateModel(data, size, maxSize, seed);
}
