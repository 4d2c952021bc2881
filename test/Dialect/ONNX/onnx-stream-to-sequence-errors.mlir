// RUN: lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=h=nope" -verify-diagnostics
// RUN: not lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=h=out" 2>&1 | FileCheck %s --check-prefix=TYPES
// RUN: not lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=0 state=h=hn" 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: not lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=x=hn" 2>&1 | FileCheck %s --check-prefix=XTYPE
// RUN: not lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=q=hn" 2>&1 | FileCheck %s --check-prefix=NOIN

// An output name that is not a graph output.
// expected-error @+1 {{onnx-stream-to-sequence: 'nope' is not a graph output}}
func.func @g(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<1x1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %3 = onnx.Relu(%Y) : (tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  return %3, %Y_h : tensor<1x1x1x3xf32>, tensor<1x1x3xf32>
}
// TYPES: error: onnx-stream-to-sequence: state pair h=out has different types ('tensor<1x1x3xf32>' and 'tensor<1x1x1x3xf32>')
// CHUNKS: error: onnx-stream-to-sequence: chunks must be in [1, 2^31], not 0
// XTYPE: error: onnx-stream-to-sequence: state pair x=hn has different types
// NOIN: error: onnx-stream-to-sequence: 'q' is not a graph input
