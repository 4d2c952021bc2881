//===- fuzz_onnx_binary.cpp - libFuzzer: binary ONNX through lstm-opt ------===//
//
// The input is a binary ONNX model (ModelProto): imported (shape inference,
// bounds on nesting and sizes, no external data), then optimised and
// exported as lstm-opt does. Seeds: test/fuzz/corpus/onnx_binary.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return lstm_opt::fuzz::fuzzModel(data, size, lstm_opt::ONNXFileFormat::Binary,
                                   "fuzz.onnx");
}
