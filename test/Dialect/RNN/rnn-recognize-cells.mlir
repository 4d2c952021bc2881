// RUN: lstm-opt %s -split-input-file -rnn-recognize-cells | FileCheck %s

// One step of a PyTorch nn.LSTMCell export (H = 1, I = 2): two Gemms
// (transB), Split into i, f, g, o. W keeps its rows (the canonical order is
// PyTorch's), the two biases are summed into Bw, Br is zero.

// CHECK-LABEL: func.func @torch_cell
// CHECK-DAG: %[[W:.*]] = onnx.initializer "lstm_W" dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<4x2xf32>
// CHECK-DAG: %[[R:.*]] = onnx.initializer "lstm_R" dense<{{\[}}[1.000000e-01], [2.000000e-01], [3.000000e-01], [4.000000e-01]]> : tensor<4x1xf32>
// CHECK-DAG: %[[B:.*]] = onnx.initializer "lstm_B" dense<[1.100000e+00, 2.200000e+00, 3.300000e+00, 4.400000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[Z:.*]] = onnx.initializer "lstm_zero_bias" dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[H:.*]], %[[C:.*]] = rnn.lstm_cell %arg0, %arg1, %arg2, %[[W]], %[[R]], %[[B]], %[[Z]] {rnn.source_gemms = 2 : i64, rnn.source_nodes = 13 : i64}
// CHECK-NOT: onnx.Gemm
// CHECK-NOT: onnx.Sigmoid
// CHECK: return %[[H]], %[[C]]
func.func @torch_cell(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %r = onnx.initializer "weight_hh" dense<[[0.1], [0.2], [0.3], [0.4]]> : tensor<4x1xf32>
  %bi = onnx.initializer "bias_ih" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %bh = onnx.initializer "bias_hh" dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %gx = onnx.Gemm(%x, %w, %bi) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%h, %r, %bh) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// tf2onnx at a fixed batch of 1: h R squeezed to [4] (no axes), the Add
// broadcasting it back to [1, 4]. The same values: one cell.

// CHECK-LABEL: func.func @batch_one_squeezed
// CHECK: %[[H:.*]], %[[C:.*]] = rnn.lstm_cell %arg0, %arg1, %arg2
// CHECK-NOT: onnx.Squeeze
// CHECK: return %[[H]], %[[C]]
func.func @batch_one_squeezed(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %sq = onnx.Squeeze(%gh, %none) : (tensor<1x4xf32>, none) -> tensor<4xf32>
  %g = onnx.Add(%gx, %sq) : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Keras' LSTM with activation="sigmoid": i and g both Sigmoid. i * g = g * i,
// so either factor is the input gate: one cell, activations all Sigmoid.

// CHECK-LABEL: func.func @sigmoid_candidate
// CHECK: rnn.lstm_cell {{.*}}activations = ["Sigmoid", "Sigmoid", "Tanh"]
func.func @sigmoid_candidate(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sg = onnx.Sigmoid(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %sg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// TensorFlow's BasicLSTMCell: concat([x, h]) x kernel, gates i, j(=g), f, o,
// forget_bias added to f. Rows are reordered to i, f, g, o and forget_bias
// lands in f's bias.

// CHECK-LABEL: func.func @tf_cell
// CHECK-DAG: onnx.initializer "lstm_W" dense<{{\[}}[1.000000e+00, 5.000000e+00], [3.000000e+00, 7.000000e+00], [2.000000e+00, 6.000000e+00], [4.000000e+00, 8.000000e+00]]> : tensor<4x2xf32>
// CHECK-DAG: onnx.initializer "lstm_R" dense<{{\[}}[9.000000e+00], [1.100000e+01], [1.000000e+01], [1.200000e+01]]> : tensor<4x1xf32>
// CHECK-DAG: onnx.initializer "lstm_B" dense<[1.000000e-01, 1.300000e+00, 2.000000e-01, 4.000000e-01]> : tensor<4xf32>
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2
// CHECK-NOT: onnx.MatMul
func.func @tf_cell(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %k = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %b = onnx.initializer "bias" dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %one = onnx.initializer "forget_bias" dense<1.0> : tensor<f32>
  %xh = onnx.Concat(%x, %h) {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x1xf32>) -> tensor<1x3xf32>
  %m = onnx.MatMul(%xh, %k) : (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%m, %b) : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %i, %j, %f, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %fb = onnx.Add(%f, %one) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%fb) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%c, %sf) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tj = onnx.Tanh(%j) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tj) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%tc, %so) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A standard ONNX LSTM becomes rnn.sequence with canonical weights: ONNX's
// gate blocks i, o, f, c move to i, f, g, o; B [1, 8] splits into Bw, Br.

// CHECK-LABEL: func.func @onnx_lstm
// CHECK-DAG: onnx.initializer "W_canonical" dense<{{\[}}{{\[}}[1.000000e+00], [3.000000e+00], [4.000000e+00], [2.000000e+00]]]> : tensor<1x4x1xf32>
// CHECK-DAG: onnx.initializer "Bw_canonical" dense<{{\[}}[1.000000e+00, 3.000000e+00, 4.000000e+00, 2.000000e+00]]> : tensor<1x4xf32>
// CHECK-DAG: onnx.initializer "Br_canonical" dense<{{\[}}[5.000000e+00, 7.000000e+00, 8.000000e+00, 6.000000e+00]]> : tensor<1x4xf32>
// CHECK: %{{.*}}, %[[HN:.*]], %{{.*}} = rnn.sequence lstm reverse %arg0, {{.*}} {hidden_size = 1 : i64}
// CHECK-NOT: onnx.LSTM
// CHECK-NOT: onnx.initializer "W"
// CHECK: return %[[HN]]
func.func @onnx_lstm(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %r = onnx.initializer "R" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %b = onnx.initializer "B" dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<1x8xf32>
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %b, %none, %none, %none, %none) {direction = "reverse", hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x8xf32>, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}

// -----

// Input and hidden state of the same width (I = H): which one is the state
// follows from the graph, not from shapes. A streaming cell (silero-vad's
// form): h and c are sliced out of one state input, the step input is
// computed. h is the one from the same source as c. The cell is built with
// the Gemm reading %[[X]] as its input. (Split's sizes come from opset 18's
// num_outputs.)

