// RUN: lstm-opt %s -split-input-file -rnn-pair-bidirectional -verify-diagnostics | FileCheck %s

// A forward and a reverse GRU over the same input become one bidirectional
// layer; the old results are its slices along the direction axis.

// CHECK-LABEL: func.func @pair
// CHECK-DAG: onnx.initializer "bidir_W" dense<{{\[}}{{\[}}[1.000000e+00], [1.000000e+00], [1.000000e+00]], {{\[}}[2.000000e+00], [2.000000e+00], [2.000000e+00]]]> : tensor<2x3x1xf32>
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %[[HN:[a-zA-Z0-9_]+]] = rnn.sequence gru bidirectional %arg0
// CHECK: %[[YF:.*]] = onnx.Slice(%[[Y]],
// CHECK: %[[YR:.*]] = onnx.Slice(%[[Y]],
// CHECK: %[[HR:.*]] = onnx.Slice(%[[HN]],
// CHECK: return %[[YF]], %[[YR]], %[[HR]]
func.func @pair(%x: tensor<4x2x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<4x1x2x1xf32>, tensor<1x2x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %yr, %hr = rnn.sequence gru reverse %x, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  return %yf, %yr, %hr : tensor<4x1x2x1xf32>, tensor<4x1x2x1xf32>, tensor<1x2x1xf32>
}

// -----

// The reverse layer reads the forward layer's output: not independent.
// CHECK-LABEL: func.func @stacked
// CHECK: rnn.sequence rnn forward
// CHECK: rnn.sequence rnn reverse
func.func @stacked(%x: tensor<4x2x1xf32>) -> tensor<1x2x1xf32> {
  %w = onnx.initializer "W" dense<1.0> : tensor<1x1x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x1xf32>
  %y, %h = rnn.sequence rnn forward %x, %w, %w, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  %y2, %h2 = rnn.sequence rnn reverse %x, %w, %w, %b, %b init(%h) {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x2x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  return %h2 : tensor<1x2x1xf32>
}

// -----

// Each direction reads its own Transpose of a batch-major x (as the roller
// builds them, one per layer): equal ops over the same value are the same
// input, and the pair reads the first. Two Transposes with different
// permutations are not.
// CHECK-LABEL: func.func @equal_glue
// CHECK: %[[XT:.*]] = onnx.Transpose(%arg0)
// CHECK: rnn.sequence gru bidirectional %[[XT]]
// CHECK-LABEL: func.func @different_glue
// CHECK: rnn.sequence gru forward
// CHECK: rnn.sequence gru reverse
func.func @equal_glue(%x: tensor<2x4x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<4x1x2x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %xf = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x4x1xf32>) -> tensor<4x2x1xf32>
  %yf, %hf = rnn.sequence gru forward %xf, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %xr = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x4x1xf32>) -> tensor<4x2x1xf32>
  %yr, %hr = rnn.sequence gru reverse %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  return %yf, %yr : tensor<4x1x2x1xf32>, tensor<4x1x2x1xf32>
}
func.func @different_glue(%x: tensor<4x4x1xf32>) -> (tensor<4x1x4x1xf32>, tensor<4x1x4x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %xf = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<4x4x1xf32>) -> tensor<4x4x1xf32>
  %yf, %hf = rnn.sequence gru forward %xf, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<4x4x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x4x1xf32>, tensor<1x4x1xf32>)
  %xr = onnx.Transpose(%x) {perm = array<i64: 0, 1, 2>} : (tensor<4x4x1xf32>) -> tensor<4x4x1xf32>
  %yr, %hr = rnn.sequence gru reverse %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<4x4x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x4x1xf32>, tensor<1x4x1xf32>)
  return %yf, %yr : tensor<4x1x4x1xf32>, tensor<4x1x4x1xf32>
}

// -----

