// RUN: lstm-opt %s -split-input-file -rnn-unroll-recurrent-loops -verify-diagnostics | FileCheck %s
// RUN: lstm-opt %s -split-input-file -rnn-unroll-recurrent-loops -rnn-recognize-cells -rnn-roll-time-loop 2>/dev/null | FileCheck %s --check-prefix=ROLL

// A Loop with a constant trip count (3) whose body is one tanh-RNN step:
// h' = tanh(x[i] W + h R), the step read by Gather on the iteration number,
// h' also collected as the scan output. Unrolled into three copies chained
// through h; the scan output is the copies' h stacked by Unsqueeze + Concat;
// recognition and rolling then make one layer of it.

// CHECK-LABEL: func.func @loop_trip_count
// CHECK-NOT: onnx.node "Loop"
// CHECK: %[[X0:.*]] = onnx.Gather(%arg0, %[[I0:.*]])
// CHECK: %[[H1:.*]] = onnx.Tanh
// CHECK: onnx.Gather(%arg0, %[[I1:.*]])
// CHECK: onnx.MatMul(%[[H1]],
// CHECK: %[[H2:.*]] = onnx.Tanh
// CHECK: onnx.MatMul(%[[H2]],
// CHECK: %[[H3:.*]] = onnx.Tanh
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[H1]]
// CHECK: %[[U2:.*]] = onnx.Unsqueeze(%[[H2]]
// CHECK: %[[U3:.*]] = onnx.Unsqueeze(%[[H3]]
// CHECK: %[[Y:.*]] = onnx.Concat(%[[U1]], %[[U2]], %[[U3]]) {axis = 0 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<3x2x4xf32>
// CHECK: return %[[Y]], %[[H3]] : tensor<3x2x4xf32>, tensor<2x4xf32>
// CHECK-NEXT: }

// ROLL-LABEL: func.func @loop_trip_count
// ROLL: rnn.sequence rnn forward %arg0
// ROLL-NOT: onnx.Tanh
func.func @loop_trip_count(%x: tensor<3x2x3xf32>, %h0: tensor<2x4xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %m = onnx.initializer "M" dense<3> : tensor<i64>
  %none = onnx.none
  // expected-remark @+1 {{recurrent Loop unrolled: 3 iterations of its body}}
  %hT, %ys = onnx.node "Loop"(%m, %none, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<3x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %cond, %hn, %hn : tensor<i1>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hT : tensor<?x2x4xf32>, tensor<2x4xf32>
}

// -----

// No trip count: the condition decides. As tf2onnx writes a TF while loop, a
// counter is carried (i32), and the condition compares it, cast to float,
// with a float bound; it folds at every iteration, so the loop runs 2 times.
// The carried weights (handed through unchanged) are the initial values.

// CHECK-LABEL: func.func @loop_condition
// CHECK-NOT: onnx.node "Loop"
// The condition's arithmetic folded away; the counter became constants.
// CHECK-NOT: onnx.node "Less"
// CHECK-NOT: onnx.Cast
// CHECK: %[[X0:.*]] = onnx.Gather(%arg0, %{{.*}}) : (tensor<2x2x3xf32>, tensor<i32>)
// CHECK: onnx.MatMul(%[[X0]], %[[W:[0-9]+]])
// CHECK: %[[H1:.*]] = onnx.Tanh
// CHECK: onnx.MatMul(%{{.*}}, %[[W]])
// CHECK: onnx.MatMul(%[[H1]],
// CHECK: %[[H2:.*]] = onnx.Tanh
// CHECK-NOT: onnx.Tanh
// CHECK: %[[OUT:.*]] = onnx.Identity(%[[H2]])
// CHECK: return %[[OUT]]
func.func @loop_condition(%x: tensor<2x2x3xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i32>
  %t = onnx.initializer "true" dense<true> : tensor<i1>
  %none = onnx.none
  // expected-remark @+1 {{recurrent Loop unrolled: 2 iterations of its body}}
  %n, %hT, %wT, %rT = onnx.node "Loop"(%none, %t, %zero, %h0, %w, %r) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i32>, %h: tensor<2x4xf32>, %wi: tensor<3x4xf32>, %ri: tensor<4x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i32>
    %bound = onnx.initializer "bound" dense<2.0> : tensor<f32>
    %k1 = onnx.Add(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %kf = onnx.Cast(%k1) {to = 1 : i64} : (tensor<i32>) -> tensor<f32>
    %c = onnx.node "Less"(%kf, %bound) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %xt = onnx.Gather(%x, %k) : (tensor<2x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %wi) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %ri) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %hid = onnx.Identity(%hn) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %c, %k1, %hid, %wi, %ri : tensor<i1>, tensor<i32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32> {input_names = ["i", "cond", "k", "h", "w", "r"], name = "body", output_names = ["c", "k1", "h_out", "w_out", "r_out"]}
  } {graph_attrs = ["body"]} : (none, tensor<i1>, tensor<i32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>) -> (tensor<*xi32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %out = onnx.Identity(%hT) : (tensor<*xf32>) -> tensor<2x4xf32>
  return %out : tensor<2x4xf32>
}

// -----

// Scan over axis 1 in reverse, outputs stacked along axis 1 in reverse:
// iteration t reads x[:, 2 - t] and its h lands at y[:, 2 - t].

// CHECK-LABEL: func.func @scan_reverse
// CHECK-NOT: onnx.node "Scan"
// CHECK: %[[X2:.*]] = onnx.Gather(%arg0, %{{.*}}) {axis = 1 : i64}
// CHECK: %[[H1:.*]] = onnx.Tanh
// CHECK: onnx.Gather(%arg0, %{{.*}}) {axis = 1 : i64}
// CHECK: %[[H2:.*]] = onnx.Tanh
// CHECK: onnx.Gather(%arg0, %{{.*}}) {axis = 1 : i64}
// CHECK: %[[H3:.*]] = onnx.Tanh
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[H3]]
// CHECK: %[[U2:.*]] = onnx.Unsqueeze(%[[H2]]
// CHECK: %[[U3:.*]] = onnx.Unsqueeze(%[[H1]]
// CHECK: onnx.Concat(%[[U1]], %[[U2]], %[[U3]]) {axis = 1 : i64} : (tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>

