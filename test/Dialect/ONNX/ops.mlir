// RUN: lstm-opt %s | lstm-opt | FileCheck %s
// RUN: lstm-opt %s --mlir-print-op-generic | lstm-opt | FileCheck %s

// Every typed op parses, verifies and prints back.

// CHECK-LABEL: func.func @cell
func.func @cell(%x: tensor<1x8xf32>, %h: tensor<1x16xf32>, %c: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
  %none = onnx.none
  // CHECK: %[[W:.*]] = onnx.initializer "W" dense<1.000000e+00> : tensor<64x8xf32>
  %w = onnx.initializer "W" dense<1.0> : tensor<64x8xf32>
  %r = onnx.initializer "R" graph_input dense<0.5> : tensor<16x64xf32>
  %b = onnx.Constant() {value = dense<0.0> : tensor<64xf32>} : () -> tensor<64xf32>
  // CHECK: onnx.Gemm(%{{.*}}, %[[W]], %{{.*}}) {transB = 1 : i64}
  %xw = onnx.Gemm(%x, %w, %b) {transB = 1 : i64} : (tensor<1x8xf32>, tensor<64x8xf32>, tensor<64xf32>) -> tensor<1x64xf32>
  %hr = onnx.MatMul(%h, %r) : (tensor<1x16xf32>, tensor<16x64xf32>) -> tensor<1x64xf32>
  %g = onnx.Add(%xw, %hr) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  // CHECK: onnx.Split({{.*}}) {axis = 1 : i64, split_attr = array<i64: 16, 16, 16, 16>}
  %i, %f, %gg, %o = onnx.Split(%g, %none) {axis = 1 : i64, split_attr = array<i64: 16, 16, 16, 16>} : (tensor<1x64xf32>, none) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
  %is = onnx.Sigmoid(%i) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %fs = onnx.HardSigmoid(%f) {alpha = 2.000000e-01 : f32} : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %gt = onnx.Tanh(%gg) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %os = onnx.Sigmoid(%o) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %fc = onnx.Mul(%fs, %c) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %ig = onnx.Mul(%is, %gt) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %c2 = onnx.Add(%fc, %ig) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %ct = onnx.Tanh(%c2) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %h2 = onnx.Mul(%os, %ct) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  return %h2, %c2 : tensor<1x16xf32>, tensor<1x16xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<5x3x8xf32>, %t: tensor<i64>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %none = onnx.none
  %xt = onnx.Gather(%x, %t) {axis = 0 : i64} : (tensor<5x3x8xf32>, tensor<i64>) -> tensor<3x8xf32>
  %sl = onnx.Slice(%x, %s, %s, %s, %none) : (tensor<5x3x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<?x3x8xf32>
  %sl1 = onnx.Slice(%x, %none, %none, %none, %none) {starts_attr = array<i64: 0>, ends_attr = array<i64: 1>} : (tensor<5x3x8xf32>, none, none, none, none) -> tensor<1x3x8xf32>
  %sq = onnx.Squeeze(%sl1, %s) : (tensor<1x3x8xf32>, tensor<1xi64>) -> tensor<3x8xf32>
  %un = onnx.Unsqueeze(%sq, %none) {axes_attr = array<i64: 0>} : (tensor<3x8xf32>, none) -> tensor<1x3x8xf32>
  %cat = onnx.Concat(%un, %x) {axis = 0 : i64} : (tensor<1x3x8xf32>, tensor<5x3x8xf32>) -> tensor<6x3x8xf32>
  %tr = onnx.Transpose(%cat) {perm = array<i64: 1, 0, 2>} : (tensor<6x3x8xf32>) -> tensor<3x6x8xf32>
  %shape = onnx.Shape(%tr) : (tensor<3x6x8xf32>) -> tensor<3xi64>
  %ex = onnx.Expand(%xt, %shape) : (tensor<3x8xf32>, tensor<3xi64>) -> tensor<3x6x8xf32>
  %flat = onnx.Constant() {value_ints = array<i64: -1>} : () -> tensor<1xi64>
  %r = onnx.Reshape(%ex, %flat) : (tensor<3x6x8xf32>, tensor<1xi64>) -> tensor<?xf32>
  %sm = onnx.Softmax(%r) {axis = -1 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  %lsm = onnx.LogSoftmax(%sm) : (tensor<?xf32>) -> tensor<?xf32>
  %cl = onnx.Clip(%lsm, %none, %none) {min_attr = -1.0 : f32} : (tensor<?xf32>, none, none) -> tensor<?xf32>
  %ng = onnx.Neg(%cl) : (tensor<?xf32>) -> tensor<?xf32>
  %rl = onnx.Relu(%ng) : (tensor<?xf32>) -> tensor<?xf32>
  %cs = onnx.Cast(%rl) {to = 1 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  %id = onnx.Identity(%cs) : (tensor<?xf32>) -> tensor<?xf32>
  %cos = onnx.ConstantOfShape(%s) {value = dense<1.0> : tensor<1xf32>} : (tensor<1xi64>) -> tensor<?xf32>
  %sub = onnx.Sub(%id, %cos) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %div = onnx.Div(%sub, %cos) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %div : tensor<?xf32>
}

// CHECK-LABEL: func.func @recurrent
func.func @recurrent(%x: tensor<7x2x5xf32>, %w: tensor<2x64x5xf32>, %r: tensor<2x64x16xf32>, %b: tensor<2x128xf32>, %h0: tensor<2x2x16xf32>) -> (tensor<7x2x2x16xf32>, tensor<2x2x16xf32>, tensor<1x2x16xf32>) {
  %none = onnx.none
  // CHECK: onnx.LSTM({{.*}}) {direction = "bidirectional", hidden_size = 16 : i64}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %b, %none, %h0, %h0, %none) {direction = "bidirectional", hidden_size = 16 : i64} : (tensor<7x2x5xf32>, tensor<2x64x5xf32>, tensor<2x64x16xf32>, tensor<2x128xf32>, none, tensor<2x2x16xf32>, tensor<2x2x16xf32>, none) -> (tensor<7x2x2x16xf32>, tensor<2x2x16xf32>, none)
  %gw = onnx.Constant() {value = dense<0.1> : tensor<1x48x5xf32>} : () -> tensor<1x48x5xf32>
  %gr = onnx.Constant() {value = dense<0.1> : tensor<1x48x16xf32>} : () -> tensor<1x48x16xf32>
  // CHECK: onnx.GRU({{.*}}) {linear_before_reset = 1 : i64}
  %gy, %gyh = onnx.GRU(%x, %gw, %gr, %none, %none, %none) {linear_before_reset = 1 : i64} : (tensor<7x2x5xf32>, tensor<1x48x5xf32>, tensor<1x48x16xf32>, none, none, none) -> (none, tensor<1x2x16xf32>)
  %rw = onnx.Constant() {value = dense<0.1> : tensor<1x16x5xf32>} : () -> tensor<1x16x5xf32>
  %rr = onnx.Constant() {value = dense<0.1> : tensor<1x16x16xf32>} : () -> tensor<1x16x16xf32>
  // CHECK: onnx.RNN({{.*}}) {activations = ["Relu"], direction = "reverse"}
  %ry, %ryh = onnx.RNN(%x, %rw, %rr, %none, %none, %none) {activations = ["Relu"], direction = "reverse"} : (tensor<7x2x5xf32>, tensor<1x16x5xf32>, tensor<1x16x16xf32>, none, none, none) -> (tensor<7x1x2x16xf32>, tensor<1x2x16xf32>)
  return %y, %yh, %gyh : tensor<7x2x2x16xf32>, tensor<2x2x16xf32>, tensor<1x2x16xf32>
}

// CHECK-LABEL: func.func @generic
func.func @generic(%x: tensor<2x8xf32>, %cond: tensor<i1>) -> (tensor<2x8xf32>, !onnx.unknown, !onnx.seq<tensor<2x8xf32>>) {
  // CHECK: onnx.initializer "K" dense_resource<K> : tensor<2xf32>
  %k = onnx.initializer "K" dense_resource<K> : tensor<2xf32>
  // CHECK: onnx.node "LayerNormalization"(%{{.*}}) {attrs = {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}}
  %y = onnx.node "LayerNormalization"(%x) {attrs = {axis = -1 : i64, epsilon = 1.0e-5 : f32}} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %z = onnx.node "FusedThing"(%y) {domain = "com.example"} : (tensor<2x8xf32>) -> !onnx.unknown
  %s = onnx.node "SequenceConstruct"(%y) : (tensor<2x8xf32>) -> !onnx.seq<tensor<2x8xf32>>
  // CHECK: onnx.node "If"(%{{.*}}) graphs {
  // CHECK-NEXT: onnx.yield %{{.*}} : tensor<2x8xf32> {input_names = [], name = "then", output_names = ["a"]}
  // CHECK: } {graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<2x8xf32>
  %r = onnx.node "If"(%cond) graphs {
    onnx.yield %x : tensor<2x8xf32> {name = "then", input_names = [], output_names = ["a"]}
  }, {
    onnx.yield %y : tensor<2x8xf32> {name = "else", input_names = [], output_names = ["b"]}
  } {graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<2x8xf32>
  return %r, %z, %s : tensor<2x8xf32>, !onnx.unknown, !onnx.seq<tensor<2x8xf32>>
}

{-#
  dialect_resources: {
    builtin: {
      K: "0x040000000000803F00000040"
    }
  }
#-}