// Keras' Bidirectional backward layer through tf2onnx: a forward layer over
// ReverseSequence(x) over the whole time axis (lengths computed from the
// shape: Expand(T, [B])), its Y squeezed, transposed to batch-major and back
// and reversed again. It is a reverse layer over x, its Y read directly
// (Shape nodes on the way keep reading the same shapes); then it pairs.
// CHECK-LABEL: func.func @reversed_input_layer
// CHECK-NOT: ReverseSequence
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru bidirectional %arg0
// CHECK-NOT: ReverseSequence
// CHECK: return
func.func @reversed_input_layer(%x: tensor<4x2x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<4x2x1xf32>, tensor<3xi64>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i0 = onnx.initializer "i0" dense<[0]> : tensor<1xi64>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %s = onnx.Shape(%x) : (tensor<4x2x1xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%s, %i0) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %bb = onnx.Gather(%s, %i1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %lens = onnx.Expand(%t, %bb) : (tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<?xi64>) -> tensor<4x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{a forward GRU layer over the time-reversed input, its output reversed back, is a reverse layer over the input}}
  %sq = onnx.Squeeze(%yr, %i1) : (tensor<4x1x2x1xf32>, tensor<1xi64>) -> tensor<4x2x1xf32>
  %bm = onnx.Transpose(%sq) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x1xf32>) -> tensor<2x4x1xf32>
  %shp = onnx.Shape(%bm) : (tensor<2x4x1xf32>) -> tensor<3xi64>
  %tm = onnx.Transpose(%bm) {perm = array<i64: 1, 0, 2>} : (tensor<2x4x1xf32>) -> tensor<4x2x1xf32>
  %back = onnx.node "ReverseSequence"(%tm, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<?xi64>) -> tensor<4x2x1xf32>
  return %yf, %back, %shp : tensor<4x1x2x1xf32>, tensor<4x2x1xf32>, tensor<3xi64>
}

// -----

// The same as tf2onnx writes it below opset 13: the Squeeze's axes are an
// attribute.
// CHECK-LABEL: func.func @reversed_input_layer_opset11
// CHECK-NOT: ReverseSequence
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru bidirectional %arg0
// CHECK-NOT: ReverseSequence
// CHECK: return
func.func @reversed_input_layer_opset11(%x: tensor<4x2x1xf32>) -> (tensor<4x1x2x1xf32>, tensor<4x2x1xf32>, tensor<3xi64>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i0 = onnx.initializer "i0" dense<[0]> : tensor<1xi64>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %s = onnx.Shape(%x) : (tensor<4x2x1xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%s, %i0) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %bb = onnx.Gather(%s, %i1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %lens = onnx.Expand(%t, %bb) : (tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<?xi64>) -> tensor<4x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{a forward GRU layer over the time-reversed input, its output reversed back, is a reverse layer over the input}}
  %none = onnx.none
  %sq = onnx.Squeeze(%yr, %none) {axes_attr = array<i64: 1>} : (tensor<4x1x2x1xf32>, none) -> tensor<4x2x1xf32>
  %bm = onnx.Transpose(%sq) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x1xf32>) -> tensor<2x4x1xf32>
  %shp = onnx.Shape(%bm) : (tensor<2x4x1xf32>) -> tensor<3xi64>
  %tm = onnx.Transpose(%bm) {perm = array<i64: 1, 0, 2>} : (tensor<2x4x1xf32>) -> tensor<4x2x1xf32>
  %back = onnx.node "ReverseSequence"(%tm, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<?xi64>) -> tensor<4x2x1xf32>
  return %yf, %back, %shp : tensor<4x1x2x1xf32>, tensor<4x2x1xf32>, tensor<3xi64>
}

// -----