// ROLL-LABEL: func.func @scan_reverse
// ROLL: rnn.sequence rnn reverse
module attributes {onnx.opset_import = [#onnx.opset<"", 21>]} {
func.func @scan_reverse(%x: tensor<2x3x3xf32>, %h0: tensor<2x4xf32>) -> tensor<2x3x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  // expected-remark @+1 {{recurrent Scan unrolled: 3 iterations of its body}}
  %hT, %ys = onnx.node "Scan"(%h0, %x) graphs {
  ^bb0(%h: tensor<2x4xf32>, %xt: tensor<2x3xf32>):
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %hn, %hn : tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["h", "x_t"], name = "body", output_names = ["h_out", "y"]}
  } {attrs = {num_scan_inputs = 1 : i64, scan_input_axes = array<i64: 1>, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: 1>, scan_output_directions = array<i64: 1>}, graph_attrs = ["body"]} : (tensor<2x4xf32>, tensor<2x3x3xf32>) -> (tensor<2x4xf32>, tensor<2x3x4xf32>)
  return %ys : tensor<2x3x4xf32>
}
}

// -----

// Not a recurrence (nothing carried reaches a matmul): left alone, silently.

// CHECK-LABEL: func.func @not_recurrent
// CHECK: onnx.node "Loop"
func.func @not_recurrent(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = onnx.initializer "M" dense<3> : tensor<i64>
  %none = onnx.none
  %acc = onnx.node "Loop"(%m, %none, %x) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2x3xf32>):
    %t = onnx.Tanh(%v) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.yield %cond, %t : tensor<i1>, tensor<2x3xf32> {input_names = ["i", "cond", "v"], name = "body", output_names = ["cond_out", "v_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %acc : tensor<2x3xf32>
}

// -----

// A scripted loop collecting its outputs in a list (TorchScript's
// `ys.append(h)`): a sequence the Loop carries, starting as SequenceEmpty,
// the body's SequenceInsert without a position appending h, and
// ConcatFromSequence of the final list after the loop (new_axis = 1). The
// list becomes the iterations' values stacked, as a scan output would be.

// CHECK-LABEL: func.func @loop_list_append
// CHECK-NOT: onnx.node "Loop"
// CHECK-NOT: SequenceInsert
// CHECK-NOT: ConcatFromSequence
// CHECK: %[[H1:.*]] = onnx.Tanh
// CHECK: %[[H2:.*]] = onnx.Tanh
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[H1]]
// CHECK: %[[U2:.*]] = onnx.Unsqueeze(%[[H2]]
// CHECK: %[[Y:.*]] = onnx.Concat(%[[U1]], %[[U2]]) {axis = 0 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<2x2x4xf32>
// CHECK: return %[[Y]], %[[H2]] : tensor<2x2x4xf32>, tensor<2x4xf32>

// ROLL-LABEL: func.func @loop_list_append
// ROLL: rnn.sequence rnn forward %arg0
// ROLL-NOT: onnx.Tanh
func.func @loop_list_append(%x: tensor<2x2x3xf32>, %h0: tensor<2x4xf32>) -> (tensor<?x?x?xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %m = onnx.initializer "M" dense<2> : tensor<i64>
  %t = onnx.initializer "T" dense<true> : tensor<i1>
  %empty = onnx.node "SequenceEmpty"() {attrs = {dtype = 1 : i64}} : () -> !onnx.seq<tensor<*xf32>>
  // expected-remark @+1 {{recurrent Loop unrolled: 2 iterations of its body}}
  %hT, %list = onnx.node "Loop"(%m, %t, %h0, %empty) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>, %l: !onnx.seq<tensor<?x?xf32>>):
    %xt = onnx.Gather(%x, %i) : (tensor<2x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %l2 = onnx.node "SequenceInsert"(%l, %hn) : (!onnx.seq<tensor<?x?xf32>>, tensor<2x4xf32>) -> !onnx.seq<tensor<?x?xf32>>
    onnx.yield %cond, %hn, %l2 : tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<?x?xf32>> {input_names = ["i", "cond", "h", "l"], name = "body", output_names = ["cond_out", "h_out", "l_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>) -> (tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>)
  %y = onnx.node "ConcatFromSequence"(%list) {attrs = {axis = 0 : i64, new_axis = 1 : i64}} : (!onnx.seq<tensor<*xf32>>) -> tensor<?x?x?xf32>
  return %y, %hT : tensor<?x?x?xf32>, tensor<2x4xf32>
}
