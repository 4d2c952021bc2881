// RUN: lstm-opt %s --canonicalize | FileCheck %s

// Generic transformations never delete what belongs to the model's
// interface or has unknown semantics: an unused onnx.node and an initializer
// that is also a graph input stay; a plain unused initializer and an unused
// typed op go.

// CHECK-LABEL: func.func @keep
func.func @keep(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: onnx.initializer "k" graph_input
  %k = onnx.initializer "k" graph_input dense<1.0> : tensor<2xf32>
  // CHECK-NOT: onnx.initializer "dead"
  %d = onnx.initializer "dead" dense<2.0> : tensor<2xf32>
  // CHECK: onnx.node "RandomNormalLike"
  %r = onnx.node "RandomNormalLike"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  // CHECK-NOT: onnx.Sigmoid
  %s = onnx.Sigmoid(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %x : tensor<2xf32>
}