// The same with a time axis of unknown size: the lengths Expand(T, [B]) are
// read from x's shape when the model runs, so no constant says they are
// whole; the shape arithmetic does (T is x's axis 0). The output side reads
// its lengths from its own batch-major transpose's axis 1, the same
// dimension.
// CHECK-LABEL: func.func @reversed_input_layer_dynamic
// CHECK-NOT: ReverseSequence
// CHECK: %[[Y:[a-zA-Z0-9_]+]], %{{.*}} = rnn.sequence gru bidirectional %arg0
// CHECK-NOT: ReverseSequence
// CHECK: return
func.func @reversed_input_layer_dynamic(%x: tensor<?x2x1xf32>) -> (tensor<?x1x2x1xf32>, tensor<?x2x1xf32>, tensor<3xi64>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i0 = onnx.initializer "i0" dense<[0]> : tensor<1xi64>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %s = onnx.Shape(%x) : (tensor<?x2x1xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%s, %i0) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %bb = onnx.Gather(%s, %i1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %lens = onnx.Expand(%t, %bb) : (tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<?x2x1xf32>, tensor<?xi64>) -> tensor<?x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{a forward GRU layer over the time-reversed input, its output reversed back, is a reverse layer over the input}}
  %sq = onnx.Squeeze(%yr, %i1) : (tensor<?x1x2x1xf32>, tensor<1xi64>) -> tensor<?x2x1xf32>
  %bm = onnx.Transpose(%sq) {perm = array<i64: 1, 0, 2>} : (tensor<?x2x1xf32>) -> tensor<2x?x1xf32>
  %shp = onnx.Shape(%bm) : (tensor<2x?x1xf32>) -> tensor<3xi64>
  %tm = onnx.Transpose(%bm) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x1xf32>) -> tensor<?x2x1xf32>
  %t2 = onnx.Gather(%shp, %i1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %lens2 = onnx.Expand(%t2, %bb) : (tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %back = onnx.node "ReverseSequence"(%tm, %lens2) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<?x2x1xf32>, tensor<?xi64>) -> tensor<?x2x1xf32>
  return %yf, %back, %shp : tensor<?x1x2x1xf32>, tensor<?x2x1xf32>, tensor<3xi64>
}

// -----

// With a time axis of unknown size, lengths read from the batch axis are not
// the time axis's: left as it is.
// CHECK-LABEL: func.func @reversed_by_batch_size
// CHECK: rnn.sequence gru forward %arg0
// CHECK: onnx.node "ReverseSequence"
// CHECK: rnn.sequence gru forward
func.func @reversed_by_batch_size(%x: tensor<?x2x1xf32>) -> (tensor<?x1x2x1xf32>, tensor<?x1x2x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  %s = onnx.Shape(%x) : (tensor<?x2x1xf32>) -> tensor<3xi64>
  %bb = onnx.Gather(%s, %i1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %lens = onnx.Expand(%bb, %bb) : (tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<?x2x1xf32>, tensor<?xi64>) -> tensor<?x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  return %yf, %yr : tensor<?x1x2x1xf32>, tensor<?x1x2x1xf32>
}

// -----

// Reversed over fewer steps than the time axis (lengths [3, 4] of 4): not a
// reverse layer, left as it is.
// CHECK-LABEL: func.func @partly_reversed_input
// CHECK: ReverseSequence
// CHECK: rnn.sequence gru forward
func.func @partly_reversed_input(%x: tensor<4x2x1xf32>) -> tensor<4x1x2x1xf32> {
  %w = onnx.initializer "W" dense<1.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %lens = onnx.initializer "lens" dense<[3, 4]> : tensor<2xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<2xi64>) -> tensor<4x2x1xf32>
  %y, %h = rnn.sequence gru forward %xr, %w, %w, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  return %y : tensor<4x1x2x1xf32>
}

// -----

// Its output read without being reversed back: left as it is.
// CHECK-LABEL: func.func @reversed_input_output_kept
// CHECK: ReverseSequence
// CHECK: rnn.sequence gru forward
func.func @reversed_input_output_kept(%x: tensor<4x2x1xf32>) -> tensor<4x2x1xf32> {
  %w = onnx.initializer "W" dense<1.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %lens = onnx.initializer "lens" dense<[4, 4]> : tensor<2xi64>
  %xr = onnx.node "ReverseSequence"(%x, %lens) {attrs = {batch_axis = 1 : i64, time_axis = 0 : i64}} : (tensor<4x2x1xf32>, tensor<2xi64>) -> tensor<4x2x1xf32>
  %y, %h = rnn.sequence gru forward %xr, %w, %w, %b, %b {hidden_size = 1 : i64} : (tensor<4x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x1x2x1xf32>, tensor<1x2x1xf32>)
  %sq = onnx.Squeeze(%y, %i1) : (tensor<4x1x2x1xf32>, tensor<1xi64>) -> tensor<4x2x1xf32>
  return %sq : tensor<4x2x1xf32>
}