// CHECK-LABEL: func.func @same_width_state_from_input
// CHECK: %[[X:.*]] = onnx.Relu
// CHECK: %[[H:.*]] = onnx.Gather(%arg1
// CHECK: %[[C:.*]] = onnx.Gather(%arg1
// CHECK: rnn.lstm_cell %[[X]], %[[H]], %[[C]]
func.func @same_width_state_from_input(%a: tensor<1x1xf32>, %state: tensor<2x1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %r = onnx.initializer "weight_hh" dense<[[0.1], [0.2], [0.3], [0.4]]> : tensor<4x1xf32>
  %b = onnx.initializer "bias" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %i0 = onnx.initializer "i0" dense<0> : tensor<i64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %x = onnx.Relu(%a) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h = onnx.Gather(%state, %i0) {axis = 0 : i64} : (tensor<2x1x1xf32>, tensor<i64>) -> tensor<1x1xf32>
  %c = onnx.Gather(%state, %i1) {axis = 0 : i64} : (tensor<2x1x1xf32>, tensor<i64>) -> tensor<1x1xf32>
  %gx = onnx.Gemm(%h, %r, %b) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64, num_outputs = 4 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Two stacked cells of equal width with zero initial states, one step each
// shown: the upper cell reads the lower cell's output and a zero constant.
// The lower cell's output is the upper one's step input; the zeros (the
// source of its c as well) are its hidden state.

// CHECK-LABEL: func.func @stacked_equal_width
// CHECK: %[[H1:.*]], %{{.*}} = rnn.lstm_cell %arg0, %[[Z:.*]], %[[Z]]
// CHECK: rnn.lstm_cell %[[H1]], %[[Z]], %[[Z]]
func.func @stacked_equal_width(%x: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %r = onnx.initializer "weight_hh" dense<[[0.1], [0.2], [0.3], [0.4]]> : tensor<4x1xf32>
  %b = onnx.initializer "bias" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w2 = onnx.initializer "l2.weight_ih" dense<[[5.0], [6.0], [7.0], [8.0]]> : tensor<4x1xf32>
  %r2 = onnx.initializer "l2.weight_hh" dense<[[0.5], [0.6], [0.7], [0.8]]> : tensor<4x1xf32>
  %zero = onnx.initializer "zeros" dense<0.0> : tensor<1x1xf32>
  %gx = onnx.Gemm(%x, %w, %b) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%zero, %r, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64, num_outputs = 4 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %zero) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ugx = onnx.Gemm(%h1, %w2, %b) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %ugh = onnx.Gemm(%zero, %r2, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %ug = onnx.Add(%ugx, %ugh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %ui, %uf, %ucc, %uo = onnx.Split(%ug, %none) {axis = 1 : i64, num_outputs = 4 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %usi = onnx.Sigmoid(%ui) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %usf = onnx.Sigmoid(%uf) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %utg = onnx.Tanh(%ucc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %uso = onnx.Sigmoid(%uo) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ufc = onnx.Mul(%usf, %zero) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %uig = onnx.Mul(%usi, %utg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %uc1 = onnx.Add(%ufc, %uig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %utc = onnx.Tanh(%uc1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %uh1 = onnx.Mul(%uso, %utc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %uh1, %uc1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A lone step whose input and state are both graph inputs of the same width:
// nothing in the graph tells them apart, and a single step is symmetric in
// (x, W) and (h, R), so either reading gives the same numbers. It is fused
// with the first value the gates read as the step input.

// CHECK-LABEL: func.func @lone_step_symmetric
// CHECK: rnn.lstm_cell %arg1, %arg0, %arg2
func.func @lone_step_symmetric(%x: tensor<1x1xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %r = onnx.initializer "weight_hh" dense<[[0.1], [0.2], [0.3], [0.4]]> : tensor<4x1xf32>
  %b = onnx.initializer "bias" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %gx = onnx.Gemm(%h, %r, %b) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64, num_outputs = 4 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// An exporter that does not fold constants (PyTorch without constant
// folding, as in silero-vad) reorders the gates in the graph: W reaches the
// LSTM as Unsqueeze(Concat(Slice(W_torch), ...)). The chain is evaluated
// exactly; W_torch's rows i, f, g, o = 1, 2, 3, 4 come out in the canonical
// order.

// CHECK-LABEL: func.func @onnx_lstm_unfolded_weights
// CHECK-DAG: onnx.initializer "W_canonical" dense<{{\[}}{{\[}}[1.000000e+00], [2.000000e+00], [3.000000e+00], [4.000000e+00]]]> : tensor<1x4x1xf32>
// CHECK: rnn.sequence lstm forward
// CHECK-NOT: onnx.LSTM
func.func @onnx_lstm_unfolded_weights(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %wt = onnx.initializer "weight_ih" dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %r = onnx.initializer "R" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %ax = onnx.initializer "axis0" dense<0> : tensor<1xi64>
  %s0 = onnx.initializer "s0" dense<0> : tensor<1xi64>
  %s1 = onnx.initializer "s1" dense<1> : tensor<1xi64>
  %s2 = onnx.initializer "s2" dense<2> : tensor<1xi64>
  %s3 = onnx.initializer "s3" dense<3> : tensor<1xi64>
  %s4 = onnx.initializer "s4" dense<9223372036854775807> : tensor<1xi64>
  %wi = onnx.Slice(%wt, %s0, %s1, %ax, %none) : (tensor<4x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1xf32>
  %wo = onnx.Slice(%wt, %s3, %s4, %ax, %none) : (tensor<4x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1xf32>
  %wfg = onnx.Slice(%wt, %s1, %s3, %ax, %none) : (tensor<4x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<2x1xf32>
  %cat = onnx.Concat(%wi, %wo, %wfg) {axis = 0 : i64} : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %w = onnx.Unsqueeze(%cat, %ax) : (tensor<4x1xf32>, tensor<1xi64>) -> tensor<1x4x1xf32>
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}

// -----

// GRU cell forms (CellForms.cpp). Keras' textbook update
// h' = (1 - z)*n + z*h with gates z, r, n in one kernel: rows move to the
// canonical r, z, n; r applied after the recurrent matmul.

// CHECK-LABEL: func.func @gru_textbook
// CHECK-DAG: %[[W:.*]] = onnx.initializer "gru_W" dense<{{\[}}[2.000000e+00, 5.000000e+00], [1.000000e+00, 4.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[R:.*]] = onnx.initializer "gru_R" dense<{{\[}}[2.000000e-01], [1.000000e-01], [3.000000e-01]]> : tensor<3x1xf32>
// CHECK: rnn.gru_cell %arg0, %arg1, %[[W]], %[[R]], {{.*}} {linear_before_reset, rnn.source_gemms = 2 : i64, rnn.source_nodes = 15 : i64}
// CHECK-NOT: onnx.Sub
func.func @gru_textbook(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xz, %xr, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hz, %hr, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %a = onnx.Mul(%omz, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %zh = onnx.Mul(%z, %h) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%zh, %a) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// torch.lerp(n, h, z) as PyTorch exports it: Where(z < 0.5, n + z*(h - n),
// h - (h - n)*(1 - z)). The first branch is the GRU update; the Where, its
// other branch and the Less go with the cell.

// CHECK-LABEL: func.func @gru_lerp
// CHECK: %[[C:.*]] = rnn.gru_cell %arg0, %arg1, {{.*}} {linear_before_reset, rnn.source_gemms = 2 : i64
// CHECK-NOT: onnx.node "Where"
// CHECK-NOT: onnx.node "Less"
// CHECK-NOT: onnx.Sub
// CHECK: return %[[C]]
func.func @gru_lerp(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %half = onnx.initializer "half" dense<0.5> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xr, %xz, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hr, %hz, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %d = onnx.Sub(%h, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %lt = onnx.node "Less"(%z, %half) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xi1>
  %zd = onnx.Mul(%z, %d) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %lo = onnx.Add(%n, %zd) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %dz = onnx.Mul(%d, %omz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hi = onnx.Sub(%h, %dz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.node "Where"(%lt, %lo, %hi) : (tensor<1x1xi1>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// The same Where whose branches differ (1 - w, not 1 - z, in the second):
// not a lerp, left as it is; the cell on its first branch is fused and the
// Where keeps reading it.

// CHECK-LABEL: func.func @gru_where_not_lerp
// CHECK: %[[C:.*]] = rnn.gru_cell
// CHECK: %[[W:.*]] = onnx.node "Where"(%{{.*}}, %[[C]], %{{.*}})
// CHECK: return %[[W]]
func.func @gru_where_not_lerp(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %v: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %half = onnx.initializer "half" dense<0.5> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xr, %xz, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hr, %hz, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %d = onnx.Sub(%h, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %lt = onnx.node "Less"(%z, %half) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xi1>
  %zd = onnx.Mul(%z, %d) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %lo = onnx.Add(%n, %zd) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %v) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %dz = onnx.Mul(%d, %omz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hi = onnx.Sub(%h, %dz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.node "Where"(%lt, %lo, %hi) : (tensor<1x1xi1>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// The update multiplied out, h' = (n - z*n) + z*h, with r*(h R_n + b_hn):
// the form "gru-expanded". Per-gate MatMuls, b_hn lands in Br's n block.

// CHECK-LABEL: func.func @gru_expanded
// CHECK-DAG: %[[W:.*]] = onnx.initializer "gru_W" dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[BR:.*]] = onnx.initializer "gru_Br" dense<[0.000000e+00, 0.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK: rnn.gru_cell %arg0, %arg1, %[[W]], %{{.*}}, %{{.*}}, %[[BR]] {linear_before_reset, rnn.source_gemms = 6 : i64, rnn.source_nodes = 18 : i64}
// CHECK-NOT: onnx.Sub
func.func @gru_expanded(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %wr = onnx.initializer "wr" dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %wz = onnx.initializer "wz" dense<[[3.0], [4.0]]> : tensor<2x1xf32>
  %wn = onnx.initializer "wn" dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %rr = onnx.initializer "rr" dense<[[0.1]]> : tensor<1x1xf32>
  %rz = onnx.initializer "rz" dense<[[0.2]]> : tensor<1x1xf32>
  %rn = onnx.initializer "rn" dense<[[0.3]]> : tensor<1x1xf32>
  %bn = onnx.initializer "bhn" dense<[0.5]> : tensor<1xf32>
  %xr = onnx.MatMul(%x, %wr) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %hr = onnx.MatMul(%h, %rr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %r = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %xz = onnx.MatMul(%x, %wz) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %hz = onnx.MatMul(%h, %rz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %xn = onnx.MatMul(%x, %wn) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %hn = onnx.MatMul(%h, %rn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hnb = onnx.Add(%hn, %bn) : (tensor<1x1xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%r, %hnb) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %zn = onnx.Mul(%z, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %d = onnx.Sub(%n, %zn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %zh = onnx.Mul(%h, %z) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%d, %zh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// A first step of the expanded form whose zero state the exporter folded:
// h' = n - z*n (the form "gru-expanded-zero-state"). The state is zeros, the
// reset gate's rows are zero (nothing reads r) and the cell says so.

// CHECK-LABEL: func.func @gru_expanded_zero_state
// CHECK-DAG: %[[H0:.*]] = onnx.initializer "zero_state" dense<0.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[W:.*]] = onnx.initializer "gru_W" dense<{{\[}}[0.000000e+00, 0.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: rnn.gru_cell %arg0, %[[H0]], %[[W]], {{.*}} {rnn.source_gemms = 2 : i64, rnn.source_nodes = 6 : i64, rnn.zero_reset}
func.func @gru_expanded_zero_state(%x: tensor<1x2xf32>) -> tensor<1x1xf32> {
  %wz = onnx.initializer "wz" dense<[[3.0], [4.0]]> : tensor<2x1xf32>
  %wn = onnx.initializer "wn" dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %xz = onnx.MatMul(%x, %wz) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%xz) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %xn = onnx.MatMul(%x, %wn) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%xn) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %zn = onnx.Mul(%n, %z) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Sub(%n, %zn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// A first step whose zero state the exporter folded into two constants, one
// read by the recurrent product and one by the update (PyTorch's
// TorchScript exporter on an nn.GRUCell loop from torch.zeros): both are
// the same zero state.

// CHECK-LABEL: func.func @gru_two_zero_states
// CHECK-DAG: %[[BR:.*]] = onnx.initializer "gru_Br" dense<[0.000000e+00, 0.000000e+00, 6.000000e-01]>
// CHECK-DAG: %[[H:.*]] = onnx.Constant() {value = dense<0.000000e+00> : tensor<1x1xf32>}
// CHECK: rnn.gru_cell %arg0, %[[H]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BR]] {linear_before_reset, rnn.source_gemms = 2 : i64, rnn.source_nodes = 14 : i64}
// CHECK-NOT: onnx.Tanh
func.func @gru_two_zero_states(%x: tensor<1x2xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "w_ih" dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %r = onnx.initializer "w_hh" dense<[[0.1], [0.2], [0.3]]> : tensor<3x1xf32>
  %bi = onnx.initializer "b_ih" dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %bh = onnx.initializer "b_hh" dense<[0.4, 0.5, 0.6]> : tensor<3xf32>
  %za = onnx.Constant() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %zb = onnx.Constant() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %none = onnx.none
  %gx = onnx.Gemm(%x, %w, %bi) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %gh = onnx.Gemm(%za, %r, %bh) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<3x1xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %xr, %xz, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hr, %hz, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %ar = onnx.Add(%hr, %xr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %az = onnx.Add(%hz, %xz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%hn, %rr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %d = onnx.Sub(%zb, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %dz = onnx.Mul(%d, %z) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%dz, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// An ONNX LSTM with peepholes and input_forget: P [1, 3H] moves from ONNX's
// i, o, f to the canonical i, f, o; input_forget stays on the layer.

// CHECK-LABEL: func.func @onnx_lstm_peephole_input_forget
// CHECK-DAG: %[[P:.*]] = onnx.initializer "P_canonical" dense<{{\[}}[1.000000e+00, 3.000000e+00, 2.000000e+00]]> : tensor<1x3xf32>
// CHECK: rnn.sequence lstm forward %arg0, {{.*}} peephole(%[[P]]) {hidden_size = 1 : i64, input_forget}
// CHECK-NOT: onnx.LSTM
func.func @onnx_lstm_peephole_input_forget(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %p = onnx.initializer "P" dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %y, %yh, %yc = onnx.LSTM(%x, %w, %w, %none, %none, %none, %none, %p) {hidden_size = 1 : i64, input_forget = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, tensor<1x3xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}

// -----

// A hand-written cell with peepholes (P_i * c, P_f * c on i and f, P_o * c'
// on o, operands in either order) and a coupled forget gate f = 1 - i: one
// rnn.lstm_cell with peephole weights (i, f, o; f's unused, zero) and
// input_forget. The forget gate's weights are zero.

// CHECK-LABEL: func.func @peephole_coupled_cell
// CHECK-DAG: %[[W:.*]] = onnx.initializer "lstm_W" dense<{{\[}}[1.000000e+00], [0.000000e+00], [3.000000e+00], [4.000000e+00]]> : tensor<4x1xf32>
// CHECK-DAG: %[[P:.*]] = onnx.initializer "lstm_P" dense<[5.000000e-01, 0.000000e+00, 2.500000e-01]> : tensor<3xf32>
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2, %[[W]], {{.*}} peephole(%[[P]]) {input_forget, rnn.source_gemms = 6 : i64
// CHECK-NOT: onnx.Sigmoid
func.func @peephole_coupled_cell(%x: tensor<1x1xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %wi = onnx.initializer "wi" dense<1.0> : tensor<1x1xf32>
  %wg = onnx.initializer "wg" dense<3.0> : tensor<1x1xf32>
  %wo = onnx.initializer "wo" dense<4.0> : tensor<1x1xf32>
  %r = onnx.initializer "r" dense<0.5> : tensor<1x1xf32>
  %pi = onnx.initializer "pi" dense<[0.5]> : tensor<1xf32>
  %po = onnx.initializer "po" dense<[0.25]> : tensor<1xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %xi = onnx.MatMul(%x, %wi) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hi = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ai = onnx.Add(%xi, %hi) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ci = onnx.Mul(%c, %pi) : (tensor<1x1xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %pre_i = onnx.Add(%ai, %ci) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %i = onnx.Sigmoid(%pre_i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %f = onnx.Sub(%one, %i) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %xg = onnx.MatMul(%x, %wg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hg = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ag = onnx.Add(%xg, %hg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %g = onnx.Tanh(%ag) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%f, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%i, %g) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %xo = onnx.MatMul(%x, %wo) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ho = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ao = onnx.Add(%xo, %ho) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %co = onnx.Mul(%po, %c1) : (tensor<1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %pre_o = onnx.Add(%co, %ao) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %o = onnx.Sigmoid(%pre_o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%o, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// The textbook GRU with z and 1 - z exchanged, h' = z*n + (1 - z)*h: a GRU
// whose update gate is 1 - z = sigmoid(-a), so z's rows of W and R (and its
// bias) are negated.

// CHECK-LABEL: func.func @gru_negated_update
// CHECK-DAG: %[[W:.*]] = onnx.initializer "gru_W" dense<{{\[}}[2.000000e+00, 5.000000e+00], [-1.000000e+00, -4.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[R:.*]] = onnx.initializer "gru_R" dense<{{\[}}[2.000000e-01], [-1.000000e-01], [3.000000e-01]]> : tensor<3x1xf32>
// CHECK: rnn.gru_cell %arg0, %arg1, %[[W]], %[[R]], {{.*}} {linear_before_reset,
// CHECK-NOT: onnx.Sub
func.func @gru_negated_update(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xz, %xr, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hz, %hr, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Sigmoid(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Sigmoid(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %zn = onnx.Mul(%z, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %b = onnx.Mul(%omz, %h) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%zn, %b) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// The recurrent weight is a Slice of a constant (tf2onnx's Keras Loop bodies
// slice the loop-carried kernel at every step): it becomes an initializer
// of its own, and the cell reads it. The gates are Keras 3's hard_sigmoid,
// relu6(x + 3) / 6 exported as Mul(Clip(x + 3, 0, 6), 1/6):
// HardSigmoid(alpha = 1/6, beta = 0) of x + 3, the 3 in the gates' bias
// (where tf2onnx folds it at some steps).
// CHECK-LABEL: func.func @sliced_weight_keras3_hard_sigmoid
// CHECK-DAG: onnx.initializer "lstm_R" dense<{{\[}}[1.000000e-01], [2.000000e-01], [3.000000e-01], [4.000000e-01]]> : tensor<4x1xf32>
// CHECK-DAG: onnx.initializer "lstm_B" dense<[3.000000e+00, 3.000000e+00, 0.000000e+00, 3.000000e+00]> : tensor<4xf32>
// CHECK: rnn.lstm_cell
// CHECK-SAME: activation_alpha = array<f32: 0.166666672>, activation_beta = array<f32: 0.000000e+00>, activations = ["HardSigmoid", "Tanh", "Tanh"]
// CHECK-NOT: onnx.Clip
// CHECK-NOT: onnx.Slice
func.func @sliced_weight_keras3_hard_sigmoid(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %rk = onnx.initializer "recurrent_kernel" dense<[[9.0, 0.1, 0.2, 0.3, 0.4, 9.0]]> : tensor<1x6xf32>
  %st = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = onnx.Constant() {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = onnx.Slice(%rk, %st, %en, %ax, %none) : (tensor<1x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x4xf32>
  %three = onnx.initializer "three" dense<3.0> : tensor<f32>
  %zero = onnx.initializer "zero" dense<0.0> : tensor<f32>
  %six = onnx.initializer "six" dense<6.0> : tensor<f32>
  %sixth = onnx.initializer "sixth" dense<0.166666672> : tensor<f32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %i3 = onnx.Add(%i, %three) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %i6 = onnx.Clip(%i3, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %si = onnx.Mul(%i6, %sixth) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %f3 = onnx.Add(%three, %f) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %f6 = onnx.Clip(%f3, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %sf = onnx.Mul(%sixth, %f6) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %o3 = onnx.Add(%o, %three) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %o6 = onnx.Clip(%o3, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %so = onnx.Div(%o6, %six) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// torch.export's decomposition of nn.RNN (the dynamo exporter's form): the
// input projection of all steps at once (MatMul + Add, cut per step by
// Slice + Squeeze), the state kept as [1, B, H]. Each step reads the
// projection of its own x[t] instead, computed without the unit axis, which
// an Unsqueeze puts back after the cell; the cells chain through their
// [B, H] outputs. b_ih and b_hh are summed into Bw. The source counts are
// the exporter's nodes: 15 in all with the roller's slices and stack.

// CHECK-LABEL: func.func @torch_export_rnn
// CHECK-DAG: %[[W:.*]] = onnx.initializer "rnn_W" dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]>
// CHECK-DAG: %[[R:.*]] = onnx.initializer "rnn_R" dense<{{\[}}[1.000000e-01, 3.000000e-01], [2.000000e-01, 4.000000e-01]]>
// CHECK-DAG: %[[B:.*]] = onnx.initializer "rnn_Bw" dense<[6.250000e-01, 3.125000e-01]>
// CHECK: %[[S0:.*]] = onnx.Slice(%arg0,
// CHECK: %[[X0:.*]] = onnx.Squeeze(%[[S0]]
// CHECK: %[[S1:.*]] = onnx.Slice(%arg0,
// CHECK: %[[X1:.*]] = onnx.Squeeze(%[[S1]]
// CHECK: %[[H0:.*]] = onnx.Squeeze(%arg1
// CHECK: %[[C0:.*]] = rnn.rnn_cell %[[X0]], %[[H0]], %[[W]], %[[R]], %[[B]], %{{.*}} {rnn.source_gemms = 2 : i64, rnn.source_nodes = 5 : i64}
// CHECK: %[[U0:.*]] = onnx.Unsqueeze(%[[C0]]
// CHECK: %[[C1:.*]] = rnn.rnn_cell %[[X1]], %[[C0]], %[[W]], %[[R]], %[[B]], %{{.*}} {rnn.source_gemms = 1 : i64, rnn.source_nodes = 3 : i64}
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[C1]]
// CHECK: %[[Y:.*]] = onnx.Concat(%[[U0]], %[[U1]]) {axis = 0 : i64}
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: onnx.Tanh
// CHECK: return %[[Y]], %[[U1]]
func.func @torch_export_rnn(%x: tensor<2x1x2xf32>, %h0: tensor<1x1x2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>) {
  %wih = onnx.initializer "w_ih_t" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %bih = onnx.initializer "b_ih" dense<[0.5, 0.25]> : tensor<2xf32>
  %whh = onnx.initializer "w_hh_t" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %bhh = onnx.initializer "b_hh" dense<[0.125, 0.0625]> : tensor<2xf32>
  %none = onnx.none
  %a0 = onnx.initializer "a0" dense<0> : tensor<1xi64>
  %a1 = onnx.initializer "a1" dense<1> : tensor<1xi64>
  %a2 = onnx.initializer "a2" dense<2> : tensor<1xi64>
  %p = onnx.MatMul(%x, %wih) : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
  %lin = onnx.Add(%p, %bih) : (tensor<2x1x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
  %s0 = onnx.Slice(%lin, %a0, %a1, %a0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %g0 = onnx.Squeeze(%s0, %a0) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %s1 = onnx.Slice(%lin, %a1, %a2, %a0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %g1 = onnx.Squeeze(%s1, %a0) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %m0 = onnx.MatMul(%h0, %whh) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
  %l0 = onnx.Add(%m0, %bhh) : (tensor<1x1x2xf32>, tensor<2xf32>) -> tensor<1x1x2xf32>
  %z0 = onnx.Add(%l0, %g0) : (tensor<1x1x2xf32>, tensor<1x2xf32>) -> tensor<1x1x2xf32>
  %t0 = onnx.Tanh(%z0) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  %m1 = onnx.MatMul(%t0, %whh) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
  %l1 = onnx.Add(%m1, %bhh) : (tensor<1x1x2xf32>, tensor<2xf32>) -> tensor<1x1x2xf32>
  %z1 = onnx.Add(%l1, %g1) : (tensor<1x1x2xf32>, tensor<1x2xf32>) -> tensor<1x1x2xf32>
  %t1 = onnx.Tanh(%z1) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%t0, %t1) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y, %t1 : tensor<2x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// The same rewrites where no cell follows (a projection cut per step, a
// [1, B, H] value through a MatMul and a Tanh, no recurrence): undone, the
// graph stays exactly as it was, with no new initializer.

// CHECK-LABEL: func.func @unit_axis_without_recurrence
// CHECK-NEXT: %[[W:.*]] = onnx.initializer "w"
// CHECK-NEXT: %[[B:.*]] = onnx.initializer "b"
// CHECK-NEXT: %[[N:.*]] = onnx.none
// CHECK-NEXT: %[[A0:.*]] = onnx.initializer "a0"
// CHECK-NEXT: %[[A1:.*]] = onnx.initializer "a1"
// CHECK-NEXT: %[[P:.*]] = onnx.MatMul(%arg0, %[[W]])
// CHECK-NEXT: %[[L:.*]] = onnx.Add(%[[P]], %[[B]])
// CHECK-NEXT: %[[S:.*]] = onnx.Slice(%[[L]], %[[A0]], %[[A1]], %[[A0]], %[[N]])
// CHECK-NEXT: %[[G:.*]] = onnx.Squeeze(%[[S]], %[[A0]])
// CHECK-NEXT: %[[M:.*]] = onnx.MatMul(%arg1, %[[W]]) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
// CHECK-NEXT: %[[T:.*]] = onnx.Tanh(%[[M]]) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
// CHECK-NEXT: return %[[G]], %[[T]]
func.func @unit_axis_without_recurrence(%x: tensor<2x1x2xf32>, %h0: tensor<1x1x2xf32>) -> (tensor<1x2xf32>, tensor<1x1x2xf32>) {
  %w = onnx.initializer "w" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = onnx.initializer "b" dense<[0.5, 0.25]> : tensor<2xf32>
  %none = onnx.none
  %a0 = onnx.initializer "a0" dense<0> : tensor<1xi64>
  %a1 = onnx.initializer "a1" dense<1> : tensor<1xi64>
  %p = onnx.MatMul(%x, %w) : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
  %lin = onnx.Add(%p, %b) : (tensor<2x1x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
  %s0 = onnx.Slice(%lin, %a0, %a1, %a0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %g0 = onnx.Squeeze(%s0, %a0) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %m0 = onnx.MatMul(%h0, %w) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
  %t0 = onnx.Tanh(%m0) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  return %g0, %t0 : tensor<1x2xf32>, tensor<1x1x2xf32>
}

// -----

// An LSTM in the same form (h0 and c0 graph inputs [1, B, H], the gates cut
// by a Split on the feature axis of the [1, B, 4H] pre-activation, the step's
// projection cut by a Gather): the Split is cut without the unit axis too,
// and each input [1, B, H] is squeezed once.

// CHECK-LABEL: func.func @unit_axis_split
// CHECK: %[[X0:.*]] = onnx.Gather(%arg0,
// CHECK: %[[H0:.*]] = onnx.Squeeze(%arg1
// CHECK: %[[C0:.*]] = onnx.Squeeze(%arg2
// CHECK: %[[H1:.*]], %[[C1:.*]] = rnn.lstm_cell %[[X0]], %[[H0]], %[[C0]], {{.*}} {rnn.source_gemms = 2 : i64, rnn.source_nodes = 12 : i64}
// CHECK: %[[X1:.*]] = onnx.Gather(%arg0,
// CHECK: rnn.lstm_cell %[[X1]], %[[H1]], %[[C1]], {{.*}} {rnn.source_gemms = 1 : i64, rnn.source_nodes = 11 : i64}
// CHECK-NOT: onnx.Split
// CHECK-NOT: onnx.Sigmoid
func.func @unit_axis_split(%x: tensor<2x1x1xf32>, %h0: tensor<1x1x1xf32>, %c0: tensor<1x1x1xf32>) -> tensor<2x1x1xf32> {
  %wih = onnx.initializer "w_ih_t" dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %whh = onnx.initializer "w_hh_t" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %none = onnx.none
  %i0 = onnx.initializer "i0" dense<0> : tensor<i64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %p = onnx.MatMul(%x, %wih) : (tensor<2x1x1xf32>, tensor<1x4xf32>) -> tensor<2x1x4xf32>
  %p0 = onnx.Gather(%p, %i0) : (tensor<2x1x4xf32>, tensor<i64>) -> tensor<1x4xf32>
  %m0 = onnx.MatMul(%h0, %whh) : (tensor<1x1x1xf32>, tensor<1x4xf32>) -> tensor<1x1x4xf32>
  %g0 = onnx.Add(%p0, %m0) : (tensor<1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %i_0, %f_0, %gg_0, %o_0 = onnx.Split(%g0, %none) {axis = 2 : i64, num_outputs = 4 : i64} : (tensor<1x1x4xf32>, none) -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  %si0 = onnx.Sigmoid(%i_0) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %sf0 = onnx.Sigmoid(%f_0) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %tg0 = onnx.Tanh(%gg_0) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %so0 = onnx.Sigmoid(%o_0) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %fc0 = onnx.Mul(%sf0, %c0) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %ig0 = onnx.Mul(%si0, %tg0) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %c1 = onnx.Add(%fc0, %ig0) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %tc1 = onnx.Tanh(%c1) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %h1 = onnx.Mul(%so0, %tc1) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %p1 = onnx.Gather(%p, %i1) : (tensor<2x1x4xf32>, tensor<i64>) -> tensor<1x4xf32>
  %m1 = onnx.MatMul(%h1, %whh) : (tensor<1x1x1xf32>, tensor<1x4xf32>) -> tensor<1x1x4xf32>
  %g1 = onnx.Add(%p1, %m1) : (tensor<1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %i_1, %f_1, %gg_1, %o_1 = onnx.Split(%g1, %none) {axis = 2 : i64, num_outputs = 4 : i64} : (tensor<1x1x4xf32>, none) -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  %si1 = onnx.Sigmoid(%i_1) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %sf1 = onnx.Sigmoid(%f_1) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %tg1 = onnx.Tanh(%gg_1) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %so1 = onnx.Sigmoid(%o_1) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %fc1 = onnx.Mul(%sf1, %c1) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %ig1 = onnx.Mul(%si1, %tg1) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %c2 = onnx.Add(%fc1, %ig1) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %tc2 = onnx.Tanh(%c2) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %h2 = onnx.Mul(%so1, %tc2) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %y = onnx.Concat(%h1, %h2) {axis = 0 : i64} : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  return %y : tensor<2x1x1xf32>
}

// -----

// The zero initial state as the exporter leaves it past its folding limits:
// a constant [1, B, H] multiplied by a transposed R at the first step. The
// product of constants is computed without the unit axis too, and the step
// is the chain's first.

// CHECK-LABEL: func.func @unit_axis_unfolded_zero_state
// CHECK: %[[C0:.*]] = rnn.rnn_cell
// CHECK: rnn.rnn_cell %{{.*}}, %[[C0]],
// CHECK-NOT: onnx.Tanh
func.func @unit_axis_unfolded_zero_state(%x: tensor<2x1x2xf32>) -> tensor<2x1x2xf32> {
  %wih = onnx.initializer "w_ih_t" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %bih = onnx.initializer "b_ih" dense<[0.5, 0.25]> : tensor<2xf32>
  %whh = onnx.initializer "w_hh" dense<[[0.1, 0.3], [0.2, 0.4]]> : tensor<2x2xf32>
  %bhh = onnx.initializer "b_hh" dense<[0.125, 0.0625]> : tensor<2xf32>
  %zero = onnx.initializer "unsqueeze" dense<0.0> : tensor<1x1x2xf32>
  %none = onnx.none
  %a0 = onnx.initializer "a0" dense<0> : tensor<1xi64>
  %a1 = onnx.initializer "a1" dense<1> : tensor<1xi64>
  %a2 = onnx.initializer "a2" dense<2> : tensor<1xi64>
  %p = onnx.MatMul(%x, %wih) : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
  %lin = onnx.Add(%p, %bih) : (tensor<2x1x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
  %s0 = onnx.Slice(%lin, %a0, %a1, %a0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %g0 = onnx.Squeeze(%s0, %a0) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %s1 = onnx.Slice(%lin, %a1, %a2, %a0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %g1 = onnx.Squeeze(%s1, %a0) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %rt = onnx.Transpose(%whh) {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %m0 = onnx.MatMul(%zero, %rt) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
  %l0 = onnx.Add(%m0, %bhh) : (tensor<1x1x2xf32>, tensor<2xf32>) -> tensor<1x1x2xf32>
  %z0 = onnx.Add(%l0, %g0) : (tensor<1x1x2xf32>, tensor<1x2xf32>) -> tensor<1x1x2xf32>
  %t0 = onnx.Tanh(%z0) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  %m1 = onnx.MatMul(%t0, %rt) : (tensor<1x1x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2xf32>
  %l1 = onnx.Add(%m1, %bhh) : (tensor<1x1x2xf32>, tensor<2xf32>) -> tensor<1x1x2xf32>
  %z1 = onnx.Add(%l1, %g1) : (tensor<1x1x2xf32>, tensor<1x2xf32>) -> tensor<1x1x2xf32>
  %t1 = onnx.Tanh(%z1) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%t0, %t1) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y : tensor<2x1x2xf32>
}

// -----

// SequenceAt(SplitToSequence(x, 2, axis 1), i) is the Slice of part i (the
// dynamo exporter without its optimizer writes torch's chunk this way), read
// so only where a cell takes it: here no cell follows, and the sequence
// nodes stay exactly as they were.

// CHECK-LABEL: func.func @sequence_at_alone
// CHECK-NEXT: %[[S:.*]] = onnx.initializer "s"
// CHECK-NEXT: %[[I:.*]] = onnx.initializer "i"
// CHECK-NEXT: %[[Q:.*]] = onnx.node "SplitToSequence"(%arg0, %[[S]])
// CHECK-NEXT: %[[A:.*]] = onnx.node "SequenceAt"(%[[Q]], %[[I]])
// CHECK-NEXT: %[[T:.*]] = onnx.Tanh(%[[A]])
// CHECK-NEXT: return %[[T]]
func.func @sequence_at_alone(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %s = onnx.initializer "s" dense<2> : tensor<i64>
  %i = onnx.initializer "i" dense<1> : tensor<i64>
  %seq = onnx.node "SplitToSequence"(%x, %s) {attrs = {axis = 1 : i64}} : (tensor<2x4xf32>, tensor<i64>) -> !onnx.seq<tensor<2x2xf32>>
  %p = onnx.node "SequenceAt"(%seq, %i) : (!onnx.seq<tensor<2x2xf32>>, tensor<i64>) -> tensor<2x2xf32>
  %t = onnx.Tanh(%p) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}

// -----

// Each step's input joined from parts in the model, x_t = cat([e_t, cond]),
// times one weight (an RNNCell over a token's embedding and a condition
// vector): the gates read e_t, cond and h as three values; the parts are one
// input again, the Concat, with the weight's rows of both. The first step's
// zero state was folded away (no R product): its Concat is its input too,
// since neither part has the hidden size.
// CHECK-LABEL: func.func @rnn_step_input_concat_parts
// CHECK-DAG: %[[W:.*]] = onnx.initializer "rnn_W" dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]]>
// CHECK: %[[X0:.*]] = onnx.Concat(%arg0, %arg2) {axis = 1 : i64}
// CHECK: %[[C0:.*]] = rnn.rnn_cell %[[X0]], %{{.*}}, %[[W]],
// CHECK: %[[X1:.*]] = onnx.Concat(%arg1, %arg2) {axis = 1 : i64}
// CHECK: %[[C1:.*]] = rnn.rnn_cell %[[X1]], %[[C0]], %[[W]],
// CHECK-NOT: onnx.Tanh
// CHECK: return %[[C1]]
func.func @rnn_step_input_concat_parts(%e0: tensor<1x3xf32>, %e1: tensor<1x3xf32>, %cond: tensor<1x1xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "w_t" dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %r = onnx.initializer "r_t" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %b = onnx.initializer "b" dense<[0.5, 0.25]> : tensor<2xf32>
  %x0 = onnx.Concat(%e0, %cond) {axis = 1 : i64} : (tensor<1x3xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %p0 = onnx.MatMul(%x0, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  %a0 = onnx.Add(%p0, %b) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h1 = onnx.Tanh(%a0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %x1 = onnx.Concat(%e1, %cond) {axis = 1 : i64} : (tensor<1x3xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %p1 = onnx.MatMul(%x1, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  %q1 = onnx.MatMul(%h1, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %s1 = onnx.Add(%p1, %q1) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %a1 = onnx.Add(%s1, %b) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h2 = onnx.Tanh(%a1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// The same, but a part of the first step's Concat has the hidden size: it
// may be that step's state ([x, h] as TensorFlow writes a cell), so the
// parts stay apart there (read as x and h, exact for one step) and the
// later step still reads its Concat as one.
// CHECK-LABEL: func.func @rnn_concat_part_of_hidden_size
// CHECK: rnn.rnn_cell %arg0, %arg2,
// CHECK: %[[X1:.*]] = onnx.Concat(%arg1, %arg2) {axis = 1 : i64}
// CHECK: rnn.rnn_cell %[[X1]], %{{.*}}, %{{.*}},
func.func @rnn_concat_part_of_hidden_size(%e0: tensor<1x1xf32>, %e1: tensor<1x1xf32>, %cond: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "w_t" dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %r = onnx.initializer "r_t" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %b = onnx.initializer "b" dense<[0.5, 0.25]> : tensor<2xf32>
  %x0 = onnx.Concat(%e0, %cond) {axis = 1 : i64} : (tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x3xf32>
  %p0 = onnx.MatMul(%x0, %w) : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %a0 = onnx.Add(%p0, %b) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h1 = onnx.Tanh(%a0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %x1 = onnx.Concat(%e1, %cond) {axis = 1 : i64} : (tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x3xf32>
  %p1 = onnx.MatMul(%x1, %w) : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %q1 = onnx.MatMul(%h1, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %s1 = onnx.Add(%p1, %q1) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %a1 = onnx.Add(%s1, %b) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h2 = onnx.Tanh(%a1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// ONNX Runtime's optimizer (ORT_ENABLE_EXTENDED) saves a Gemm and its Tanh
// as one com.microsoft.FusedGemm, here with the recurrent product as C (as
// Keras' SimpleRNN unrolled): each becomes a Gemm and the Tanh again, its
// untyped result typed, and the steps are cells. A FusedGemm whose
// activation takes parameters stays as it is.
// CHECK-LABEL: func.func @fused_gemm_rnn
// CHECK-NOT: "FusedGemm"
// CHECK: %[[C0:.*]] = rnn.rnn_cell %arg0, %arg2,
// CHECK: %[[C1:.*]] = rnn.rnn_cell %arg1, %[[C0]],
// CHECK: onnx.node "FusedGemm"
// CHECK-SAME: LeakyRelu
func.func @fused_gemm_rnn(%x0: tensor<1x2xf32>, %x1: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> (tensor<1x2xf32>, !onnx.unknown) {
  %w = onnx.initializer "W" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = onnx.initializer "R" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %b = onnx.initializer "B" dense<[0.5, 0.25]> : tensor<2xf32>
  %p0 = onnx.Gemm(%h, %r, %b) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h1 = onnx.node "FusedGemm"(%x0, %w, %p0) {domain = "com.microsoft", attrs = {activation = "Tanh", alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 0 : i64}} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> !onnx.unknown
  %p1 = onnx.Gemm(%h1, %r, %b) : (!onnx.unknown, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h2 = onnx.node "FusedGemm"(%x1, %w, %p1) {domain = "com.microsoft", attrs = {activation = "Tanh"}} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %l = onnx.node "FusedGemm"(%x1, %w, %b) {domain = "com.microsoft", attrs = {activation = "LeakyRelu", activation_alpha = 0.1 : f32}} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> !onnx.unknown
  return %h2, %l : tensor<1x2xf32>, !onnx.unknown
}

// -----

// A simple RNN whose activation is any of ONNX's (Keras' SimpleRNN with
// activation="softsign", "elu", "leaky_relu", ...), here Softsign and
// LeakyRelu as onnx.node: two chained steps become cells with that
// activation. A Softsign chain whose steps are not chained (one step) stays.
// CHECK-LABEL: func.func @rnn_softsign_chain
// CHECK: %[[C0:.*]] = rnn.rnn_cell %arg0, %arg2, {{.*}}activations = ["Softsign"]
// CHECK: rnn.rnn_cell %arg1, %[[C0]], {{.*}}activations = ["Softsign"]
// CHECK: %[[L0:.*]] = rnn.rnn_cell %arg0, %arg2, {{.*}}activation_alpha = array<f32: 2.000000e-01>{{.*}}activations = ["LeakyRelu"]
// CHECK: rnn.rnn_cell %arg1, %[[L0]], {{.*}}activations = ["LeakyRelu"]
// CHECK-NOT: onnx.node "Softsign"
// CHECK-NOT: onnx.node "LeakyRelu"
func.func @rnn_softsign_chain(%x0: tensor<1x2xf32>, %x1: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = onnx.initializer "W" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = onnx.initializer "R" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %b = onnx.initializer "B" dense<[0.5, 0.25]> : tensor<2xf32>
  %p0 = onnx.Gemm(%h, %r, %b) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %a0 = onnx.Gemm(%x0, %w, %p0) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %h1 = onnx.node "Softsign"(%a0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %p1 = onnx.Gemm(%h1, %r, %b) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %a1 = onnx.Gemm(%x1, %w, %p1) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %h2 = onnx.node "Softsign"(%a1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %q0 = onnx.Gemm(%h, %r, %b) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %c0 = onnx.Gemm(%x0, %w, %q0) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %g1 = onnx.node "LeakyRelu"(%c0) {attrs = {alpha = 0.2 : f32}} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %q1 = onnx.Gemm(%g1, %r, %b) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %c1 = onnx.Gemm(%x1, %w, %q1) : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %g2 = onnx.node "LeakyRelu"(%c1) {attrs = {alpha = 0.2 : f32}} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %h2, %g2 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// A GRU whose gates are Tanh (Keras' recurrent_activation="tanh"): any of
// ONNX's activations is a gate's; z and r agree.
// CHECK-LABEL: func.func @gru_tanh_gates
// CHECK: rnn.gru_cell %arg0, %arg1, {{.*}}activations = ["Tanh", "Tanh"]
// CHECK-NOT: onnx.Tanh
func.func @gru_tanh_gates(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xz, %xr, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hz, %hr, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.Tanh(%az) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.Tanh(%ar) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %a = onnx.Mul(%omz, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %b = onnx.Mul(%z, %h) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%a, %b) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// Keras' hard_sigmoid at an LSTM's first step as tf2onnx writes it: the
// forget gate's / 6 moved onto the zero state, f * c0 = Clip(L, 0, 6) *
// (c0 / 6). Clip(L, 0, u) * K = HardSigmoid(1/u, 0)(L) * (u * K): with the
// other gates' Mul(Clip(L, 0, 6), 1/6) the step is an LSTM cell.
// CHECK-LABEL: func.func @hard_sigmoid_scale_on_zero_state
// CHECK: rnn.lstm_cell
// CHECK-SAME: activation_alpha = array<f32: 0.166666672>, activation_beta = array<f32: 0.000000e+00>, activations = ["HardSigmoid", "Tanh", "Tanh"]
// CHECK-NOT: onnx.Clip
func.func @hard_sigmoid_scale_on_zero_state(%x: tensor<1x2xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %b = onnx.initializer "bias" dense<[3.0, 3.0, 0.0, 3.0]> : tensor<4xf32>
  %zero = onnx.initializer "zero" dense<0.0> : tensor<f32>
  %six = onnx.initializer "six" dense<6.0> : tensor<f32>
  %sixth = onnx.initializer "sixth" dense<0.166666672> : tensor<f32>
  %c0 = onnx.initializer "c0_sixth" dense<0.0> : tensor<1x1xf32>
  %gx = onnx.Gemm(%x, %w, %b) : (tensor<1x2xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %pi, %pf, %pg, %po = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %ci = onnx.Clip(%pi, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %i = onnx.Mul(%ci, %sixth) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %cf = onnx.Clip(%pf, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%cf, %c0) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %g = onnx.Tanh(%pg) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%i, %g) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %co = onnx.Clip(%po, %zero, %six) : (tensor<1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1xf32>
  %o = onnx.Mul(%co, %sixth) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%o, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Clip(L, 0, 6) times a constant outside any cell is left as it was (the
// rewrite that reads it as a HardSigmoid is undone).
// CHECK-LABEL: func.func @clip_times_constant_alone
// CHECK: %[[C:.*]] = onnx.Clip
// CHECK: onnx.Mul(%[[C]], %{{.*}})
// CHECK-NOT: onnx.Mul
func.func @clip_times_constant_alone(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %zero = onnx.initializer "zero" dense<0.0> : tensor<f32>
  %six = onnx.initializer "six" dense<6.0> : tensor<f32>
  %k = onnx.initializer "k" dense<[0.5, 0.25]> : tensor<2xf32>
  %c = onnx.Clip(%x, %zero, %six) : (tensor<1x2xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2xf32>
  %m = onnx.Mul(%c, %k) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %m : tensor<1x2xf32>
}

// -----

// h' = z*n + (1 - z)*h with HardSigmoid(0.2, 0.3) gates: 1 - hs(a) =
// hs(-a + (1 - 2 beta) / alpha), so z's rows are negated and its bias gains
// (1 - 0.6) / 0.2 = 2 (1.99999988 from the f32 alpha and beta); r keeps the
// same activation. The shift's own constant does not stay behind.
// CHECK-LABEL: func.func @gru_negated_update_hard_sigmoid
// CHECK-NOT: gru_update_shift
// CHECK-DAG: %[[W:.*]] = onnx.initializer "gru_W" dense<{{\[}}[2.000000e+00, 5.000000e+00], [-1.000000e+00, -4.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[B:.*]] = onnx.initializer "gru_Bw" dense<[0.000000e+00, 1.99999988, 0.000000e+00]> : tensor<3xf32>
// CHECK: rnn.gru_cell %arg0, %arg1, %[[W]], %{{.*}}, %[[B]], {{.*}}activation_alpha = array<f32: 2.000000e-01>, activation_beta = array<f32: 3.000000e-01>, activations = ["HardSigmoid", "Tanh"]
// CHECK-NOT: gru_update_shift
// CHECK: return
func.func @gru_negated_update_hard_sigmoid(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w = onnx.initializer "kernel" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = onnx.initializer "recurrent_kernel" dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %one = onnx.initializer "one" dense<1.0> : tensor<f32>
  %none = onnx.none
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %xz, %xr, %xn = onnx.Split(%gx, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %hz, %hr, %hn = onnx.Split(%gh, %none) {axis = 1 : i64} : (tensor<1x3xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %az = onnx.Add(%xz, %hz) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %z = onnx.HardSigmoid(%az) {alpha = 0.2 : f32, beta = 0.3 : f32} : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %ar = onnx.Add(%xr, %hr) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %rr = onnx.HardSigmoid(%ar) {alpha = 0.2 : f32, beta = 0.3 : f32} : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %rh = onnx.Mul(%rr, %hn) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %an = onnx.Add(%xn, %rh) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %n = onnx.Tanh(%an) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %zn = onnx.Mul(%z, %n) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %omz = onnx.Sub(%one, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %b = onnx.Mul(%omz, %h) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Add(%zn, %b) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1 : tensor<1x1xf32>
}

// -----

// A simple RNN step in the body of a Loop (Keras' SimpleRNN with
// unroll=False over a time axis of unknown length): one step, but the chain
// closes through the loop: the hidden-size input is a carried value and the
// body yields the step's output for it. A lone activation of a linear form
// elsewhere would not count (see @lone_tanh_not_a_cell).
// CHECK-LABEL: func.func @rnn_step_in_loop
// CHECK: onnx.node "Loop"
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %[[H:.*]]: tensor<2x4xf32>):
// CHECK: %[[C:.*]] = rnn.rnn_cell %{{.*}}, %[[H]],
// CHECK-NOT: onnx.Tanh
// CHECK: onnx.yield %{{.*}}, %[[C]], %[[C]]
func.func @rnn_step_in_loop(%x: tensor<?x2x3xf32>, %m: tensor<i64>) -> tensor<?x2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %b = onnx.initializer "b" dense<0.3> : tensor<4xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %none = onnx.none
  %hT, %ys = onnx.node "Loop"(%m, %none, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %ab = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %c = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%ab, %c) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %cond, %hn, %hn : tensor<i1>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys : tensor<?x2x4xf32>
}

// -----

// The same step outside a loop, reading a graph input as its "state": no
// chain, not a cell.
// CHECK-LABEL: func.func @lone_tanh_not_a_cell
// CHECK-NOT: rnn.rnn_cell
// CHECK: onnx.Tanh
func.func @lone_tanh_not_a_cell(%xt: tensor<2x3xf32>, %h: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %b = onnx.initializer "b" dense<0.3> : tensor<4xf32>
  %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %ab = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %c = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = onnx.Add(%ab, %c) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %hn : tensor<2x4xf32>
}
