// RUN: lstm-opt %s --linalg-signless-integers --split-input-file | FileCheck %s
// RUN: lstm-opt %s --linalg-signless-integers --split-input-file | FileCheck %s --check-prefix=NOSIGN

// What convert-onnx-to-linalg leaves for a uint8 zero point and uint8
// weights: ui8 tensors read through casts to i8 and arith.extui. Every type
// becomes signless, constants keep their bits, the casts go.
// NOSIGN-NOT: ui8
// NOSIGN-NOT: si8
// NOSIGN-NOT: unrealized_conversion_cast

// CHECK-LABEL: func.func @dequantize(
// CHECK-SAME:     %[[X:.*]]: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi8>)
// CHECK-DAG: %[[ZP:.*]] = arith.constant dense<-56> : tensor<i8>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<[1, -1, 127, -128]> : tensor<4xi8>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[ZP]] : tensor<4xi8>, tensor<i8>)
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: f32):
// CHECK:   %[[AW:.*]] = arith.extui %[[A]] : i8 to i32
// CHECK:   %[[BW:.*]] = arith.extui %[[B]] : i8 to i32
// CHECK: return %{{.*}}, %[[W]] : tensor<4xf32>, tensor<4xi8>
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @dequantize(%x: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>) {
  %zp = arith.constant dense<200> : tensor<ui8>
  %w = arith.constant dense<[1, 255, 127, 128]> : tensor<4xui8>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%x, %zp : tensor<4xui8>, tensor<ui8>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: ui8, %b: ui8, %o: f32):
    %as = builtin.unrealized_conversion_cast %a : ui8 to i8
    %bs = builtin.unrealized_conversion_cast %b : ui8 to i8
    %aw = arith.extui %as : i8 to i32
    %bw = arith.extui %bs : i8 to i32
    %d = arith.subi %aw, %bw : i32
    %f = arith.sitofp %d : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  return %r, %w : tensor<4xf32>, tensor<4xui8>
}

// -----

// Signed and signless types, and floats, are untouched but for the sign.
// CHECK-LABEL: func.func @others(
// CHECK-SAME:     %{{.*}}: tensor<2xi8>, %{{.*}}: tensor<2xi32>, %{{.*}}: tensor<2xf32>) -> tensor<2xi8>
func.func @others(%a: tensor<2xsi8>, %b: tensor<2xi32>, %c: tensor<2xf32>) -> tensor<2xsi8> {
  return %a : tensor<2xsi8>
}
