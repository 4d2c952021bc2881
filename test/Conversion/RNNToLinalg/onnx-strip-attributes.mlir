// RUN: lstm-opt %s --onnx-strip-attributes | FileCheck %s

// Every onnx.* attribute goes (the module's, the graph's argument and result
// names, an op's node name); other attributes stay.
// CHECK: module attributes {keep.me = 1 : i64} {
// CHECK: func.func @g(%{{.*}}: tensor<2xf32> {other.attr = 2 : i64}) -> tensor<2xf32> {
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<2xf32>
// CHECK-NOT: onnx.
module attributes {onnx.ir_version = 7 : i64, onnx.producer_name = "x", keep.me = 1 : i64} {
  func.func @g(%a: tensor<2xf32> {onnx.name = "a", other.attr = 2 : i64}) -> (tensor<2xf32> {onnx.name = "b"}) {
    %0 = arith.addf %a, %a {onnx.node = "add0"} : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
