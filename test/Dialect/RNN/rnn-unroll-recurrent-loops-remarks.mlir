// RUN: lstm-opt %s -split-input-file -rnn-unroll-recurrent-loops="max-trips=4" -verify-diagnostics | FileCheck %s

// Recurrent loops that are not unrolled: each keeps its Loop/Scan and gets a
// remark with the reason.

// CHECK-LABEL: func.func @dynamic_trip_count
// CHECK: onnx.node "Loop"
func.func @dynamic_trip_count(%x: tensor<3x2x3xf32>, %h0: tensor<2x4xf32>, %m: tensor<i64>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %none = onnx.none
  // expected-remark @+1 {{the recurrent Loop is not unrolled: its trip count is not known when the model is compiled}}
  %hT = onnx.node "Loop"(%m, %none, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<3x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %cond, %hn : tensor<i1>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %hT : tensor<2x4xf32>
}

// -----

// A condition that depends on the data: not known at compile time.

// CHECK-LABEL: func.func @data_condition
// CHECK-NOT: onnx.initializer "iteration"
// CHECK-NOT: onnx.Gather
// CHECK: onnx.node "Loop"
func.func @data_condition(%x: tensor<3x2x3xf32>, %h0: tensor<2x4xf32>, %go: tensor<i1>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %m = onnx.initializer "M" dense<3> : tensor<i64>
  // expected-remark @+1 {{the recurrent Loop is not unrolled: its condition is not known when the model is compiled (iteration 0)}}
  %hT = onnx.node "Loop"(%m, %go, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<3x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %cond, %hn : tensor<i1>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %hT : tensor<2x4xf32>
}

// -----

// More iterations than max-trips allows (5 > 4): nothing is copied.

// CHECK-LABEL: func.func @too_long
// CHECK-NOT: onnx.initializer "iteration"
// CHECK: onnx.node "Loop"
func.func @too_long(%x: tensor<5x2x3xf32>, %h0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %m = onnx.initializer "M" dense<5> : tensor<i64>
  %none = onnx.none
  // expected-remark @+1 {{the recurrent Loop is not unrolled: more iterations (5) or copied ops than the limits allow (max-trips=4, max-ops=200000)}}
  %hT = onnx.node "Loop"(%m, %none, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<5x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %cond, %hn : tensor<i1>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, none, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %hT : tensor<2x4xf32>
}

// -----

// A Scan over an axis of unknown length.

// CHECK-LABEL: func.func @scan_dynamic
// CHECK: onnx.node "Scan"
module attributes {onnx.opset_import = [#onnx.opset<"", 21>]} {
func.func @scan_dynamic(%x: tensor<?x2x3xf32>, %h0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  // expected-remark @+1 {{the recurrent Scan is not unrolled: the length of a scanned axis is not known statically}}
  %hT = onnx.node "Scan"(%h0, %x) graphs {
  ^bb0(%h: tensor<2x4xf32>, %xt: tensor<2x3xf32>):
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %hn : tensor<2x4xf32> {input_names = ["h", "x_t"], name = "body", output_names = ["h_out"]}
  } {attrs = {num_scan_inputs = 1 : i64}, graph_attrs = ["body"]} : (tensor<2x4xf32>, tensor<?x2x3xf32>) -> tensor<2x4xf32>
  return %hT : tensor<2x4xf32>
}
}

// -----

// A trip count computed when the model runs and a condition the body always
// yields true (a scripted `for t in range(x.size(0))` over a dynamic axis):
// the count is M's, unknown. Said at once, without unrolling up to the limit.

// CHECK-LABEL: func.func @dynamic_trip_count_true_condition
// CHECK: onnx.node "Loop"
func.func @dynamic_trip_count_true_condition(%x: tensor<?x2x3xf32>, %h0: tensor<2x4xf32>, %m: tensor<i64>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.1> : tensor<3x4xf32>
  %r = onnx.initializer "R" dense<0.2> : tensor<4x4xf32>
  %t = onnx.initializer "T" dense<true> : tensor<i1>
  // expected-remark @+1 {{the recurrent Loop is not unrolled: its trip count is not known when the model is compiled}}
  %hT = onnx.node "Loop"(%m, %t, %h0) graphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2x4xf32>):
    %xt = onnx.Gather(%x, %i) : (tensor<?x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %a = onnx.MatMul(%xt, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %b = onnx.MatMul(%h, %r) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = onnx.Add(%a, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %hn = onnx.Tanh(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %c = onnx.Identity(%t) : (tensor<i1>) -> tensor<i1>
    onnx.yield %c, %hn : tensor<i1>, tensor<2x4xf32> {input_names = ["i", "cond", "h"], name = "body", output_names = ["cond_out", "h_out"]}
  } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %hT : tensor<2x4xf32>
}
