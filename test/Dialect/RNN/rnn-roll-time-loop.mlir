// RUN: lstm-opt %s -split-input-file -rnn-roll-time-loop -verify-diagnostics | FileCheck %s

// (No opset import: Squeeze/Unsqueeze take `axes` as attribute, as before
// opset 13.)
// Three steps over x[0], x[1], x[2] (Gather on the time axis), hidden states
// stacked with Unsqueeze + Concat: one forward layer whose Y replaces the
// stack and whose h_n/c_n replace the last step's states.

// CHECK-LABEL: func.func @forward
// CHECK-DAG: %[[W:.*]] = onnx.initializer "lstm_W" {{.*}} : tensor<1x8x3xf32>
// CHECK: %[[H0:.*]] = onnx.Unsqueeze(%arg1, %{{.*}})
// CHECK: %[[C0:.*]] = onnx.Unsqueeze(%arg2, %{{.*}})
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %[[HN:[a-zA-Z0-9_]+]], %[[CN:[a-zA-Z0-9_]+]] = rnn.sequence lstm forward %arg0, %[[W]], %{{.*}}, %{{.*}}, %{{.*}} init(%[[H0]], %[[C0]]) {hidden_size = 2 : i64, rnn.source_gemms = 6 : i64, rnn.source_nodes = 46 : i64}
// CHECK: %[[YS:.*]] = onnx.Squeeze(%[[Y]], %{{.*}}) {axes_attr = array<i64: 1>} : (tensor<3x1x1x2xf32>, none) -> tensor<3x1x2xf32>
// CHECK: %[[H:.*]] = onnx.Squeeze(%[[HN]]
// CHECK: %[[C:.*]] = onnx.Squeeze(%[[CN]]
// CHECK-NOT: rnn.lstm_cell
// CHECK-NOT: onnx.Concat
// CHECK: return %[[YS]], %[[H]], %[[C]]
func.func @forward(%x: tensor<3x1x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %i2 = onnx.Constant() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %ax = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %x0 = onnx.Gather(%x, %i0) : (tensor<3x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 3 steps, forward, hidden 2: 46 nodes -> 1 layer + 5 glue; 6 GEMMs -> 1 input GEMM + 3 recurrent}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b {rnn.source_nodes = 13 : i64, rnn.source_gemms = 2 : i64} : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %x1 = onnx.Gather(%x, %i1) : (tensor<3x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b {rnn.source_nodes = 13 : i64, rnn.source_gemms = 2 : i64} : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %x2 = onnx.Gather(%x, %i2) : (tensor<3x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %h3, %c3 = rnn.lstm_cell %x2, %h2, %c2, %w, %r, %b, %b {rnn.source_nodes = 13 : i64, rnn.source_gemms = 2 : i64} : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %u1 = onnx.Unsqueeze(%h1, %ax) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %u2 = onnx.Unsqueeze(%h2, %ax) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %u3 = onnx.Unsqueeze(%h3, %ax) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%u1, %u2, %u3) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<3x1x2xf32>
  return %y, %h3, %c3 : tensor<3x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// Stepping backwards in time (x[1], then x[0]): a reverse layer.
// CHECK-LABEL: func.func @reverse
// CHECK: rnn.sequence lstm reverse %arg0
func.func @reverse(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %x1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 2 steps, reverse}}
  %h1, %c1 = rnn.lstm_cell %x1, %h, %c, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %x0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %h2, %c2 = rnn.lstm_cell %x0, %h1, %c1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// The cell state of step 0 is also returned: a layer cannot expose it, so
// the chain is cut there (each part becomes its own layer).
// CHECK-LABEL: func.func @state_leaks
// CHECK-COUNT-2: rnn.sequence lstm forward
func.func @state_leaks(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %x0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+2 {{not rolled into a layer: the cell state of step 0 is also read by 'func.return'}}
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %x1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2, %c1 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// Step 1 has other weights: it starts a new layer.
// CHECK-LABEL: func.func @weights_differ
// CHECK-COUNT-2: rnn.sequence lstm forward
func.func @weights_differ(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %w2 = onnx.initializer "W2" dense<0.7> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %x0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %x1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+2 {{starts a new layer: its weights differ from the previous step's}}
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w2, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// Steps cut out of a batch-major X [B, T, I] as Reshape(Slice(x, t, t+1,
// axis 1), [B, I]) (jax2onnx's x[:, t].reshape): consecutive slices on axis
// 1, read through a Transpose. A Reshape that does more than drop the unit
// axis is not a step.
// CHECK-LABEL: func.func @slice_reshape
// CHECK: %[[XT:.*]] = onnx.Transpose(%arg0)
// CHECK: rnn.sequence lstm forward %[[XT]]
func.func @slice_reshape(%x: tensor<1x2x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %s0 = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %s1 = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %s2 = onnx.Constant() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = onnx.none
  %p0 = onnx.Slice(%x, %s0, %s1, %s1, %none) : (tensor<1x2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x3xf32>
  %x0 = onnx.Reshape(%p0, %shape) : (tensor<1x1x3xf32>, tensor<2xi64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 2 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %p1 = onnx.Slice(%x, %s1, %s2, %s1, %none) : (tensor<1x2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x3xf32>
  %x1 = onnx.Reshape(%p1, %shape) : (tensor<1x1x3xf32>, tensor<2xi64>) -> tensor<1x3xf32>
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// jax2onnx's x[:, t]: a Slice over every axis, the others whole (starts
// [0, t, 0], ends [B, t + 1, I]; an end past the dimension is clamped) +
// Squeeze of the step axis. Step 1's starts are computed as jax2onnx's
// dynamic_index_in_dim computes them: Where(t < 0, t + T, t) over
// constants, concatenated.
// CHECK-LABEL: func.func @slice_all_axes
// CHECK: %[[XT:.*]] = onnx.Transpose(%arg0)
// CHECK: rnn.sequence lstm forward %[[XT]]
func.func @slice_all_axes(%x: tensor<1x2x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %st0 = onnx.Constant() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  %en0 = onnx.Constant() {value = dense<[1, 1, 99]> : tensor<3xi64>} : () -> tensor<3xi64>
  %axes = onnx.Constant() {value = dense<[0, 1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %sq = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.none
  %p0 = onnx.Slice(%x, %st0, %en0, %axes, %none) : (tensor<1x2x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, none) -> tensor<1x1x3xf32>
  %x0 = onnx.Squeeze(%p0, %sq) : (tensor<1x1x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused LSTM layer: 2 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %t = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %zero = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = onnx.Constant() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %neg = onnx.node "Less"(%t, %zero) : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %wrapped = onnx.Add(%t, %n) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %idx = onnx.node "Where"(%neg, %wrapped, %t) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %u = onnx.Unsqueeze(%idx, %none) {axes_attr = array<i64: 0>} : (tensor<i64>, none) -> tensor<1xi64>
  %z1 = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st1 = onnx.Concat(%z1, %u, %z1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %size = onnx.Constant() {value = dense<[1, 1, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %en1 = onnx.Add(%st1, %size) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %p1 = onnx.Slice(%x, %st1, %en1, %axes, %none) : (tensor<1x2x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, none) -> tensor<1x1x3xf32>
  %x1 = onnx.Squeeze(%p1, %sq) : (tensor<1x1x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// A Slice over every axis that also cuts the features (ends [1, t + 1, 2]
// of I = 3) is not step t of x: the steps' inputs are stacked as computed
// values (Concat of the two cuts), not read as x's time slices.
// CHECK-LABEL: func.func @slice_cuts_features
// CHECK: %[[P0:.*]] = onnx.Slice(%arg0
// CHECK: %[[P1:.*]] = onnx.Slice(%arg0
// CHECK: %[[X:.*]] = onnx.Concat(%[[P0]], %[[P1]]) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
// CHECK: rnn.sequence lstm forward %[[X]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: rnn.sequence
func.func @slice_cuts_features(%x: tensor<1x2x3xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<8x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<8xf32>
  %st0 = onnx.Constant() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  %en0 = onnx.Constant() {value = dense<[1, 1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %st1 = onnx.Constant() {value = dense<[0, 1, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  %en1 = onnx.Constant() {value = dense<[1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %axes = onnx.Constant() {value = dense<[0, 1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %sq = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.none
  %p0 = onnx.Slice(%x, %st0, %en0, %axes, %none) : (tensor<1x2x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, none) -> tensor<1x1x2xf32>
  %x0 = onnx.Squeeze(%p0, %sq) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  // expected-remark @+1 {{fused LSTM layer: 2 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %p1 = onnx.Slice(%x, %st1, %en1, %axes, %none) : (tensor<1x2x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, none) -> tensor<1x1x2xf32>
  %x1 = onnx.Squeeze(%p1, %sq) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// A stacked Unsqueeze that is read elsewhere too (torch.export's RNN returns
// the last one as h_n): the stack still becomes Y; the other reader reads
// h_n, which is that Unsqueeze of the last state.

// CHECK-LABEL: func.func @stack_read_twice
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %[[HN:[a-zA-Z0-9_]+]] = rnn.sequence rnn forward %arg0
// CHECK: %[[YS:.*]] = onnx.Squeeze(%[[Y]]
// CHECK-NOT: onnx.Concat
// CHECK-NOT: onnx.Squeeze
// CHECK: return %[[YS]], %[[HN]]
func.func @stack_read_twice(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<2x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<2x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<2xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %ax = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %x0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused RNN layer: 2 steps, forward}}
  %h1 = rnn.rnn_cell %x0, %h, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %x1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %h2 = rnn.rnn_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %u1 = onnx.Unsqueeze(%h1, %ax) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %u2 = onnx.Unsqueeze(%h2, %ax) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%u1, %u2) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y, %u2 : tensor<2x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// Step inputs computed inside the loop, the same way at every step (here a
// ReLU of each step's slice): computed once for all steps, over the slices'
// tensor.
// CHECK-LABEL: func.func @computed_step_inputs
// CHECK: %[[R:.*]] = onnx.Relu(%arg0) : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
// CHECK: rnn.sequence gru forward %[[R]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: rnn.gru_cell
// CHECK-NOT: onnx.Gather
func.func @computed_step_inputs(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<6x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<6xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %g0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x0 = onnx.Relu(%g0) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %h1 = rnn.gru_cell %x0, %h, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  %g1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x1 = onnx.Relu(%g1) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %h2 = rnn.gru_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// Step inputs computed differently at each step cannot be computed at once:
// what computes step 1's input, written after step 0, moves before the
// layer, and the inputs are stacked.
// CHECK-LABEL: func.func @computed_step_inputs_differ
// CHECK: %[[X0:.*]] = onnx.Gather(%arg0
// CHECK: %[[R0:.*]] = onnx.Relu(%[[X0]])
// CHECK: %[[X1:.*]] = onnx.Gather(%arg0
// CHECK: %[[R1:.*]] = onnx.Tanh(%[[X1]])
// CHECK: %[[U0:.*]] = onnx.Unsqueeze(%[[R0]]
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[R1]]
// CHECK: %[[S:.*]] = onnx.Concat(%[[U0]], %[[U1]]) {axis = 0 : i64} : (tensor<1x1x3xf32>, tensor<1x1x3xf32>) -> tensor<2x1x3xf32>
// CHECK: rnn.sequence gru forward %[[S]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: rnn.gru_cell
func.func @computed_step_inputs_differ(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<6x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<6xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %g0 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x0 = onnx.Relu(%g0) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %h1 = rnn.gru_cell %x0, %h, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  %g1 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x1 = onnx.Tanh(%g1) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %h2 = rnn.gru_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// An embedding and a projection of each step's token, batch-major tokens
// [B, T] read as tokens[:, t]: one Gather of the table at all tokens
// (time first), one MatMul by the transposed weight, one Add of the bias.
// CHECK-LABEL: func.func @batched_embedding_projection
// CHECK-DAG: %[[WT:.*]] = onnx.initializer "batched_gemm_B" dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[T:.*]] = onnx.Transpose(%arg0) {perm = array<i64: 1, 0>} : (tensor<1x2xi64>) -> tensor<2x1xi64>
// CHECK: %[[E:.*]] = onnx.Gather(%{{.*}}, %[[T]]) : (tensor<5x2xf32>, tensor<2x1xi64>) -> tensor<2x1x2xf32>
// CHECK: %[[M:.*]] = onnx.MatMul(%[[E]], %[[WT]]) : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
// CHECK: %[[X:.*]] = onnx.Add(%[[M]], %{{.*}}) : (tensor<2x1x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
// CHECK: rnn.sequence rnn forward %[[X]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: onnx.Gemm
func.func @batched_embedding_projection(%tok: tensor<1x2xi64>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %emb = onnx.initializer "emb" dense<0.5> : tensor<5x2xf32>
  %pw = onnx.initializer "pw" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %pb = onnx.initializer "pb" dense<[0.1, 0.2]> : tensor<2xf32>
  %w = onnx.initializer "W" dense<0.1> : tensor<2x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<2x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<2xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %t0 = onnx.Gather(%tok, %i0) {axis = 1 : i64} : (tensor<1x2xi64>, tensor<i64>) -> tensor<1xi64>
  %e0 = onnx.Gather(%emb, %t0) : (tensor<5x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %x0 = onnx.Gemm(%e0, %pw, %pb) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  // expected-remark @+1 {{fused RNN layer: 2 steps, forward, hidden 2}}
  %h1 = rnn.rnn_cell %x0, %h, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %t1 = onnx.Gather(%tok, %i1) {axis = 1 : i64} : (tensor<1x2xi64>, tensor<i64>) -> tensor<1xi64>
  %e1 = onnx.Gather(%emb, %t1) : (tensor<5x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %x1 = onnx.Gemm(%e1, %pw, %pb) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %h2 = rnn.rnn_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// Each step's token embedding joined with a vector every step reads (a
// condition): the embeddings of all tokens joined with the vector repeated
// for every step (Expand to [T, 1, 2]), one Concat on the feature axis.
// CHECK-LABEL: func.func @batched_concat_shared_part
// CHECK-DAG: %[[S:.*]] = onnx.initializer "batched_expand_shape" dense<[2, 1, 1]> : tensor<3xi64>
// CHECK-DAG: %[[E:.*]] = onnx.Gather(%{{.*}}, %{{.*}}) : (tensor<5x2xf32>, tensor<2x1xi64>) -> tensor<2x1x2xf32>
// CHECK: %[[C:.*]] = onnx.Expand(%arg1, %[[S]]) : (tensor<1x2xf32>, tensor<3xi64>) -> tensor<2x1x2xf32>
// CHECK: %[[X:.*]] = onnx.Concat(%[[E]], %[[C]]) {axis = 2 : i64} : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x4xf32>
// CHECK: rnn.sequence rnn forward %[[X]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: onnx.Concat
func.func @batched_concat_shared_part(%tok: tensor<1x2xi64>, %cond: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %emb = onnx.initializer "emb" dense<0.5> : tensor<5x2xf32>
  %w = onnx.initializer "W" dense<0.1> : tensor<2x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<2x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<2xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %t0 = onnx.Gather(%tok, %i0) {axis = 1 : i64} : (tensor<1x2xi64>, tensor<i64>) -> tensor<1xi64>
  %e0 = onnx.Gather(%emb, %t0) : (tensor<5x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %x0 = onnx.Concat(%e0, %cond) {axis = -1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  // expected-remark @+1 {{fused RNN layer: 2 steps, forward, hidden 2}}
  %h1 = rnn.rnn_cell %x0, %h, %w, %r, %b, %b : (tensor<1x4xf32>, tensor<1x2xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %t1 = onnx.Gather(%tok, %i1) {axis = 1 : i64} : (tensor<1x2xi64>, tensor<i64>) -> tensor<1xi64>
  %e1 = onnx.Gather(%emb, %t1) : (tensor<5x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %x1 = onnx.Concat(%e1, %cond) {axis = -1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  %h2 = rnn.rnn_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x4xf32>, tensor<1x2xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// A step input computed from an earlier step's state (a decoder feeding its
// output back) cannot be stacked: each step stays a layer of its own.
// CHECK-LABEL: func.func @step_input_fed_back
// CHECK-COUNT-2: rnn.sequence gru forward {{.*}} -> (tensor<1x1x1x2xf32>
func.func @step_input_fed_back(%x0: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<6xf32>
  // expected-remark @+1 {{fused GRU layer: 1 steps}}
  %h1 = rnn.gru_cell %x0, %h, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<6x2xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  %x1 = onnx.Tanh(%h1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  // expected-remark @+2 {{not rolled into a layer: the step input of step 1 is computed from an earlier step's outputs (fed back, as a decoder does)}}
  // expected-remark @+1 {{fused GRU layer: 1 steps}}
  %h2 = rnn.gru_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<6x2xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// One-step layers chained by their state (nn.GRU called once per token, as
// the encoder of PyTorch's seq2seq tutorial does; here with separate but
// equal weights): one layer over the stacked step inputs, Y the stack of
// the steps' outputs (Squeeze of the direction axis, then Concat).
// CHECK-LABEL: func.func @one_step_layer_chain
// CHECK: %[[S:.*]] = onnx.Concat(%arg0, %arg1, %arg2) {axis = 0 : i64} : (tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>) -> tensor<3x1x3xf32>
// CHECK: %[[Y:.*]], %[[HN:.*]] = rnn.sequence gru forward %[[S]], {{.*}} init(%arg3) {{.*}} -> (tensor<3x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK: %[[YS:.*]] = onnx.Squeeze(%[[Y]]
// CHECK-NOT: rnn.sequence
// CHECK: return %[[YS]]
func.func @one_step_layer_chain(%x0: tensor<1x1x3xf32>, %x1: tensor<1x1x3xf32>, %x2: tensor<1x1x3xf32>, %h: tensor<1x1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x3xf32>
  %w2 = onnx.initializer "W2" dense<0.1> : tensor<1x6x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %ax = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-remark @+1 {{fused GRU layer: 3 steps, forward, hidden 2}}
  %y0, %h1 = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h) {hidden_size = 2 : i64, linear_before_reset} : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %o0 = onnx.Squeeze(%y0, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y1, %h2 = rnn.sequence gru forward %x1, %w2, %r, %b, %b init(%h1) {hidden_size = 2 : i64, linear_before_reset} : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %o1 = onnx.Squeeze(%y1, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y2, %h3 = rnn.sequence gru forward %x2, %w, %r, %b, %b init(%h2) {hidden_size = 2 : i64, linear_before_reset} : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %o2 = onnx.Squeeze(%y2, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%o0, %o1, %o2) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<3x1x2xf32>
  return %y, %h3 : tensor<3x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// The same with nn.LSTM through torch.export: each state passes through a
// Slice of its (unit) layer axis, and Y is read through a Transpose that
// only moves a unit axis and a Reshape to [1, B, H].
// CHECK-LABEL: func.func @one_step_lstm_chain_sliced_states
// CHECK: %[[S:.*]] = onnx.Concat(%arg0, %arg1) {axis = 0 : i64}
// CHECK: rnn.sequence lstm forward %[[S]], {{.*}} init(%arg2, %arg3) {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK-NOT: rnn.sequence
func.func @one_step_lstm_chain_sliced_states(%x0: tensor<1x1x3xf32>, %x1: tensor<1x1x3xf32>, %h: tensor<1x1x2xf32>, %c: tensor<1x1x2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x8x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x8x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x8xf32>
  %s0 = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %s1 = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = onnx.Constant() {value = dense<[1, 1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %none = onnx.none
  // expected-remark @+1 {{fused LSTM layer: 2 steps, forward, hidden 2}}
  %y0, %h1, %c1 = rnn.sequence lstm forward %x0, %w, %r, %b, %b init(%h, %c) {hidden_size = 2 : i64} : (tensor<1x1x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %t0 = onnx.Transpose(%y0) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  %o0 = onnx.Reshape(%t0, %shape) : (tensor<1x1x1x2xf32>, tensor<3xi64>) -> tensor<1x1x2xf32>
  %h1s = onnx.Slice(%h1, %s0, %s1, %s0, %none) : (tensor<1x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %c1s = onnx.Slice(%c1, %s0, %s1, %s0, %none) : (tensor<1x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %y1, %h2, %c2 = rnn.sequence lstm forward %x1, %w, %r, %b, %b init(%h1s, %c1s) {hidden_size = 2 : i64} : (tensor<1x1x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %t1 = onnx.Transpose(%y1) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  %o1 = onnx.Reshape(%t1, %shape) : (tensor<1x1x1x2xf32>, tensor<3xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%o0, %o1) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y, %h2 : tensor<2x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// One-step layers chained by their state but with different weights (an
// encoder handing its state to a decoder) are two layers: left as they are.
// CHECK-LABEL: func.func @one_step_layers_differ
// CHECK-COUNT-2: rnn.sequence gru forward {{.*}} -> (tensor<1x1x1x2xf32>
// CHECK-NOT: rnn.gru_cell
func.func @one_step_layers_differ(%x0: tensor<1x1x3xf32>, %x1: tensor<1x1x3xf32>, %h: tensor<1x1x2xf32>) -> tensor<1x1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x3xf32>
  %w2 = onnx.initializer "W2" dense<0.5> : tensor<1x6x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %y0, %h1 = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h) {hidden_size = 2 : i64} : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %y1, %h2 = rnn.sequence gru forward %x1, %w2, %r, %b, %b init(%h1) {hidden_size = 2 : i64} : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  return %h2 : tensor<1x1x2xf32>
}

// -----

// A chain of one-step layers whose step input is computed from the previous
// step's output (a greedy decoder) is left as it is, with a remark.
// CHECK-LABEL: func.func @one_step_layer_fed_back
// CHECK-COUNT-2: rnn.sequence gru forward {{.*}} -> (tensor<1x1x1x2xf32>
// CHECK-NOT: rnn.gru_cell
func.func @one_step_layer_fed_back(%x0: tensor<1x1x2xf32>, %h: tensor<1x1x2xf32>) -> tensor<1x1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %ax = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %y0, %h1 = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %o0 = onnx.Squeeze(%y0, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %x1 = onnx.Tanh(%o0) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{not rolled into a layer: the step input of step 1 is computed from an earlier step's outputs (fed back, as a decoder does)}}
  %y1, %h2 = rnn.sequence gru forward %x1, %w, %r, %b, %b init(%h1) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  return %h2 : tensor<1x1x2xf32>
}

// -----

// nn.GRU(num_layers=2) called once per token: per call a one-step layer for
// each layer, the state [2, B, H] the Concat of their h_n, and each layer's
// next initial state a Slice of it. Each layer's chain rolls; the second
// layer reads the first's Y.
// CHECK-LABEL: func.func @one_step_two_layer_chain
// CHECK: %[[S:.*]] = onnx.Concat(%arg0, %arg1) {axis = 0 : i64}
// CHECK: %[[Y0:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru forward %[[S]], {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK: %[[Y0S:.*]] = onnx.Squeeze(%[[Y0]]
// CHECK: rnn.sequence gru forward %[[Y0S]], {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK-NOT: rnn.sequence
func.func @one_step_two_layer_chain(%x0: tensor<1x1x2xf32>, %x1: tensor<1x1x2xf32>, %h: tensor<2x1x2xf32>) -> tensor<2x1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x2xf32>
  %w1 = onnx.initializer "W1" dense<0.4> : tensor<1x6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %s0 = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %s1 = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %s2 = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.none
  %h00 = onnx.Slice(%h, %s0, %s1, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %ya, %ha = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h00) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oa = onnx.Squeeze(%ya, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %h01 = onnx.Slice(%h, %s1, %s2, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %yb, %hb = rnn.sequence gru forward %oa, %w1, %r, %b, %b init(%h01) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %ob = onnx.Squeeze(%yb, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %st = onnx.Concat(%ha, %hb) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  %h10 = onnx.Slice(%st, %s0, %s1, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %yc, %hc = rnn.sequence gru forward %x1, %w, %r, %b, %b init(%h10) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oc = onnx.Squeeze(%yc, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %h11 = onnx.Slice(%st, %s1, %s2, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %yd, %hd = rnn.sequence gru forward %oc, %w1, %r, %b, %b init(%h11) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %od = onnx.Squeeze(%yd, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%ob, %od) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y : tensor<2x1x2xf32>
}

// -----

// Inputs computed per step from slices at decreasing indices (a loop over
// reversed(range(T))): computed once over the slices in step order, a
// step -1 Slice of the time axis.
// CHECK-LABEL: func.func @computed_step_inputs_reversed
// CHECK: %[[REV:.*]] = onnx.Slice(%arg0, {{.*}}) : (tensor<2x1x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x3xf32>
// CHECK: %[[R:.*]] = onnx.Relu(%[[REV]]) : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
// CHECK: rnn.sequence gru forward %[[R]], {{.*}} -> (tensor<2x1x1x2xf32>
// CHECK-NOT: onnx.Gather
func.func @computed_step_inputs_reversed(%x: tensor<2x1x3xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<6x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<6xf32>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %g0 = onnx.Gather(%x, %i1) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x0 = onnx.Relu(%g0) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %h1 = rnn.gru_cell %x0, %h, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  %g1 = onnx.Gather(%x, %i0) : (tensor<2x1x3xf32>, tensor<i64>) -> tensor<1x3xf32>
  %x1 = onnx.Relu(%g1) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %h2 = rnn.gru_cell %x1, %h1, %w, %r, %b, %b : (tensor<1x3xf32>, tensor<1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// The same with three calls whose last second-layer step has other weights:
// the second layer's chain (two steps) reads the first two rows of the
// first layer's Y (a Slice made for it); its last step stays a one-step
// layer.
// CHECK-LABEL: func.func @one_step_two_layer_chain_cut
// CHECK: %[[Y0:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru forward {{.*}} -> (tensor<3x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK: %[[Y0S:.*]] = onnx.Squeeze(%[[Y0]]
// CHECK: %[[PART:.*]] = onnx.Slice(%[[Y0S]], {{.*}} -> tensor<2x1x2xf32>
// CHECK: rnn.sequence gru forward %[[PART]], {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK: rnn.sequence gru forward {{.*}} -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
func.func @one_step_two_layer_chain_cut(%x0: tensor<1x1x2xf32>, %x1: tensor<1x1x2xf32>, %x2: tensor<1x1x2xf32>, %h: tensor<2x1x2xf32>) -> tensor<1x1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x2xf32>
  %w1 = onnx.initializer "W1" dense<0.4> : tensor<1x6x2xf32>
  %w2 = onnx.initializer "W2" dense<0.7> : tensor<1x6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %s0 = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %s1 = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %s2 = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.none
  %h00 = onnx.Slice(%h, %s0, %s1, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{fused GRU layer: 3 steps, forward, hidden 2}}
  %ya, %ha = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h00) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oa = onnx.Squeeze(%ya, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %h01 = onnx.Slice(%h, %s1, %s2, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %yb, %hb = rnn.sequence gru forward %oa, %w1, %r, %b, %b init(%h01) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %st = onnx.Concat(%ha, %hb) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  %h10 = onnx.Slice(%st, %s0, %s1, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %yc, %hc = rnn.sequence gru forward %x1, %w, %r, %b, %b init(%h10) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oc = onnx.Squeeze(%yc, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %h11 = onnx.Slice(%st, %s1, %s2, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %yd, %hd = rnn.sequence gru forward %oc, %w1, %r, %b, %b init(%h11) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %st2 = onnx.Concat(%hc, %hd) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  %h20 = onnx.Slice(%st2, %s0, %s1, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %ye, %he = rnn.sequence gru forward %x2, %w, %r, %b, %b init(%h20) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oe = onnx.Squeeze(%ye, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %h21 = onnx.Slice(%st2, %s1, %s2, %s0, %none) : (tensor<2x1x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x1x2xf32>
  %yf, %hf = rnn.sequence gru forward %oe, %w2, %r, %b, %b init(%h21) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  return %hf : tensor<1x1x2xf32>
}

// -----

// The next step reads the state through a Clip (a clamped state): no ONNX
// layer computes that, so each step stays a layer of its own, and the
// remark names the operator in between.
// CHECK-LABEL: func.func @clipped_state
// CHECK-COUNT-2: rnn.sequence gru forward
func.func @clipped_state(%x0: tensor<1x2xf32>, %x1: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<6xf32>
  %lo = onnx.initializer "lo" dense<-0.5> : tensor<f32>
  %hi = onnx.initializer "hi" dense<0.5> : tensor<f32>
  // expected-remark @+1 {{fused GRU layer: 1 steps}}
  %h1 = rnn.gru_cell %x0, %h, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<6x2xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  %c1 = onnx.Clip(%h1, %lo, %hi) : (tensor<1x2xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2xf32>
  // expected-remark @+2 {{not rolled into a layer with the step before: its state is computed from that step's by 'Clip' and other ops, not passed on (a masked or modified state; no ONNX layer computes it)}}
  // expected-remark @+1 {{fused GRU layer: 1 steps}}
  %h2 = rnn.gru_cell %x1, %c1, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<6x2xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// The same after ONNX Runtime's optimizer: the two Slices that cut the
// state [2, B, H] apart are one Split; each of its outputs is one part of
// the Concat, so the chains roll as before.
// CHECK-LABEL: func.func @one_step_two_layer_chain_split
// CHECK: %[[S:.*]] = onnx.Concat(%arg0, %arg1) {axis = 0 : i64}
// CHECK: %[[Y0:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru forward %[[S]], {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK: %[[Y0S:.*]] = onnx.Squeeze(%[[Y0]]
// CHECK: rnn.sequence gru forward %[[Y0S]], {{.*}} -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
// CHECK-NOT: rnn.sequence
func.func @one_step_two_layer_chain_split(%x0: tensor<1x1x2xf32>, %x1: tensor<1x1x2xf32>, %h: tensor<2x1x2xf32>) -> tensor<2x1x2xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x6x2xf32>
  %w1 = onnx.initializer "W1" dense<0.4> : tensor<1x6x2xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x6x2xf32>
  %b = onnx.initializer "B" dense<0.3> : tensor<1x6xf32>
  %sizes = onnx.Constant() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %ax = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %h00, %h01 = onnx.Split(%h, %sizes) : (tensor<2x1x2xf32>, tensor<2xi64>) -> (tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %ya, %ha = rnn.sequence gru forward %x0, %w, %r, %b, %b init(%h00) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oa = onnx.Squeeze(%ya, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  // expected-remark @+1 {{fused GRU layer: 2 steps, forward, hidden 2}}
  %yb, %hb = rnn.sequence gru forward %oa, %w1, %r, %b, %b init(%h01) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %ob = onnx.Squeeze(%yb, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %st = onnx.Concat(%ha, %hb) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  %h10, %h11 = onnx.Split(%st, %sizes) : (tensor<2x1x2xf32>, tensor<2xi64>) -> (tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %yc, %hc = rnn.sequence gru forward %x1, %w, %r, %b, %b init(%h10) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %oc = onnx.Squeeze(%yc, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %yd, %hd = rnn.sequence gru forward %oc, %w1, %r, %b, %b init(%h11) {hidden_size = 2 : i64} : (tensor<1x1x2xf32>, tensor<1x6x2xf32>, tensor<1x6x2xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  %od = onnx.Squeeze(%yd, %ax) : (tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
  %y = onnx.Concat(%ob, %od) {axis = 0 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
  return %y : tensor<2x1x2xf32>
}
