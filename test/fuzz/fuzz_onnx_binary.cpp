//===- fuzz_onnx_binary.cpp - libFuzzer: binary ONNX through lstm-opt ------===//
//
// The input is a binary ONNX model (ModelProto): imported (shape inference,
// bounds on nesting and sizes, no external data), then optimised and
// exported as lstm-opt does. Seeds: test/fuzz/corpus/onnx_binary. Mutations
// are structure-aware (ModelMutator.h): dimensions, element types,
// attributes and wiring change while the protobuf stays valid.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "ModelMutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return lstm_opt::fuzz::fuzzModel(data, size, lstm_opt::ONNXFileFormat::Binary,
                                   "fuzz.onnx");
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return lstm_opt::fuzz::mutateModel(data, size, maxSize, seed);
}
