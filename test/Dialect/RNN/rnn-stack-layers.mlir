// RUN: lstm-opt %s -split-input-file -rnn-stack-layers -verify-diagnostics | FileCheck %s
// RUN: lstm-opt %s -split-input-file -rnn-stack-layers -convert-rnn-to-onnx | FileCheck %s --check-prefix=ONNX

// Two LSTM layers, the second reading the first's whole Y: one rnn.stack.
// Layer 1's h_n is a slice of the stack's; its initial state, a slice of a
// graph input computed between the layers, moves up.

// CHECK-LABEL: func.func @two_layers
// CHECK-DAG: onnx.initializer "stack_Wn" {{.*}} : tensor<1x1x8x2xf32>
// CHECK-DAG: onnx.initializer "stack_R" {{.*}} : tensor<2x1x8x2xf32>
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %[[HN:[a-zA-Z0-9_]+]], %{{.*}} = rnn.stack lstm forward %arg0, {{.*}} {hidden_size = 2 : i64, num_layers = 2 : i64, rnn.source_gemms = 0 : i64, rnn.source_nodes = 0 : i64}
// CHECK: %[[H1:.*]] = onnx.Slice(%[[HN]],
// CHECK-NOT: rnn.sequence
// CHECK: return %[[Y]], %[[H1]]

// ONNX-LABEL: func.func @two_layers
// ONNX: onnx.LSTM(%arg0,
// ONNX: onnx.Squeeze
// ONNX: onnx.LSTM(
// ONNX-NOT: rnn.
func.func @two_layers(%x: tensor<5x1x3xf32>, %hs: tensor<2x1x2xf32>) -> (tensor<5x1x1x2xf32>, tensor<1x1x2xf32>) {
  %w0 = onnx.initializer "W0" dense<0.1> : tensor<1x8x3xf32>
  %w1 = onnx.initializer "W1" dense<0.2> : tensor<1x8x2xf32>
  %r = onnx.initializer "R" dense<0.3> : tensor<1x8x2xf32>
  %b = onnx.initializer "B" dense<0.4> : tensor<1x8xf32>
  %ax1 = onnx.initializer "ax1" dense<1> : tensor<1xi64>
  %s0 = onnx.initializer "s0" dense<0> : tensor<1xi64>
  %s1 = onnx.initializer "s1" dense<1> : tensor<1xi64>
  %s2 = onnx.initializer "s2" dense<2> : tensor<1xi64>
  %ax0 = onnx.initializer "ax0" dense<0> : tensor<1xi64>
  %none = onnx.none
  %h0a = onnx.Slice(%hs, %s0, %s1, %ax0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{stacked 2 LSTM layers into one rnn.stack}}
  %y1, %h1, %c1 = rnn.sequence lstm forward %x, %w0, %r, %b, %b init(%h0a, %h0a) {hidden_size = 2 : i64} : (tensor<5x1x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> (tensor<5x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %x2 = onnx.Squeeze(%y1, %ax1) : (tensor<5x1x1x2xf32>, tensor<1xi64>) -> tensor<5x1x2xf32>
  %h0b = onnx.Slice(%hs, %s1, %s2, %ax0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %y2, %h2, %c2 = rnn.sequence lstm forward %x2, %w1, %r, %b, %b init(%h0b, %h0b) {hidden_size = 2 : i64} : (tensor<5x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> (tensor<5x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  return %y2, %h1 : tensor<5x1x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// Layer 1's Y is also returned: a stack does not expose it.
// CHECK-LABEL: func.func @y_read
// CHECK-COUNT-2: rnn.sequence
func.func @y_read(%x: tensor<5x1x2xf32>) -> (tensor<5x1x1x2xf32>, tensor<5x1x1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x8x2xf32>
  %b = onnx.initializer "B" dense<0.4> : tensor<1x8xf32>
  %ax1 = onnx.initializer "ax1" dense<1> : tensor<1xi64>
  %y1, %h1, %c1 = rnn.sequence lstm forward %x, %w, %w, %b, %b {hidden_size = 2 : i64} : (tensor<5x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<5x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %x2 = onnx.Squeeze(%y1, %ax1) : (tensor<5x1x1x2xf32>, tensor<1xi64>) -> tensor<5x1x2xf32>
  %y2, %h2, %c2 = rnn.sequence lstm forward %x2, %w, %w, %b, %b {hidden_size = 2 : i64} : (tensor<5x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<5x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  return %y1, %y2 : tensor<5x1x1x2xf32>, tensor<5x1x1x2xf32>
}
