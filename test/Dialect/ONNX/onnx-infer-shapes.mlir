// RUN: lstm-opt %s -split-input-file -onnx-infer-shapes | FileCheck %s
// RUN: lstm-opt %s -split-input-file -onnx-infer-shapes=graph-outputs=true | FileCheck %s --check-prefix=OUTS

// Types the model leaves unknown, filled in from the ops' shape rules, in
// order: the Reshape's target is computed (Shape -> Gather -> Concat) and
// evaluated; the MatMul then knows both operands.

// CHECK-LABEL: func.func @chain
// CHECK: onnx.Transpose(%{{.*}}) : (tensor<2x8xf32>) -> tensor<8x2xf32>
// CHECK: onnx.Shape(%{{.*}}) : (tensor<2x8xf32>) -> tensor<2xi64>
// CHECK: onnx.Gather(%{{.*}}, %{{.*}}) : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK: onnx.Concat(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK: onnx.Reshape(%{{.*}}, %{{.*}}) : (tensor<8x2xf32>, tensor<2xi64>) -> tensor<2x8xf32>
// CHECK: onnx.MatMul(%{{.*}}, %{{.*}}) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK: onnx.Sigmoid(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @chain(%x: tensor<2x8xf32>) -> tensor<?x?xf32> {
  %t = onnx.Transpose(%x) : (tensor<2x8xf32>) -> tensor<*xf32>
  %shape = onnx.Shape(%x) : (tensor<2x8xf32>) -> tensor<?xi64>
  %zero = onnx.initializer "zero" dense<[0]> : tensor<1xi64>
  %b = onnx.Gather(%shape, %zero) : (tensor<?xi64>, tensor<1xi64>) -> tensor<*xi64>
  %minus1 = onnx.initializer "minus1" dense<[-1]> : tensor<1xi64>
  %target = onnx.Concat(%b, %minus1) {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %r = onnx.Reshape(%t, %target) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %w = onnx.initializer "w" dense<0.5> : tensor<8x3xf32>
  %m = onnx.MatMul(%r, %w) : (tensor<*xf32>, tensor<8x3xf32>) -> !onnx.unknown
  %s = onnx.Sigmoid(%m) : (!onnx.unknown) -> tensor<?x?xf32>
  %y = onnx.Identity(%s) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A graph output keeps its declared type (a symbolic dimension stays
// symbolic); what is inferred for it still reaches its other users. A
// value that a subgraph reads keeps its type too.

// CHECK-LABEL: func.func @kept
// CHECK: %[[M:.*]] = onnx.MatMul(%{{.*}}, %{{.*}}) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
// CHECK: %[[T:.*]] = onnx.Tanh(%[[M]]) : (tensor<?x3xf32>) -> tensor<2x3xf32>
// CHECK: onnx.Add(%[[T]], %[[T]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
// CHECK: %[[N:.*]] = onnx.Neg(%{{.*}}) : (tensor<2x8xf32>) -> tensor<*xf32>
// CHECK: onnx.node "If"
// CHECK: return %[[M]], %{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<*xf32>, tensor<*xf32>
func.func @kept(%x: tensor<2x8xf32>, %c: tensor<i1>) -> (tensor<?x3xf32>, tensor<*xf32>, tensor<*xf32>) {
  %w = onnx.initializer "w" dense<0.5> : tensor<8x3xf32>
  %m = onnx.MatMul(%x, %w) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %u = onnx.Tanh(%m) : (tensor<?x3xf32>) -> tensor<*xf32>
  %t = onnx.Add(%u, %u) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %n = onnx.Neg(%x) : (tensor<2x8xf32>) -> tensor<*xf32>
  %if = onnx.node "If"(%c) graphs {
    onnx.yield %n : tensor<*xf32> {input_names = [], output_names = ["o"]}
  }, {
    onnx.yield %n : tensor<*xf32> {input_names = [], output_names = ["o"]}
  } {domain = "", graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32>
  return %m, %t, %if : tensor<?x3xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Nothing to learn: the pass changes nothing.

// CHECK-LABEL: func.func @static
// CHECK: onnx.Relu(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
func.func @static(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = onnx.Relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A Concat whose axis would sum past int64 (a hostile model): unknown, not
// a wrapped size.

// CHECK-LABEL: func.func @huge
// CHECK: onnx.Concat(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<9223372036854775807xf32>, tensor<9223372036854775807xf32>) -> tensor<?xf32>
func.func @huge(%x: tensor<9223372036854775807xf32>) -> tensor<*xf32> {
  %c = onnx.Concat(%x, %x) {axis = 0 : i64} : (tensor<9223372036854775807xf32>, tensor<9223372036854775807xf32>) -> tensor<*xf32>
  %r = onnx.Relu(%c) : (tensor<*xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// With graph-outputs (the compiled targets), a graph output is refined too
// and the function's type follows; quantize_dynamic's MatMulInteger and
// DynamicQuantizeLinear have their results' shapes (a matmul; x's shape and
// two scalars).
// OUTS-LABEL: func.func @outputs_refined
// OUTS-SAME: -> (tensor<2x3xf32>, tensor<2x8xui8>)
// OUTS: onnx.node "DynamicQuantizeLinear"{{.*}} -> (tensor<2x8xui8>, tensor<f32>, tensor<ui8>)
// OUTS: onnx.node "MatMulInteger"{{.*}} -> tensor<2x3xi32>
// OUTS: return {{.*}} : tensor<2x3xf32>, tensor<2x8xui8>
// CHECK-LABEL: func.func @outputs_refined
// CHECK-SAME: -> (tensor<?x3xf32>, tensor<*xui8>)
func.func @outputs_refined(%x: tensor<2x8xf32>) -> (tensor<?x3xf32>, tensor<*xui8>) {
  %w = onnx.initializer "w" dense<3> : tensor<8x3xui8>
  %q, %s, %z = onnx.node "DynamicQuantizeLinear"(%x) : (tensor<2x8xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>)
  %m = onnx.node "MatMulInteger"(%q, %w, %z) : (tensor<*xui8>, tensor<8x3xui8>, tensor<*xui8>) -> tensor<*xi32>
  %f = onnx.Cast(%m) {to = 1 : i64} : (tensor<*xi32>) -> tensor<?x3xf32>
  return %f, %q : tensor<?x3xf32>, tensor<*xui8>
}

// -----

// Operators without a typed op whose result shapes the rules know:
// silero-vad's reflect Pad (pads computed by shape arithmetic: here a
// constant), its STFT Conv (stride 128, no padding), Pow/Sqrt, ReduceMean
// (keepdims 0), a SAME_UPPER Conv with dilation, and a Pad with axes.
// CHECK-LABEL: func.func @generic_shapes
// CHECK: onnx.node "Pad"{{.*}} -> tensor<1x640xf32>
// CHECK: onnx.node "Conv"{{.*}} -> tensor<1x258x4xf32>
// CHECK: onnx.node "Pow"{{.*}} -> tensor<1x258x4xf32>
// CHECK: onnx.node "Sqrt"{{.*}} -> tensor<1x258x4xf32>
// CHECK: onnx.node "ReduceMean"{{.*}} -> tensor<1x4xf32>
// CHECK: onnx.node "Conv"{{.*}} -> tensor<1x8x4xf32>
// CHECK: onnx.node "Pad"{{.*}} -> tensor<1x258x9xf32>
func.func @generic_shapes(%x: tensor<1x576xf32>) -> (tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %pads = onnx.initializer "pads" dense<[0, 32, 0, 32]> : tensor<4xi64>
  %w = onnx.initializer "w" dense<1.0> : tensor<258x1x256xf32>
  %w2 = onnx.initializer "w2" dense<1.0> : tensor<8x258x3xf32>
  %two = onnx.initializer "two" dense<2.0> : tensor<f32>
  %ax = onnx.initializer "ax" dense<1> : tensor<1xi64>
  %p2 = onnx.initializer "p2" dense<[2, 3]> : tensor<2xi64>
  %a2 = onnx.initializer "a2" dense<[2]> : tensor<1xi64>
  %none = onnx.none
  %p = onnx.node "Pad"(%x, %pads) {attrs = {mode = "reflect"}} : (tensor<1x576xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %u = onnx.Unsqueeze(%p, %ax) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %c = onnx.node "Conv"(%u, %w) {attrs = {strides = array<i64: 128>}} : (tensor<?x?x?xf32>, tensor<258x1x256xf32>) -> tensor<?x?x?xf32>
  %q = onnx.node "Pow"(%c, %two) : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %s = onnx.node "Sqrt"(%q) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %m = onnx.node "ReduceMean"(%s) {attrs = {axes = array<i64: 1>, keepdims = 0 : i64}} : (tensor<?x?x?xf32>) -> tensor<?x?xf32>
  %c2 = onnx.node "Conv"(%s, %w2) {attrs = {auto_pad = "SAME_UPPER", dilations = array<i64: 2>}} : (tensor<?x?x?xf32>, tensor<8x258x3xf32>) -> tensor<?x?x?xf32>
  %pa = onnx.node "Pad"(%s, %p2, %none, %a2) : (tensor<?x?x?xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<?x?x?xf32>
  %r1 = onnx.Identity(%m) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %r2 = onnx.Identity(%c2) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r3 = onnx.Identity(%pa) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r1, %r2, %r3 : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}
