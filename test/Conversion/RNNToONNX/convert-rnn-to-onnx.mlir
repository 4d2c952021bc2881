// RUN: lstm-opt %s -split-input-file -convert-rnn-to-onnx -verify-diagnostics | FileCheck %s

// Canonical LSTM (i, f, g, o) -> ONNX (i, o, f, c): rows of block k move to
// ONNX position [0, 2, 3, 1][k]; B = [Bw, Br] per direction.

// CHECK-LABEL: func.func @lstm
// CHECK-DAG: %[[W:.*]] = onnx.initializer "rnn_W" dense<{{\[}}{{\[}}[1.000000e+00], [4.000000e+00], [2.000000e+00], [3.000000e+00]]]> : tensor<1x4x1xf32>
// CHECK-DAG: %[[B:.*]] = onnx.initializer "rnn_B" dense<{{\[}}[1.000000e+01, 4.000000e+01, 2.000000e+01, 3.000000e+01, 5.000000e+00, 8.000000e+00, 6.000000e+00, 7.000000e+00]]> : tensor<1x8xf32>
// CHECK: onnx.LSTM(%arg0, %[[W]], %{{.*}}, %[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {hidden_size = 1 : i64}
// CHECK-NOT: rnn.sequence
func.func @lstm(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %bw = onnx.initializer "Bw" dense<[[10.0, 20.0, 30.0, 40.0]]> : tensor<1x4xf32>
  %br = onnx.initializer "Br" dense<[[5.0, 6.0, 7.0, 8.0]]> : tensor<1x4xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %w, %bw, %br {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %hn : tensor<1x2x1xf32>
}

// -----

// Canonical GRU (r, z, n) -> ONNX (z, r, h), per direction; attributes carry
// over.

// CHECK-LABEL: func.func @gru
// CHECK-DAG: onnx.initializer "rnn_W" dense<{{\[}}{{\[}}[2.000000e+00], [1.000000e+00], [3.000000e+00]], {{\[}}[5.000000e+00], [4.000000e+00], [6.000000e+00]]]> : tensor<2x3x1xf32>
// CHECK: onnx.GRU({{.*}}) {activations = ["Sigmoid", "Tanh", "Sigmoid", "Tanh"], clip = 5.000000e+00 : f32, direction = "bidirectional", hidden_size = 1 : i64, linear_before_reset = 1 : i64}
func.func @gru(%x: tensor<3x2x1xf32>, %h0: tensor<2x2x1xf32>) -> tensor<3x2x2x1xf32> {
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]]> : tensor<2x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<2x3xf32>
  %y, %hn = rnn.sequence gru bidirectional %x, %w, %w, %b, %b init(%h0) {activations = ["Sigmoid", "Tanh", "Sigmoid", "Tanh"], clip = 5.0 : f32, hidden_size = 1 : i64, linear_before_reset} : (tensor<3x2x1xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2x1xf32>) -> (tensor<3x2x2x1xf32>, tensor<2x2x1xf32>)
  return %y : tensor<3x2x2x1xf32>
}

// -----

// Weights that are not constants cannot be converted at compile time.
func.func @runtime_weights(%x: tensor<3x2x1xf32>, %w: tensor<1x1x1xf32>) -> tensor<1x2x1xf32> {
  %b = onnx.initializer "B" dense<0.5> : tensor<1x1xf32>
  // expected-error @+1 {{convert-rnn-to-onnx needs constant f32 weights}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %w, %b, %b {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>)
  return %hn : tensor<1x2x1xf32>
}

// -----

// Peephole weights: canonical i, f, o -> ONNX's i, o, f; input_forget = 1.

// CHECK-LABEL: func.func @lstm_peephole
// CHECK-DAG: %[[P:.*]] = onnx.initializer "rnn_P" dense<{{\[}}[1.000000e+00, 3.000000e+00, 2.000000e+00]]> : tensor<1x3xf32>
// CHECK: onnx.LSTM(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]]) {hidden_size = 1 : i64, input_forget = 1 : i64}
func.func @lstm_peephole(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %b = onnx.initializer "B" dense<[[10.0, 20.0, 30.0, 40.0]]> : tensor<1x4xf32>
  %p = onnx.initializer "P" dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %w, %b, %b peephole(%p) {hidden_size = 1 : i64, input_forget} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x3xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %hn : tensor<1x2x1xf32>
}
