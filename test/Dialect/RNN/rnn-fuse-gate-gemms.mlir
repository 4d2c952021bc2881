// RUN: lstm-opt %s -split-input-file -rnn-fuse-gate-gemms | FileCheck %s

// Four MatMuls of the same input by different constant matrices (one per
// gate) become one MatMul by the column-concatenated matrix and a Split.

// CHECK-LABEL: func.func @four_gates
// CHECK: %[[W:.*]] = onnx.initializer "fused_gate_W" dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
// CHECK: %[[Y:.*]] = onnx.MatMul(%arg0, %[[W]]) : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[P:.*]]:4 = onnx.Split(%[[Y]], %{{.*}}) {axis = 1 : i64, split_attr = array<i64: 1, 1, 1, 1>}
// CHECK-NOT: onnx.MatMul
// CHECK: return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[P]]#3
func.func @four_gates(%x: tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>) {
  %wi = onnx.initializer "Wi" dense<[[1.0], [5.0]]> : tensor<2x1xf32>
  %wf = onnx.initializer "Wf" dense<[[2.0], [6.0]]> : tensor<2x1xf32>
  %wg = onnx.initializer "Wg" dense<[[3.0], [7.0]]> : tensor<2x1xf32>
  %wo = onnx.initializer "Wo" dense<[[4.0], [8.0]]> : tensor<2x1xf32>
  %i = onnx.MatMul(%x, %wi) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %f = onnx.MatMul(%x, %wf) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %g = onnx.MatMul(%x, %wg) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %o = onnx.MatMul(%x, %wo) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  return %i, %f, %g, %o : tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// Gemms with transB and a bias: the weights are transposed into [K, N] and
// the biases concatenated into one Add. A Gemm with alpha != 1 stays.

// CHECK-LABEL: func.func @gemms
// CHECK: onnx.initializer "fused_gate_W" dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: onnx.initializer "fused_gate_B" dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK: onnx.MatMul
// CHECK: onnx.Add
// CHECK: onnx.Split
// CHECK: onnx.Gemm(%arg0, {{.*}}) {alpha = 2.000000e+00 : f32, transB = 1 : i64}
func.func @gemms(%x: tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>) {
  %wa = onnx.initializer "Wa" dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %wb = onnx.initializer "Wb" dense<[[3.0, 4.0]]> : tensor<1x2xf32>
  %ba = onnx.initializer "ba" dense<[0.1]> : tensor<1xf32>
  %bb = onnx.initializer "bb" dense<[0.2]> : tensor<1xf32>
  %a = onnx.Gemm(%x, %wa, %ba) {transB = 1 : i64} : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  %b = onnx.Gemm(%x, %wb, %bb) {transB = 1 : i64} : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  %c = onnx.Gemm(%x, %wb, %bb) {alpha = 2.0 : f32, transB = 1 : i64} : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  return %a, %b, %c : tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// Different inputs, or a weight that is not a constant: nothing to merge.
// CHECK-LABEL: func.func @nothing
// CHECK-COUNT-2: onnx.MatMul
// CHECK-NOT: onnx.Split
func.func @nothing(%x: tensor<3x2xf32>, %w: tensor<2x1xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %wi = onnx.initializer "Wi" dense<[[1.0], [5.0]]> : tensor<2x1xf32>
  %i = onnx.MatMul(%x, %wi) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %f = onnx.MatMul(%x, %w) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  return %i, %f : tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// Products in a subgraph stay in it: only products of one block are merged.
// CHECK-LABEL: func.func @subgraph
// CHECK: onnx.node "If"
// CHECK-NEXT: onnx.MatMul(%arg0,
// CHECK: onnx.MatMul(%arg0,
// CHECK-NOT: onnx.Split
func.func @subgraph(%x: tensor<3x2xf32>, %c: tensor<i1>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %wi = onnx.initializer "Wi" dense<[[1.0], [5.0]]> : tensor<2x1xf32>
  %wf = onnx.initializer "Wf" dense<[[2.0], [6.0]]> : tensor<2x1xf32>
  %r = onnx.node "If"(%c) graphs {
    %t = onnx.MatMul(%x, %wi) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
    onnx.yield %t : tensor<3x1xf32> {input_names = [], output_names = ["t"]}
  } {graph_attrs = ["then_branch"]} : (tensor<i1>) -> tensor<3x1xf32>
  %f = onnx.MatMul(%x, %wf) : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  return %r, %f : tensor<3x1xf32>, tensor<3x1xf32>
}