// -----

// PyTorch's x.flip(0) (a scripted backward direction): a Slice of step -1
// from the last step past the first reverses the whole time axis, whatever
// its size; the output flipped back the same way.
// CHECK-LABEL: func.func @flipped_by_slice
// CHECK-NOT: onnx.Slice(%arg0
// CHECK: rnn.sequence gru bidirectional %arg0
func.func @flipped_by_slice(%x: tensor<?x2x1xf32>) -> (tensor<?x1x2x1xf32>, tensor<?x2x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %st = onnx.initializer "start" dense<[-1]> : tensor<1xi64>
  %en = onnx.initializer "end" dense<[-9223372036854775807]> : tensor<1xi64>
  %ax = onnx.initializer "axis" dense<[0]> : tensor<1xi64>
  %step = onnx.initializer "step" dense<[-1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{paired a forward and a reverse GRU layer into one bidirectional layer}}
  %xr = onnx.Slice(%x, %st, %en, %ax, %step) : (tensor<?x2x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  // expected-remark @-1 {{a forward GRU layer over the time-reversed input, its output reversed back, is a reverse layer over the input}}
  %sq = onnx.Squeeze(%yr, %i1) : (tensor<?x1x2x1xf32>, tensor<1xi64>) -> tensor<?x2x1xf32>
  %back = onnx.Slice(%sq, %st, %en, %ax, %step) : (tensor<?x2x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x1xf32>
  return %yf, %back : tensor<?x1x2x1xf32>, tensor<?x2x1xf32>
}

// -----

// A Slice of step -1 from the second-to-last step drops a step: not a
// reversal of the whole axis, left as it is.
// CHECK-LABEL: func.func @slice_drops_a_step
// CHECK: rnn.sequence gru forward %arg0
// CHECK: %[[XR:.*]] = onnx.Slice(%arg0
// CHECK: rnn.sequence gru forward %[[XR]]
func.func @slice_drops_a_step(%x: tensor<?x2x1xf32>) -> (tensor<?x1x2x1xf32>, tensor<?x2x1xf32>) {
  %wf = onnx.initializer "Wf" dense<1.0> : tensor<1x3x1xf32>
  %wr = onnx.initializer "Wr" dense<2.0> : tensor<1x3x1xf32>
  %b = onnx.initializer "B" dense<0.5> : tensor<1x3xf32>
  %i1 = onnx.initializer "i1" dense<[1]> : tensor<1xi64>
  %st = onnx.initializer "start" dense<[-2]> : tensor<1xi64>
  %en = onnx.initializer "end" dense<[-9223372036854775807]> : tensor<1xi64>
  %ax = onnx.initializer "axis" dense<[0]> : tensor<1xi64>
  %step = onnx.initializer "step" dense<[-1]> : tensor<1xi64>
  %yf, %hf = rnn.sequence gru forward %x, %wf, %wf, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  %xr = onnx.Slice(%x, %st, %en, %ax, %step) : (tensor<?x2x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x1xf32>
  %yr, %hr = rnn.sequence gru forward %xr, %wr, %wr, %b, %b {hidden_size = 1 : i64} : (tensor<?x2x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<?x1x2x1xf32>, tensor<1x2x1xf32>)
  %sq = onnx.Squeeze(%yr, %i1) : (tensor<?x1x2x1xf32>, tensor<1xi64>) -> tensor<?x2x1xf32>
  %back = onnx.Slice(%sq, %st, %en, %ax, %step) : (tensor<?x2x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x1xf32>
  return %yf, %back : tensor<?x1x2x1xf32>, tensor<?x2x1xf32>
}
