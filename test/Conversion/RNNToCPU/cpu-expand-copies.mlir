// RUN: lstm-opt %s -split-input-file -cpu-expand-copies | FileCheck %s
// RUN: lstm-opt %s -split-input-file --pass-pipeline='builtin.module(cpu-expand-copies,func.func(convert-linalg-to-loops))' | FileCheck %s --check-prefix=LOOPS

// A copy out of a strided view (one direction of a bidirectional output)
// becomes linalg.copy, then loops: no call into MLIR's runner utilities.

// CHECK-LABEL: func.func @strided
// CHECK: linalg.copy ins(%{{.*}} : memref<5x3xf32, strided<[6, 1], offset: 3>>) outs(%arg1 : memref<5x3xf32>)
// CHECK-NOT: memref.copy
// LOOPS-LABEL: func.func @strided
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: memref.load
// LOOPS: memref.store
// LOOPS-NOT: memref.copy
func.func @strided(%y: memref<5x6xf32>, %out: memref<5x3xf32>) {
  %v = memref.subview %y[0, 3] [5, 3] [1, 1] : memref<5x6xf32> to memref<5x3xf32, strided<[6, 1], offset: 3>>
  memref.copy %v, %out : memref<5x3xf32, strided<[6, 1], offset: 3>> to memref<5x3xf32>
  return
}

// -----

// Contiguous buffers keep memref.copy (it lowers to a memcpy).

// CHECK-LABEL: func.func @contiguous
// LOOPS-LABEL: func.func @contiguous
// CHECK: memref.copy %arg0, %arg1 : memref<5x6xf32> to memref<5x6xf32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<5x6xf32>, %b: memref<5x6xf32>) {
  memref.copy %a, %b : memref<5x6xf32> to memref<5x6xf32>
  return
}

// -----

// Unranked memrefs have no loop nest: left alone.

// CHECK-LABEL: func.func @unranked
// CHECK: memref.copy %arg0, %arg1 : memref<*xf32> to memref<*xf32>
func.func @unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}
