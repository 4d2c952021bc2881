// RUN: lstm-opt %s -split-input-file -cpu-vectorize-contractions | FileCheck %s
// RUN: lstm-opt %s -split-input-file -cpu-vectorize-contractions="lanes=8 registers=16" | FileCheck %s --check-prefix=AVX2
// RUN: lstm-opt %s -split-input-file -cpu-vectorize-contractions="parallel-min-work=1000" | FileCheck %s --check-prefix=PAR

// parallel-min-work: a contraction of at least that many multiply-adds has
// its outermost loop of more than one tile as scf.parallel (4 row tiles of
// 6 here); the partial column tile's copy of the loop too.
// PAR-LABEL: func.func @matmul(
// PAR-NOT: scf.parallel
// PAR-LABEL: func.func @matmul_rows(
// PAR: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c24{{.*}}) step (%c6{{.*}})
// PAR:   vector<6x64xf32>
// PAR-LABEL: func.func @narrow(
// PAR-NOT: scf.parallel

// A matmul [10, 32] x [32, 80]: output tiles of rows by 64 lanes (AVX-512:
// 4 vectors), 6 rows (the registers: 6 x 4 accumulators, a row of b, a
// broadcast); the last 4 rows and the last 16 columns peeled into tiles of
// their own. Each tile: the accumulator read once, a reduction loop carrying
// it, one vector.load of b and one broadcast FMA per row, one write. With 8
// lanes and 16 registers (AVX2): 2 rows of 32.
// CHECK-LABEL: func.func @matmul(
// CHECK:     %[[ACC:.*]] = vector.transfer_read %{{.*}} : memref<6x64xf32, {{.*}}>, vector<6x64xf32>
// CHECK:     %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c32 step %c1 iter_args(%[[A:.*]] = %[[ACC]]) -> (vector<6x64xf32>)
// CHECK:       %[[B:.*]] = vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<32x64xf32, {{.*}}>, vector<64xf32>
// CHECK:       %[[X0:.*]] = memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<6x32xf32, {{.*}}>
// CHECK:       %[[BC:.*]] = vector.broadcast %[[X0]] : f32 to vector<64xf32>
// CHECK:       %[[ROW:.*]] = vector.extract %[[A]][0] : vector<64xf32> from vector<6x64xf32>
// CHECK:       vector.fma %[[BC]], %[[B]], %[[ROW]] : vector<64xf32>
// CHECK-COUNT-5: vector.fma
// CHECK:       scf.yield
// CHECK:     vector.transfer_write %[[R]], %{{.*}} : vector<6x64xf32>
// CHECK: vector.transfer_read {{.*}} vector<6x16xf32>
// CHECK: vector.transfer_read {{.*}} vector<4x64xf32>
// CHECK: vector.transfer_read {{.*}} vector<4x16xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return
// AVX2-LABEL: func.func @matmul(
// AVX2: vector<2x32xf32>
func.func @matmul(%a: memref<10x32xf32>, %b: memref<32x80xf32>, %c: memref<10x80xf32>) {
  linalg.matmul ins(%a, %b : memref<10x32xf32>, memref<32x80xf32>) outs(%c : memref<10x80xf32>)
  return
}

func.func @matmul_rows(%a: memref<24x32xf32>, %b: memref<32x80xf32>, %c: memref<24x80xf32>) {
  linalg.matmul ins(%a, %b : memref<24x32xf32>, memref<32x80xf32>) outs(%c : memref<24x80xf32>)
  return
}

// -----

// Left alone: an output narrower than a vector, a body that is not
// out + a * b, a dynamic shape.
// CHECK-LABEL: func.func @narrow(
// CHECK: linalg.matmul
// CHECK-NOT: vector.fma
func.func @narrow(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}
// CHECK-LABEL: func.func @max_plus(
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#o = affine_map<(i, j, k) -> (i, j)>
func.func @max_plus(%a: memref<4x8xf32>, %b: memref<8x32xf32>, %c: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x8xf32>, memref<8x32xf32>) outs(%c : memref<4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %acc, %s : f32
    linalg.yield %m : f32
  }
  return
}
// CHECK-LABEL: func.func @dynamic(
// CHECK: linalg.matmul
// CHECK-NOT: vector.fma
func.func @dynamic(%a: memref<?x8xf32>, %b: memref<8x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// i32 (a quantized model's MatMulInteger or ConvInteger, after the zero
// points): the same tiles, each step a multiply and an add (exact in any
// order). Integers of another width, or mixed types, stay as they are.
// CHECK-LABEL: func.func @matmul_i32(
// CHECK:     vector.transfer_read %{{.*}} : memref<6x64xi32>, vector<6x64xi32>
// CHECK:     scf.for
// CHECK:       vector.load %{{.*}} : memref<32x64xi32>, vector<64xi32>
// CHECK:       vector.broadcast %{{.*}} : i32 to vector<64xi32>
// CHECK:       arith.muli %{{.*}} : vector<64xi32>
// CHECK:       arith.addi %{{.*}} : vector<64xi32>
// CHECK-NOT:   vector.fma
func.func @matmul_i32(%a: memref<6x32xi32>, %b: memref<32x64xi32>, %c: memref<6x64xi32>) {
  linalg.matmul ins(%a, %b : memref<6x32xi32>, memref<32x64xi32>) outs(%c : memref<6x64xi32>)
  return
}
// CHECK-LABEL: func.func @matmul_i16(
// CHECK: linalg.matmul
// CHECK-NOT: vector.load
func.func @matmul_i16(%a: memref<6x32xi16>, %b: memref<32x64xi16>, %c: memref<6x64xi16>) {
  linalg.matmul ins(%a, %b : memref<6x32xi16>, memref<32x64xi16>) outs(%c : memref<6x64xi16>)
  return
}
