// RUN: lstm-opt %s -split-input-file -rnn-loop-to-sequence -verify-diagnostics | FileCheck %s

// tf2onnx's while loop over a dynamic time axis: a counter from 0, the trip
// count and the condition read T from x's shape (through Cast), the step
// reads Gather(x, counter); h is carried and collected, a weight is handed
// through. One layer over x: its final state is the carried h, its Y the
// collected outputs.

// CHECK-LABEL: func.func @tf2onnx_while
// CHECK-NOT: onnx.node "Loop"
// CHECK-NOT: onnx.node "Less"
// CHECK: %[[KW:.*]] = onnx.initializer "kernel"
// CHECK: %[[INIT:.*]] = onnx.initializer "h0"
// CHECK: %[[H0:.*]] = onnx.Unsqueeze(%[[INIT]], %{{.*}}) {axes_attr = array<i64: 0>} : (tensor<2x4xf32>, none) -> tensor<1x2x4xf32>
// CHECK: %[[Y:.*]], %[[HN:.*]] = rnn.sequence rnn forward %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} init(%[[H0]]) {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x2x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
// CHECK-DAG: %[[HF:.*]] = onnx.Squeeze(%[[HN]], %{{.*}}) {axes_attr = array<i64: 0>} : (tensor<1x2x4xf32>, none) -> tensor<2x4xf32>
// CHECK-DAG: %[[YS:.*]] = onnx.Squeeze(%[[Y]], %{{.*}}) {axes_attr = array<i64: 1>} : (tensor<?x1x2x4xf32>, none) -> tensor<?x2x4xf32>
// CHECK: return %[[YS]], %[[HF]], %[[KW]] : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>
func.func @tf2onnx_while(%x: tensor<?x2x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x4xf32>
  %kw = onnx.initializer "kernel" dense<0.3> : tensor<3x4xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i32>
  %zerof = onnx.initializer "zerof" dense<0.0> : tensor<f32>
  %a0 = onnx.initializer "a0" dense<0> : tensor<1xi64>
  %a1 = onnx.initializer "a1" dense<1> : tensor<1xi64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %none = onnx.none
  %shape = onnx.Shape(%x) : (tensor<?x2x3xf32>) -> tensor<3xi64>
  %shape32 = onnx.Cast(%shape) {to = 6 : i64} : (tensor<3xi64>) -> tensor<3xi32>
  %s = onnx.Slice(%shape32, %a0, %a1, %a0, %none) : (tensor<3xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1xi32>
  %t = onnx.Squeeze(%s, %a0) : (tensor<1xi32>, tensor<1xi64>) -> tensor<i32>
  %tf = onnx.Cast(%t) {to = 1 : i64} : (tensor<i32>) -> tensor<f32>
  %tm = onnx.Cast(%t) {to = 7 : i64} : (tensor<i32>) -> tensor<i64>
  %c0 = onnx.node "Less"(%zerof, %tf) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cin = onnx.node "And"(%c0, %c0) : (tensor<i1>, tensor<i1>) -> tensor<i1>
  %kf, %hf, %kwf, %ys = onnx.node "Loop"(%tm, %cin, %zero, %h0, %kw) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i32>, %h: tensor<2x4xf32>, %kwi: tensor<3x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i32>
    %k1 = onnx.Add(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %xt = onnx.Gather(%x, %k) : (tensor<?x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%xt, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    // expected-remark @+1 {{recurrent Loop '<unnamed>' over all the steps of its sequence: one RNN layer}}
    %y, %hn = rnn.sequence rnn forward %ux, %w, %r, %b, %b init(%uh) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%hn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    %hid = onnx.Identity(%hs) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %k1f = onnx.Cast(%k1) {to = 1 : i64} : (tensor<i32>) -> tensor<f32>
    %if = onnx.Cast(%i) {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
    %tf2 = onnx.Cast(%t) {to = 1 : i64} : (tensor<i32>) -> tensor<f32>
    %l1 = onnx.node "Less"(%k1f, %tf2) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %l2 = onnx.node "Less"(%if, %tf2) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = onnx.node "And"(%l2, %l1) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    onnx.yield %c, %k1, %hid, %kwi, %hs : tensor<i1>, tensor<i32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "kw"], name = "body", output_names = ["c", "k1", "h1", "kw1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<i32>, tensor<2x4xf32>, tensor<3x4xf32>) -> (tensor<i32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %kwf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>
}

// -----

// A scripted loop over a batch-major x's time axis: the trip count is
// x.shape[1] (x is read through its transpose), no condition, the step
// reads the iteration number; an LSTM's h and c carried, h collected as
// Squeeze(Y). The unread counter goes too.

// CHECK-LABEL: func.func @trip_count_lstm
// CHECK-NOT: onnx.node "Loop"
// CHECK: %[[XT:.*]] = onnx.Transpose(%arg0)
// CHECK: %[[Y:.*]], %[[HN:.*]], %[[CN:.*]] = rnn.sequence lstm forward %[[XT]], {{.*}} -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
// CHECK-DAG: %[[HF:.*]] = onnx.Squeeze(%[[HN]]
// CHECK-DAG: %[[CF:.*]] = onnx.Squeeze(%[[CN]]
// CHECK-DAG: %[[YS:.*]] = onnx.Squeeze(%[[Y]]
// CHECK: return %[[YS]], %[[HF]], %[[CF]]
func.func @trip_count_lstm(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%t, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %step = onnx.Gather(%xt, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    // expected-remark @+1 {{recurrent Loop '<unnamed>' over all the steps of its sequence: one LSTM layer}}
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %cond, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// No trip count: the condition i + 1 < T stops the loop after the last
// step (Greater written the other way round).

// CHECK-LABEL: func.func @condition_only
// CHECK-NOT: onnx.node "Loop"
// CHECK: rnn.sequence lstm forward
func.func @condition_only(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%none, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %g = onnx.node "Greater"(%t, %i1b) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %step = onnx.Gather(%xt, %k) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    // expected-remark @+1 {{recurrent Loop '<unnamed>' over all the steps of its sequence: one LSTM layer}}
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %g, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (none, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// No trip count, and i < T is true at every iteration: the loop does not
// stop at the sequence's end (it would read past it).

// CHECK-LABEL: func.func @never_stops
// CHECK: onnx.node "Loop"
func.func @never_stops(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: nothing stops it at the sequence's end}}
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%none, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %l = onnx.node "Less"(%i, %t) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %step = onnx.Gather(%xt, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %l, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (none, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// i + 2 < T stops one step before the end.

// CHECK-LABEL: func.func @stops_early
// CHECK: onnx.node "Loop"
func.func @stops_early(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: its condition may stop it before the sequence's end}}
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%t, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i2 = onnx.Add(%i1b, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %l = onnx.node "Less"(%i2, %t) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %step = onnx.Gather(%xt, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %l, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// The trip count is the batch size, not the number of steps.

// CHECK-LABEL: func.func @wrong_trip_count
// CHECK: onnx.node "Loop"
func.func @wrong_trip_count(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: its trip count is not the sequence's length}}
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%tb, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %step = onnx.Gather(%xt, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %cond, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Iteration k reads step k + 1.

// CHECK-LABEL: func.func @shifted_read
// CHECK: onnx.node "Loop"
func.func @shifted_read(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: its layer does not read step k of a sequence at iteration k}}
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%t, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %step = onnx.Gather(%xt, %i1b) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %cond, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// The counter's final value is a graph output: left alone.

// CHECK-LABEL: func.func @counter_read
// CHECK: onnx.node "Loop"
func.func @counter_read(%x: tensor<2x?x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<i64>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x16xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %zero = onnx.initializer "zero" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %ax01 = onnx.initializer "ax01" dense<[0, 1]> : tensor<2xi64>
  %i1 = onnx.initializer "i1" dense<1> : tensor<i64>
  %none = onnx.none
  %xt = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x3xf32>) -> tensor<?x2x3xf32>
  %shape = onnx.Shape(%x) : (tensor<2x?x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i1) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %tb = onnx.Gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: the final value of its step counter is read}}
  %kf, %hf, %cf, %ys = onnx.node "Loop"(%t, %none, %zero, %h0, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>):
    %one = onnx.initializer "one" dense<1> : tensor<i64>
    %k1 = onnx.Add(%one, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %i1b = onnx.Add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %step = onnx.Gather(%xt, %k) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %uc = onnx.Unsqueeze(%c, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn, %cn = rnn.sequence lstm forward %ux, %w, %r, %b, %b init(%uh, %uc) {hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%y, %ax01) : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %cs = onnx.Squeeze(%cn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    onnx.yield %cond, %k1, %hs, %cs, %hs : tensor<i1>, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {input_names = ["i", "cond", "k", "h", "c"], name = "body", output_names = ["c_out", "k1", "h1", "c1", "y"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<i64>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x2x4xf32>)
  return %ys, %hf, %cf, %kf : tensor<?x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<i64>
}

// -----

// TorchScript's `ys.append(h)` in a loop over x.size(0): the outputs are a
// list the loop carries (empty at first, SequenceInsert of the new h per
// iteration) stacked after it by ConcatFromSequence(axis 0, new_axis 1):
// the layer's Y. The condition is a true constant handed through.
// CHECK-LABEL: func.func @scripted_list
// CHECK-NOT: onnx.node "Loop"
// CHECK-NOT: Sequence
// CHECK: %[[Y:.*]], %[[HN:.*]] = rnn.sequence gru forward %arg0
// CHECK-DAG: %[[HF:.*]] = onnx.Squeeze(%[[HN]]
// CHECK-DAG: %[[YS:.*]] = onnx.Squeeze(%[[Y]], %{{.*}}) {axes_attr = array<i64: 1>} : (tensor<?x1x2x4xf32>, none) -> tensor<?x2x4xf32>
// CHECK: return %[[YS]], %[[HF]] : tensor<?x2x4xf32>, tensor<2x4xf32>
func.func @scripted_list(%x: tensor<?x2x3xf32>) -> (tensor<?x2x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x12x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x12x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x12xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %true = onnx.initializer "true" dense<true> : tensor<i1>
  %i0 = onnx.initializer "i0" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %shape = onnx.Shape(%x) : (tensor<?x2x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i0) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %empty = onnx.node "SequenceEmpty"() {attrs = {dtype = 1 : i64}} : () -> !onnx.seq<tensor<*xf32>>
  %hf, %list = onnx.node "Loop"(%t, %true, %h0, %empty) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>, %l: !onnx.seq<tensor<*xf32>>):
    %step = onnx.Gather(%x, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    // expected-remark @+1 {{recurrent Loop '<unnamed>' over all the steps of its sequence: one GRU layer}}
    %y, %hn = rnn.sequence gru forward %ux, %w, %r, %b, %b init(%uh) {hidden_size = 4 : i64, linear_before_reset} : (tensor<1x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%hn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    %l2 = onnx.node "SequenceInsert"(%l, %hs) : (!onnx.seq<tensor<*xf32>>, tensor<2x4xf32>) -> !onnx.seq<tensor<*xf32>>
    %c = onnx.Identity(%true) : (tensor<i1>) -> tensor<i1>
    onnx.yield %c, %hs, %l2 : tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<*xf32>> {input_names = ["i", "cond", "h", "l"], name = "body", output_names = ["c", "h1", "l1"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>) -> (tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>)
  %ys = onnx.node "ConcatFromSequence"(%list) {attrs = {axis = 0 : i64, new_axis = 1 : i64}} : (!onnx.seq<tensor<*xf32>>) -> tensor<?x2x4xf32>
  return %ys, %hf : tensor<?x2x4xf32>, tensor<2x4xf32>
}

// -----

// The list concatenated along the batch axis (new_axis 0): not a stack of
// the steps, left alone.
// CHECK-LABEL: func.func @list_concatenated
// CHECK: onnx.node "Loop"
func.func @list_concatenated(%x: tensor<?x2x3xf32>) -> (tensor<?x4xf32>, tensor<2x4xf32>) {
  %w = onnx.initializer "W" dense<0.1> : tensor<1x12x3xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<1x12x4xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x12xf32>
  %h0 = onnx.initializer "h0" dense<0.0> : tensor<2x4xf32>
  %true = onnx.initializer "true" dense<true> : tensor<i1>
  %i0 = onnx.initializer "i0" dense<0> : tensor<i64>
  %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
  %shape = onnx.Shape(%x) : (tensor<?x2x3xf32>) -> tensor<3xi64>
  %t = onnx.Gather(%shape, %i0) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %empty = onnx.node "SequenceEmpty"() {attrs = {dtype = 1 : i64}} : () -> !onnx.seq<tensor<*xf32>>
  // expected-remark @+1 {{the recurrent Loop is not made one layer: carried list 1 is not the new hidden states, appended one per iteration and stacked after the loop}}
  %hf, %list = onnx.node "Loop"(%t, %true, %h0, %empty) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>, %l: !onnx.seq<tensor<*xf32>>):
    %step = onnx.Gather(%x, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %ux = onnx.Unsqueeze(%step, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
    %uh = onnx.Unsqueeze(%h, %ax) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %y, %hn = rnn.sequence gru forward %ux, %w, %r, %b, %b init(%uh) {hidden_size = 4 : i64, linear_before_reset} : (tensor<1x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>, tensor<1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>)
    %hs = onnx.Squeeze(%hn, %ax) : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    %l2 = onnx.node "SequenceInsert"(%l, %hs) : (!onnx.seq<tensor<*xf32>>, tensor<2x4xf32>) -> !onnx.seq<tensor<*xf32>>
    %c = onnx.Identity(%true) : (tensor<i1>) -> tensor<i1>
    onnx.yield %c, %hs, %l2 : tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<*xf32>> {input_names = ["i", "cond", "h", "l"], name = "body", output_names = ["c", "h1", "l1"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>) -> (tensor<2x4xf32>, !onnx.seq<tensor<*xf32>>)
  %ys = onnx.node "ConcatFromSequence"(%list) {attrs = {axis = 0 : i64, new_axis = 0 : i64}} : (!onnx.seq<tensor<*xf32>>) -> tensor<?x4xf32>
  return %ys, %hf : tensor<?x4xf32>, tensor<2x4xf32>
}
