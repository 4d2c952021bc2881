// RUN: lstm-opt %s -split-input-file -convert-onnx-to-linalg | FileCheck %s
// RUN: lstm-opt %s -split-input-file -convert-onnx-to-linalg | FileCheck %s --check-prefix=NOONNX

// Every onnx op is lowered: none is left in any function.
// NOONNX-NOT: {{= onnx\.|onnx\.none}}

// Constants: initializers (dense and dense_resource) and Constant nodes become
// arith.constant; onnx.none disappears.

// CHECK-LABEL: func.func @constants
// CHECK-DAG: %[[W:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<2.500000e+00> : tensor<f32>
// CHECK-DAG: %[[IS:.*]] = arith.constant dense<[4, 5]> : tensor<2xi64>
// CHECK-DAG: %[[R:.*]] = arith.constant dense_resource<blob> : tensor<2x2xf32>
// CHECK: return %[[W]], %[[C]], %[[F]], %[[IS]], %[[R]]

func.func @constants() -> (tensor<2xf32>, tensor<3xi64>, tensor<f32>, tensor<2xi64>, tensor<2x2xf32>) {
  %none = onnx.none
  %w = onnx.initializer "W" dense<[1.0, 2.0]> : tensor<2xf32>
  %c = onnx.Constant() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %f = onnx.Constant() {value_float = 2.5 : f32} : () -> tensor<f32>
  %is = onnx.Constant() {value_ints = array<i64: 4, 5>} : () -> tensor<2xi64>
  %r = onnx.initializer "R" dense_resource<blob> : tensor<2x2xf32>
  return %w, %c, %f, %is, %r : tensor<2xf32>, tensor<3xi64>, tensor<f32>, tensor<2xi64>, tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Shape -> Gather -> Unsqueeze -> Concat is folded; the Reshape reads the
// constant [-1, 4] and becomes a collapse. Its declared result type is
// dynamic; the Identity user gets the static value.

// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NEXT: return %[[R]] : tensor<6x4xf32>

func.func @shape_arithmetic(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = onnx.Shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %last = onnx.Gather(%s, %i) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %none = onnx.none
  %u = onnx.Unsqueeze(%last, %none) {axes_attr = array<i64: 0>} : (tensor<i64>, none) -> tensor<1xi64>
  %m1 = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = onnx.Concat(%m1, %u) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %y = onnx.Reshape(%x, %shape) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %z = onnx.Identity(%y) : (tensor<?x?xf32>) -> tensor<6x4xf32>
  return %z : tensor<6x4xf32>
}

// -----

// Shape with start, and Shape -> Cast -> Slice -> Cast (as tf2onnx emits):
// compile-time constants.

// CHECK-LABEL: func.func @shape_slice
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<2> : tensor<1xi64>
// CHECK: return %[[S]], %[[B]]

func.func @shape_slice(%x: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<1xi64>) {
  %s = onnx.Shape(%x) {start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %all = onnx.Shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %c = onnx.Cast(%all) {to = 6 : i64} : (tensor<3xi64>) -> tensor<3xi32>
  %b = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.none
  %sl = onnx.Slice(%c, %b, %e, %b, %none) : (tensor<3xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1xi32>
  %sl64 = onnx.Cast(%sl) {to = 7 : i64} : (tensor<1xi32>) -> tensor<1xi64>
  return %s, %sl64 : tensor<2xi64>, tensor<1xi64>
}

// -----

// Squeeze (given axes, and all size-1 axes), Unsqueeze with negative axes,
// Reshape with -1, Flatten (a generic onnx.node), a zero-size Reshape with
// allowzero.

// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x3xf32>, %[[Z:.*]]: tensor<0x3xf32>)
// CHECK: %[[SQ:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
// CHECK: %[[ALL:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
// CHECK: %[[UN:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2], [3, 4]] output_shape [1, 2, 1, 3, 1] : tensor<2x1x3xf32> into tensor<1x2x1x3x1xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x1x3xf32> into tensor<6xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: %[[FL:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
// CHECK: return %[[SQ]], %[[ALL]], %[[UN]], %[[R]], %[[FL]], %[[Z]]

func.func @reshapes(%x: tensor<2x1x3xf32>, %z: tensor<0x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x2x1x3x1xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<0x3xf32>) {
  %none = onnx.none
  %sq = onnx.Squeeze(%x, %none) {axes_attr = array<i64: 1>} : (tensor<2x1x3xf32>, none) -> tensor<2x3xf32>
  %all = onnx.Squeeze(%x, %none) : (tensor<2x1x3xf32>, none) -> tensor<2x3xf32>
  %ax = onnx.Constant() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %un = onnx.Unsqueeze(%x, %ax) : (tensor<2x1x3xf32>, tensor<2xi64>) -> tensor<1x2x1x3x1xf32>
  %shape = onnx.Constant() {value = dense<[3, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = onnx.Reshape(%x, %shape) : (tensor<2x1x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %fl = onnx.node "Flatten"(%x) {attrs = {axis = 1 : i64}, domain = ""} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  %zs = onnx.Constant() {value = dense<[0, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %rz = onnx.Reshape(%z, %zs) {allowzero = 1 : i64} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<0x3xf32>
  return %sq, %all, %un, %r, %fl, %rz : tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x2x1x3x1xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<0x3xf32>
}

// -----

// 0 copies the input dimension; [2, 3, 4] -> [2, 4, 3] goes through 1-D.

// CHECK-LABEL: func.func @reshape_copy_dim
// CHECK: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [2, 4, 3] : tensor<24xf32> into tensor<2x4x3xf32>

func.func @reshape_copy_dim(%x: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  %shape = onnx.Constant() {value = dense<[0, 4, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %r = onnx.Reshape(%x, %shape) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x3x2xf32>
// CHECK: %[[A:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E0]] : tensor<4x3x2xf32>) permutation = [2, 1, 0]
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<3x2x4xf32>
// CHECK: %[[B:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E1]] : tensor<3x2x4xf32>) permutation = [1, 0, 2]
// CHECK: return %[[A]], %[[B]]

func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<4x3x2xf32>, tensor<3x2x4xf32>) {
  %a = onnx.Transpose(%x) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %b = onnx.Transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %a, %b : tensor<4x3x2xf32>, tensor<3x2x4xf32>
}

// -----

// Negative and out-of-range bounds are clamped; a negative step reads
// x[i, 5 - 2 * j] with tensor.extract in a linalg.generic over the output
// (no decreasing indexing map: IREE cannot tile one); the opset-1
// attribute form.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<5x6xf32>)
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][1, 0] [3, 2] [1, 3] : tensor<5x6xf32> to tensor<3x2xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5x3xf32>
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<5x3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK:      %[[J2:.*]] = arith.muli %[[J]], %c-2 : index
// CHECK:      %[[JS:.*]] = arith.addi %[[J2]], %c5 : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[JS]]] : tensor<5x6xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: %[[C:.*]] = tensor.extract_slice %[[X]][3, 0] [2, 6] [1, 1] : tensor<5x6xf32> to tensor<2x6xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]

func.func @slice(%x: tensor<5x6xf32>) -> (tensor<3x2xf32>, tensor<5x3xf32>, tensor<2x6xf32>) {
  %none = onnx.none
  %s = onnx.Constant() {value = dense<[1, -100]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = onnx.Constant() {value = dense<[-1, 1000]> : tensor<2xi64>} : () -> tensor<2xi64>
  %st = onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Slice(%x, %s, %e, %none, %st) : (tensor<5x6xf32>, tensor<2xi64>, tensor<2xi64>, none, tensor<2xi64>) -> tensor<3x2xf32>
  %rs = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %re = onnx.Constant() {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %ra = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %rst = onnx.Constant() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = onnx.Slice(%x, %rs, %re, %ra, %rst) : (tensor<5x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5x3xf32>
  %c = onnx.Slice(%x, %none, %none, %none, %none) {starts_attr = array<i64: 3>, ends_attr = array<i64: 5>} : (tensor<5x6xf32>, none, none, none, none) -> tensor<2x6xf32>
  return %a, %b, %c : tensor<3x2xf32>, tensor<5x3xf32>, tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK: %[[C:.*]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: %[[P:.*]] = tensor.extract_slice %[[C]][0, 0] [2, 4] [1, 1]
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[C]][0, 4] [2, 4] [1, 1]
// CHECK: %[[R:.*]] = tensor.extract_slice %[[C]][0, 0] [2, 1] [1, 1]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[C]][0, 1] [2, 7] [1, 1]
// CHECK: return %[[C]], %[[P]], %[[Q]], %[[R]], %[[S]]

func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x7xf32>) {
  %c = onnx.Concat(%a, %b) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %none = onnx.none
  %p, %q = onnx.Split(%c, %none) {axis = 1 : i64} : (tensor<2x8xf32>, none) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %sizes = onnx.Constant() {value = dense<[1, 7]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r, %s = onnx.Split(%c, %sizes) {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> (tensor<2x1xf32>, tensor<2x7xf32>)
  return %c, %p, %q, %r, %s : tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x7xf32>
}

// -----

// Runtime indices: a linalg.generic that wraps a negative index, clamps it
// to [0, 3) and reads the data with tensor.extract. A constant scalar index
// (-1 -> 3): a rank-reducing slice.

// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[IDX]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<2xi32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[IN]] : i32 to index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[DIM:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[LAST:.*]] = arith.constant 2 : index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[K]], %[[ZERO]] : index
// CHECK: %[[WRAP:.*]] = arith.addi %[[K]], %[[DIM]] : index
// CHECK: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[K]] : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[SEL]], %[[ZERO]] : index
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[HI]]] : tensor<4x3xf32>
// CHECK: linalg.yield %[[V]] : f32
// CHECK: %[[ROW3:.*]] = tensor.extract_slice %[[X]][3, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK: return %[[G]], %[[ROW3]]

func.func @gather(%x: tensor<4x3xf32>, %i: tensor<2xi32>) -> (tensor<4x2xf32>, tensor<3xf32>) {
  %a = onnx.Gather(%x, %i) {axis = 1 : i64} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<4x2xf32>
  %k = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %b = onnx.Gather(%x, %k) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
  return %a, %b : tensor<4x2xf32>, tensor<3xf32>
}

// -----

// Expand broadcasts through the indexing map (a size-1 dimension reads
// index 0); its declared result type is dynamic, so the return gets a
// tensor.cast. A one-element constant expands to a splat constant, and so
// does ConstantOfShape.

// CHECK-DAG: #[[BC:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[BC]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: %[[CAST:.*]] = tensor.cast %[[Y]] : tensor<2x3x4xf32> to tensor<?x3x4xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<2x5xf32>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<7> : tensor<2x3xi64>
// CHECK: return %[[CAST]], %[[Z]], %[[C]]

func.func @expand(%x: tensor<3x1xf32>) -> (tensor<?x3x4xf32>, tensor<2x5xf32>, tensor<2x3xi64>) {
  %shape = onnx.Constant() {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %y = onnx.Expand(%x, %shape) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
  %zero = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %s2 = onnx.Constant() {value = dense<[2, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %z = onnx.Expand(%zero, %s2) : (tensor<f32>, tensor<2xi64>) -> tensor<2x5xf32>
  %s3 = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %c = onnx.ConstantOfShape(%s3) {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<2x3xi64>
  return %y, %z, %c : tensor<?x3x4xf32>, tensor<2x5xf32>, tensor<2x3xi64>
}

// -----

// 2-D: linalg.matmul. [2, 4, 3] x [3, 5]: one [8, 3] x [3, 5] matmul.
// Equal rank-3 batches: linalg.batch_matmul. Broadcast batches ([6, 1] with
// [2]) and 1-D operands: a linalg.generic contraction.

// CHECK-DAG: #[[MA4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[MB3:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[MO4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[VK:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[BKN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ON:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[A3:.*]]: tensor<2x4x3xf32>, %[[B3:.*]]: tensor<2x3x5xf32>, %[[A4:.*]]: tensor<6x1x4x3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[M0:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3x5xf32>) outs(%[[Z0]] : tensor<4x5xf32>)
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[A3]] {{\[}}[0, 1], [2]] : tensor<2x4x3xf32> into tensor<8x3xf32>
// CHECK: %[[M1:.*]] = linalg.matmul ins(%[[ROWS]], %[[B]] : tensor<8x3xf32>, tensor<3x5xf32>) outs(%{{.*}} : tensor<8x5xf32>)
// CHECK: %[[E1:.*]] = tensor.expand_shape %[[M1]] {{\[}}[0, 1], [2]] output_shape [2, 4, 5] : tensor<8x5xf32> into tensor<2x4x5xf32>
// CHECK: %[[M2:.*]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%{{.*}} : tensor<2x4x5xf32>)
// CHECK: %[[M3:.*]] = linalg.generic {indexing_maps = [#[[MA4]], #[[MB3]], #[[MO4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[A4]], %[[B3]] : tensor<6x1x4x3xf32>, tensor<2x3x5xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[M4:.*]] = linalg.generic {indexing_maps = [#[[VK]], #[[BKN]], #[[ON]]], iterator_types = ["parallel", "reduction"]} ins(%[[V]], %[[B]] : tensor<3xf32>, tensor<3x5xf32>)
// CHECK: return %[[M0]], %[[E1]], %[[M2]], %[[M3]], %[[M4]]

func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %a3: tensor<2x4x3xf32>, %b3: tensor<2x3x5xf32>, %a4: tensor<6x1x4x3xf32>, %v: tensor<3xf32>) -> (tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<6x2x4x5xf32>, tensor<5xf32>) {
  %0 = onnx.MatMul(%a, %b) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = onnx.MatMul(%a3, %b) : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %2 = onnx.MatMul(%a3, %b3) : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %3 = onnx.MatMul(%a4, %b3) : (tensor<6x1x4x3xf32>, tensor<2x3x5xf32>) -> tensor<6x2x4x5xf32>
  %4 = onnx.MatMul(%v, %b) : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  return %0, %1, %2, %3, %4 : tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<6x2x4x5xf32>, tensor<5xf32>
}

// -----

// transB through linalg.matmul's indexing maps. alpha = 1: the product
// accumulates into C broadcast to [M, N]. Otherwise alpha * AB + beta * C.

// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: %[[BIAS:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], {{.*}}} ins(%[[C]] : tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[G0:.*]] = linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]] ins(%[[A]], %[[W]] : tensor<2x3xf32>, tensor<4x3xf32>) outs(%[[BIAS]] : tensor<2x4xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]] ins(%[[A]], %[[W]] : tensor<2x3xf32>, tensor<4x3xf32>) outs(%[[ZERO]] : tensor<2x4xf32>)
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[C]] : tensor<2x4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[AB:.*]]: f32, %[[CC:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[T0:.*]] = arith.mulf %[[ALPHA]], %[[AB]] : f32
// CHECK: %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[T1:.*]] = arith.mulf %[[BETA]], %[[CC]] : f32
// CHECK: %[[T2:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK: linalg.yield %[[T2]]
// CHECK: return %[[G0]], %[[G1]]

func.func @gemm(%a: tensor<2x3xf32>, %w: tensor<4x3xf32>, %c: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = onnx.Gemm(%a, %w, %c) {transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = onnx.Gemm(%a, %w, %c) {alpha = 2.0 : f32, beta = 0.5 : f32, transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// numpy broadcasting through the indexing maps, on floats and integers
// (integer Div truncates: divsi).

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<2x3xi64>, %[[J:.*]]: tensor<1xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[Y]], %[[X]] : tensor<3xf32>, tensor<2x3xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ONE]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[I]], %[[J]] : tensor<2x3xi64>, tensor<1xi64>)
// CHECK: arith.addi
// CHECK: arith.divsi

func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x3xi64>, %j: tensor<1xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xi64>) {
  %a = onnx.Add(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %s = onnx.Sub(%y, %x) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = onnx.Mul(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = onnx.Div(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %ai = onnx.Add(%i, %j) : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2x3xi64>
  %di = onnx.Div(%i, %j) : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2x3xi64>
  return %a, %s, %m, %d, %ai, %di : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK: arith.negf
// Sigmoid: 1 / (1 + exp(-x)), the reference form of rnn::emitActivation (the
// recurrent kernels use the tanh form: convert-rnn-to-cpu.mlir).
// CHECK: %[[N:.*]] = arith.negf %[[IN:.*]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NOT: math.fma
// CHECK: math.tanh
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// HardSigmoid: min(1, max(0, x * alpha + beta)).
// CHECK: %[[A:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[B:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %[[A]]
// CHECK: %[[S:.*]] = arith.addf %[[M]], %[[B]]
// CHECK: %[[L:.*]] = arith.maximumf %[[S]]
// CHECK: arith.minimumf %[[L]]
// Integer Neg and Relu.
// CHECK: arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32

func.func @unary(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %n = onnx.Neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = onnx.Sigmoid(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %t = onnx.Tanh(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = onnx.Relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %h = onnx.HardSigmoid(%x) {alpha = 0.25 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %ni = onnx.Neg(%i) : (tensor<4xi32>) -> tensor<4xi32>
  %ri = onnx.Relu(%i) : (tensor<4xi32>) -> tensor<4xi32>
  return %n, %s, %t, %r, %h, %ni, %ri : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// The activations in another float type: constants of that type.
// CHECK-LABEL: func.func @unary_f64
// CHECK: arith.negf %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f64
// CHECK: arith.constant 1.000000e+00 : f64
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
func.func @unary_f64(%x: tensor<3xf64>) -> tensor<3xf64> {
  %s = onnx.Sigmoid(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %s : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.trunci %{{.*}} : i64 to i32
// A cast to the same type is the input.
// CHECK: return {{.*}}, %[[X]] :

func.func @cast(%x: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xf16>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %0 = onnx.Cast(%x) {to = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  %1 = onnx.Cast(%i) {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32>
  %2 = onnx.Cast(%x) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %3 = onnx.Cast(%i) {to = 9 : i64} : (tensor<4xi64>) -> tensor<4xi1>
  %4 = onnx.Cast(%b) {to = 1 : i64} : (tensor<4xi1>) -> tensor<4xf32>
  %5 = onnx.Cast(%i) {to = 6 : i64} : (tensor<4xi64>) -> tensor<4xi32>
  %6 = onnx.Cast(%x) {to = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi64>, tensor<4xf32>, tensor<4xf16>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// Bounds as inputs (a [1] bound is reshaped to a scalar tensor) or opset-6
// attributes.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<1xf32>)
// CHECK: %[[HI0:.*]] = tensor.collapse_shape %[[HI]] [] : tensor<1xf32> into tensor<f32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[SCALAR]], #[[ID]]], {{.*}}} ins(%[[X]], %[[LO]], %[[HI0]] : tensor<4xf32>, tensor<f32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[MIN:.*]]: f32, %[[MAX:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.maximumf %[[V]], %[[MIN]] : f32
// CHECK-NEXT: %[[U:.*]] = arith.minimumf %[[T]], %[[MAX]] : f32
// CHECK: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: arith.maximumf %{{.*}}, %[[M1]] : f32
// CHECK-NOT: arith.minimumf
// CHECK: return

func.func @clip(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %none = onnx.none
  %a = onnx.Clip(%x, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<1xf32>) -> tensor<4xf32>
  %b = onnx.Clip(%x, %none, %none) {min_attr = -1.0 : f32} : (tensor<4xf32>, none, none) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 13: one axis. max, exp(x - max), sum, then divide (Softmax) or
// (x - max) - log(sum) (LogSoftmax, default axis -1).

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[AX1:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[AXL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXI:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AX1]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[MAXI]] : tensor<2x4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AX1]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AX1]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[EXP]] : tensor<2x3x4xf32>)
// CHECK: arith.addf
// CHECK: %[[SM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AX1]], #[[ID]]], {{.*}}} ins(%[[EXP]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.divf
// CHECK: %[[LMAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AXL]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: %[[LEXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[LMAX]] :
// CHECK: %[[LSUM:.*]] = linalg.generic {{.*}} ins(%[[LEXP]] :
// CHECK: %[[LSM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[AXL]], #[[AXL]], #[[ID]]], {{.*}}} ins(%[[X]], %[[LMAX]], %[[LSUM]] :
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK: return %[[SM]], %[[LSM]]

module attributes {onnx.opset_import = [#onnx.opset<"", 13>]} {
  func.func @softmax(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
    %s = onnx.Softmax(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %l = onnx.LogSoftmax(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %s, %l : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  }
}

// -----

// Before opset 13 the input is coerced to 2-D at `axis` (default 1): the
// reductions run over dimensions 1 and 2.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @softmax_opset11
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction"]} {{.*}} outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK: arith.addf
// CHECK: arith.divf

module attributes {onnx.opset_import = [#onnx.opset<"", 11>]} {
  func.func @softmax_opset11(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %s = onnx.Softmax(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %s : tensor<2x3x4xf32>
  }
}

// -----

// rnn ops stay; an operand whose declared type was dynamic becomes static,
// the function's own result keeps its type through a tensor.cast.

// CHECK-LABEL: func.func @rnn_untouched
// CHECK-DAG: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[H:.*]] = arith.constant dense<0.000000e+00> : tensor<1x2x1xf32>
// CHECK-DAG: %[[CAST:.*]] = tensor.cast %[[H]] : tensor<1x2x1xf32> to tensor<?x2x1xf32>
// CHECK: %[[Y:.*]], %{{.*}} = rnn.sequence rnn forward %arg0, %[[W]], %[[W]], %[[B]], %[[B]] init(%[[H]]) {hidden_size = 1 : i64} : ({{.*}}, tensor<1x2x1xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>)
// CHECK: %[[YS:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3]] : tensor<3x1x2x1xf32> into tensor<3x2x1xf32>
// CHECK: return %[[YS]], %[[CAST]]

func.func @rnn_untouched(%x: tensor<3x2x1xf32>) -> (tensor<3x2x1xf32>, tensor<?x2x1xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x1x1xf32>
  %b = onnx.initializer "B" dense<0.0> : tensor<1x1xf32>
  %h = onnx.Constant() {value = dense<0.0> : tensor<1x2x1xf32>} : () -> tensor<1x2x1xf32>
  %shape = onnx.Constant() {value = dense<[1, 2, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %h0 = onnx.Expand(%h, %shape) : (tensor<1x2x1xf32>, tensor<3xi64>) -> tensor<?x2x1xf32>
  %y, %hn = rnn.sequence rnn forward %x, %w, %w, %b, %b init(%h0) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<?x2x1xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>)
  %none = onnx.none
  %ys = onnx.Squeeze(%y, %none) {axes_attr = array<i64: 1>} : (tensor<3x1x2x1xf32>, none) -> tensor<3x2x1xf32>
  return %ys, %h0 : tensor<3x2x1xf32>, tensor<?x2x1xf32>
}

// -----

// Einsum: one generic over every letter, the output's letters first and
// parallel, the summed ones reductions; the operands' maps from their terms.
// CHECK-DAG: #[[EA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[EB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[EO:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @einsum(
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[EA]], #[[EB]], #[[EO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @einsum(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %y = onnx.node "Einsum"(%a, %b) {domain = "", attrs = {equation = "bij,bjk->bik"}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// ScatterND: a loop over the index tuples, each index normalised (negative
// from the end) and clamped into the data, its update slice inserted.
// CHECK-LABEL: func.func @scatter_nd(
// CHECK: scf.for %[[N:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x5xf32>)
// CHECK:   tensor.extract %{{.*}}[%[[N]], %{{.*}}] : tensor<2x1xi64>
// CHECK:   arith.maxsi
// CHECK:   %[[I:.*]] = arith.minsi
// CHECK:   %[[U:.*]] = tensor.extract_slice %{{.*}}[%[[N]], 0] [1, 5] [1, 1] : tensor<2x5xf32> to tensor<5xf32>
// CHECK:   tensor.insert_slice %[[U]] into %[[ACC]][%[[I]], 0] [1, 5] [1, 1]
func.func @scatter_nd(%x: tensor<4x5xf32>, %u: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %i = onnx.Constant() {value = dense<[[1], [-1]]> : tensor<2x1xi64>} : () -> tensor<2x1xi64>
  %y = onnx.node "ScatterND"(%x, %i, %u) {domain = ""} : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
