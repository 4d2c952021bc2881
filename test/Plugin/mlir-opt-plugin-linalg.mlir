// RUN: %mlir-opt %s --load-dialect-plugin=%plugin --load-pass-plugin=%plugin --pass-pipeline='builtin.module(lstm-opt-linalg)' | FileCheck %s
// An instrumented plugin cannot load into the uninstrumented mlir-opt.
// UNSUPPORTED: sanitizer

// Debian's mlir-opt with lstm-opt loaded as a plugin runs the portable
// lowering (what lstm-opt --target=linalg prints): a standard ONNX LSTM
// becomes linalg.matmul + scf.for on tensors, and nothing of the onnx or rnn
// dialects is left, attributes included.

// CHECK-NOT: onnx.
// CHECK-LABEL: func.func @layer(%{{.*}}: tensor<3x2x1xf32>) -> tensor<1x2x1xf32>
// CHECK: linalg.matmul
// CHECK: scf.for
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-NOT: rnn.
// CHECK-NOT: onnx.
func.func @layer(%x: tensor<3x2x1xf32> {onnx.name = "x"}) -> (tensor<1x2x1xf32> {onnx.name = "y_h"}) {
  %none = onnx.none
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %r = onnx.initializer "R" dense<[[[0.5], [0.6], [0.7], [0.8]]]> : tensor<1x4x1xf32>
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}
