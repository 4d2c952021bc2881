// RUN: lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=h=hn" 2>&1 | FileCheck %s --check-prefix=AUTO-LOOP
// RUN: lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=h=hn" 2>/dev/null | FileCheck %s --check-prefix=LOOP
// RUN: not lstm-opt %s --split-input-file --onnx-stream-to-sequence="chunks=4 state=h=hn form=batched" 2>&1 | FileCheck %s --check-prefix=FORM

// The chunks are batched only where that provably computes what N calls
// do; otherwise form=auto writes a Loop with a remark naming the reason, and
// form=batched is an error.

// form=auto where the chunks cannot be batched: a Loop, and a remark saying
// why. Here the state output is the final state scaled, which the next
// chunk's layer starts from: not its own final state.
// AUTO-LOOP: remark: onnx-stream-to-sequence: a Loop over the chunks (they cannot be batched: state output 'hn' is not the recurrent layers' final states moved as they are)
// LOOP: onnx.node "Loop"
// FORM: error: onnx-stream-to-sequence: the chunks cannot be batched: state output 'hn' is not the recurrent layers' final states moved as they are
func.func @scaled_state(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<1x1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %k = onnx.initializer "k" dense<0.5> : tensor<f32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %s = onnx.Mul(%Y_h, %k) : (tensor<1x1x3xf32>, tensor<f32>) -> tensor<1x1x3xf32>
  return %Y, %s : tensor<1x1x1x3xf32>, tensor<1x1x3xf32>
}

// -----

// A chunk's output that reads the state directly (not through the layer):
// each chunk would see the first chunk's state.
// LOOP: onnx.node "Loop"
// AUTO-LOOP: remark: onnx-stream-to-sequence: a Loop over the chunks (they cannot be batched: a chunk's computation reads the state other than as a recurrent layer's initial state)
func.func @state_read_directly(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %o = onnx.Add(%Y_h, %arg1) : (tensor<1x1x3xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  return %o, %Y_h : tensor<1x1x3xf32>, tensor<1x1x3xf32>
}

// -----

// A bidirectional layer: its backward half would run the chunks' steps
// from the last chunk, not each chunk from its own end.
// LOOP: onnx.node "Loop"
// AUTO-LOOP: remark: onnx-stream-to-sequence: a Loop over the chunks (they cannot be batched: {{.*}}(RNN): a bidirectional layer does not run the chunks' steps in order)
func.func @bidirectional(%arg0: tensor<2x1x2xf32> {onnx.name = "x"}, %arg1: tensor<2x1x3xf32> {onnx.name = "h"}) -> (tensor<2x2x1x3xf32> {onnx.name = "out"}, tensor<2x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<2x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<2x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64, direction = "bidirectional"} : (tensor<2x1x2xf32>, tensor<2x3x2xf32>, tensor<2x3x3xf32>, none, none, tensor<2x1x3xf32>) -> (tensor<2x2x1x3xf32>, tensor<2x1x3xf32>)
  return %Y, %Y_h : tensor<2x2x1x3xf32>, tensor<2x1x3xf32>
}

// -----

// Batched values joined along another axis (Concat of two per-chunk
// values): batched.
// AUTO-LOOP: remark: onnx-stream-to-sequence: the 4 chunks batched: 1 ops run once over all chunks, 1 recurrent layer over all their steps
func.func @concat_batched(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<1x1x1x6xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %c = onnx.Concat(%Y, %Y) {axis = 3 : i64} : (tensor<1x1x1x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x1x6xf32>
  return %c, %Y_h : tensor<1x1x1x6xf32>, tensor<1x1x3xf32>
}

// -----

// Flatten merging the batch axis with a dimension before it: the chunks
// would not stay contiguous.
// AUTO-LOOP: remark: onnx-stream-to-sequence: a Loop over the chunks (they cannot be batched: {{.*}}(Flatten): flattens the batch axis with a dimension before it)
func.func @flatten_across(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<2x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %c = onnx.Concat(%Y, %Y) {axis = 0 : i64} : (tensor<1x1x1x3xf32>, tensor<1x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %f = onnx.node "Flatten"(%c) {attrs = {axis = 3 : i64}} : (tensor<2x1x1x3xf32>) -> tensor<2x3xf32>
  return %f, %Y_h : tensor<2x3xf32>, tensor<1x1x3xf32>
}

// -----

// A Gemm whose C has a row per batch row: batched, C would not broadcast.
// AUTO-LOOP: remark: onnx-stream-to-sequence: a Loop over the chunks (they cannot be batched: {{.*}}(Gemm): its C has a row per batch row)
func.func @gemm_c_per_row(%arg0: tensor<1x2x2xf32> {onnx.name = "x"}, %arg1: tensor<1x2x3xf32> {onnx.name = "h"}) -> (tensor<2x2xf32> {onnx.name = "out"}, tensor<1x2x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %b = onnx.initializer "B2" dense<1.0> : tensor<3x2xf32>
  %c = onnx.initializer "C2" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64} : (tensor<1x2x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x2x3xf32>) -> (tensor<1x1x2x3xf32>, tensor<1x2x3xf32>)
  %s = onnx.Squeeze(%Y_h, %ax) : (tensor<1x2x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  %g = onnx.Gemm(%s, %b, %c) : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %g, %Y_h : tensor<2x2xf32>, tensor<1x2x3xf32>
}
