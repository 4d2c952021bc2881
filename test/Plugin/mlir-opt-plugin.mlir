// RUN: %mlir-opt %s --load-dialect-plugin=%plugin --load-pass-plugin=%plugin --pass-pipeline='builtin.module(lstm-opt-default)' | FileCheck %s
// An instrumented plugin cannot load into the uninstrumented mlir-opt.
// UNSUPPORTED: sanitizer

// Debian's mlir-opt with lstm-opt loaded as a plugin: the dialects parse and
// the default pipeline turns a standard ONNX LSTM into canonical form and back.

// CHECK-LABEL: func.func @layer
// CHECK: onnx.initializer "rnn_W"
// CHECK: onnx.LSTM
// CHECK-NOT: rnn.sequence
func.func @layer(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %r = onnx.initializer "R" dense<[[[0.5], [0.6], [0.7], [0.8]]]> : tensor<1x4x1xf32>
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}
