// RUN: lstm-opt %s -split-input-file --allow-unregistered-dialect -cpu-forward-out-params | FileCheck %s

// A layer's [T, 1, B, H] buffer returned as [T, B, H]: the kernels write the
// out-parameter through expand_shape; no allocation, no copy.

// CHECK-LABEL: func.func @collapsed
// CHECK-SAME: (%[[X:.*]]: memref<5x3x4xf32>, %[[OUT:.*]]: memref<5x3x4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[V:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2], [3]] output_shape [5, 1, 3, 4] : memref<5x3x4xf32> into memref<5x1x3x4xf32>
// CHECK: "test.kernel"(%[[X]], %[[V]])
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @collapsed(%x: memref<5x3x4xf32>, %out: memref<5x3x4xf32>) {
  %y = memref.alloc() {alignment = 64 : i64} : memref<5x1x3x4xf32>
  "test.kernel"(%x, %y) : (memref<5x3x4xf32>, memref<5x1x3x4xf32>) -> ()
  %c = memref.collapse_shape %y [[0], [1, 2], [3]] : memref<5x1x3x4xf32> into memref<5x3x4xf32>
  memref.copy %c, %out : memref<5x3x4xf32> to memref<5x3x4xf32>
  memref.dealloc %y : memref<5x1x3x4xf32>
  return
}

// -----

// The other way round: an expand_shape view copied out.

// CHECK-LABEL: func.func @expanded
// CHECK-SAME: %[[OUT:.*]]: memref<1x12xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1]] : memref<1x12xf32> into memref<12xf32>
// CHECK: "test.kernel"(%[[V]])
// CHECK-NOT: memref.copy
func.func @expanded(%out: memref<1x12xf32>) {
  %y = memref.alloc() : memref<12xf32>
  "test.kernel"(%y) : (memref<12xf32>) -> ()
  %e = memref.expand_shape %y [[0, 1]] output_shape [1, 12] : memref<12xf32> into memref<1x12xf32>
  memref.copy %e, %out : memref<1x12xf32> to memref<1x12xf32>
  return
}

// -----

// The buffer is read after the copy: writing the out-parameter early would
// change what that read sees. Left alone.

// CHECK-LABEL: func.func @read_after
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @read_after(%out: memref<3x4xf32>) {
  %y = memref.alloc() : memref<1x3x4xf32>
  "test.kernel"(%y) : (memref<1x3x4xf32>) -> ()
  %c = memref.collapse_shape %y [[0, 1], [2]] : memref<1x3x4xf32> into memref<3x4xf32>
  memref.copy %c, %out : memref<3x4xf32> to memref<3x4xf32>
  "test.kernel"(%y) : (memref<1x3x4xf32>) -> ()
  return
}

// -----

// A view of the buffer, taken before the copy, is written after it: the
// out-parameter would see that write. Left alone.

// CHECK-LABEL: func.func @view_written_after
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @view_written_after(%out: memref<3x4xf32>) {
  %y = memref.alloc() : memref<1x3x4xf32>
  %v = memref.subview %y[0, 0, 0] [1, 1, 4] [1, 1, 1] : memref<1x3x4xf32> to memref<1x1x4xf32, strided<[12, 4, 1]>>
  "test.kernel"(%y) : (memref<1x3x4xf32>) -> ()
  %c = memref.collapse_shape %y [[0, 1], [2]] : memref<1x3x4xf32> into memref<3x4xf32>
  memref.copy %c, %out : memref<3x4xf32> to memref<3x4xf32>
  "test.kernel"(%v) : (memref<1x1x4xf32, strided<[12, 4, 1]>>) -> ()
  return
}

// -----

// The out-parameter has another use (the function also reads it): left
// alone. So is a copy into something that is not an argument.

// CHECK-LABEL: func.func @out_used_twice
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func @into_local
// CHECK: memref.copy
func.func @out_used_twice(%out: memref<3x4xf32>) {
  %y = memref.alloc() : memref<1x3x4xf32>
  "test.kernel"(%y, %out) : (memref<1x3x4xf32>, memref<3x4xf32>) -> ()
  %c = memref.collapse_shape %y [[0, 1], [2]] : memref<1x3x4xf32> into memref<3x4xf32>
  memref.copy %c, %out : memref<3x4xf32> to memref<3x4xf32>
  return
}
func.func @into_local() {
  %y = memref.alloc() : memref<1x3x4xf32>
  %z = memref.alloc() : memref<3x4xf32>
  "test.kernel"(%y) : (memref<1x3x4xf32>) -> ()
  %c = memref.collapse_shape %y [[0, 1], [2]] : memref<1x3x4xf32> into memref<3x4xf32>
  memref.copy %c, %z : memref<3x4xf32> to memref<3x4xf32>
  "test.kernel"(%z) : (memref<3x4xf32>) -> ()
  return
}
