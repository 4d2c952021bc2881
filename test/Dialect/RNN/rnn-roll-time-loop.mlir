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
// of I = 3) is not step t of x: each cell stays a one-step layer.
// CHECK-LABEL: func.func @slice_cuts_features
// CHECK-COUNT-2: rnn.sequence lstm forward {{.*}} -> (tensor<1x1x1x2xf32>
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
  // expected-remark @+2 {{not rolled into a layer: the step inputs are not consecutive slices of one tensor}}
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h1, %c1 = rnn.lstm_cell %x0, %h, %c, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %p1 = onnx.Slice(%x, %st1, %en1, %axes, %none) : (tensor<1x2x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, none) -> tensor<1x1x2xf32>
  %x1 = onnx.Squeeze(%p1, %sq) : (tensor<1x1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  // expected-remark @+1 {{fused LSTM layer: 1 steps, forward}}
  %h2, %c2 = rnn.lstm_cell %x1, %h1, %c1, %w, %r, %b, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// -----

// A stacked Unsqueeze that is read elsewhere too (torch.export's RNN returns
// the last one as h_n): the stack still becomes Y; the other reader keeps
// the Unsqueeze, of h_n.

// CHECK-LABEL: func.func @stack_read_twice
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %[[HN:[a-zA-Z0-9_]+]] = rnn.sequence rnn forward %arg0
// CHECK: %[[YS:.*]] = onnx.Squeeze(%[[Y]]
// CHECK: %[[H:.*]] = onnx.Squeeze(%[[HN]]
// CHECK: %[[U:.*]] = onnx.Unsqueeze(%[[H]]
// CHECK-NOT: onnx.Concat
// CHECK: return %[[YS]], %[[U]]
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
