//===- fuzz_onnx_text.cpp - libFuzzer: ONNX text through lstm-opt ----------===//
//
// The input is a model in ONNX's text format (what `.onnxtext` files hold):
// parsed (the nesting scan runs before libonnx's recursive parser), then
// optimised and exported as lstm-opt does. Seeds: test/fuzz/corpus/onnx_text.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return lstm_opt::fuzz::fuzzModel(data, size, lstm_opt::ONNXFileFormat::Text,
                                   "fuzz.onnxtext");
}
