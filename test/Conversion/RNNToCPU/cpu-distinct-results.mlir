// RUN: lstm-opt %s --cpu-distinct-results --split-input-file | FileCheck %s

// A value returned twice: the second result is a copy of it; a value
// returned once, and a function argument returned once, stay.
// CHECK-LABEL: func.func @twice(
// CHECK: %[[R:.*]] = math.exp %arg0
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[R]]) : tensor<2x3xf32>
// CHECK: %[[C2:.*]] = bufferization.alloc_tensor() copy(%[[R]]) : tensor<2x3xf32>
// CHECK: return %[[R]], %[[C]], %arg0, %[[C2]]
func.func @twice(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = math.exp %x : tensor<2x3xf32>
  return %r, %r, %x, %r : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Distinct results: nothing changes.
// CHECK-LABEL: func.func @distinct(
// CHECK-NOT: alloc_tensor
// CHECK: return %arg0, %{{.*}} :
func.func @distinct(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = math.exp %x : tensor<4xf32>
  return %x, %r : tensor<4xf32>, tensor<4xf32>
}
