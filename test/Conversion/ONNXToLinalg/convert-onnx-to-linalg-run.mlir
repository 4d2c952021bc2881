// RUN: lstm-opt %s --convert-onnx-to-linalg \
// RUN: | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:     --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | %mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// REQUIRES: mlir-runner

// Runs the lowered ops and checks their numbers (computed independently with
// numpy): the lowering is bufferizable with upstream passes and numerically
// right. A printed value must not be read after the print (the external
// print function is assumed to write its argument).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @show(%t: tensor<*xf32>) {
  call @printMemrefF32(%t) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %none = onnx.none
  %x = onnx.Constant() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>

  // Softmax and LogSoftmax over the last axis (subtracting the row max).
  %sm = onnx.Softmax(%x) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sm_u = tensor.cast %sm : tensor<2x3xf32> to tensor<*xf32>
  call @show(%sm_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3]
  // CHECK-NEXT: {{\[\[}}0.0900306, 0.244728, 0.665241],
  // CHECK-NEXT: [0.0420101, 0.114195, 0.843795]]
  %big = onnx.Constant() {value = dense<[[1000.0, 1001.0, 1002.0]]> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %lsm = onnx.LogSoftmax(%big) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %lsm_u = tensor.cast %lsm : tensor<1x3xf32> to tensor<*xf32>
  call @show(%lsm_u) : (tensor<*xf32>) -> ()
  // Large inputs: exp(x) would overflow without subtracting the max.
  // CHECK: sizes = [1, 3]
  // CHECK-NEXT: {{\[\[}}-2.40761, -1.40761, -0.407606]]

  // Gather rows [-1, 0] (a linalg.generic reading with tensor.extract), and
  // row -2 (a constant scalar index: a slice).
  %idx = onnx.Constant() {value = dense<[-1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %g = onnx.Gather(%x, %idx) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %g_u = tensor.cast %g : tensor<2x3xf32> to tensor<*xf32>
  call @show(%g_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3]
  // CHECK-NEXT: {{\[\[}}4, 5, 7],
  // CHECK-NEXT: [1, 2, 3]]
  %k = onnx.Constant() {value = dense<-2> : tensor<i64>} : () -> tensor<i64>
  %gk = onnx.Gather(%x, %k) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<3xf32>
  %gk_u = tensor.cast %gk : tensor<3xf32> to tensor<*xf32>
  call @show(%gk_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [3]
  // CHECK-NEXT: [1, 2, 3]

  // Slice with negative steps: columns reversed; every other column from the end.
  %s0 = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %e0 = onnx.Constant() {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %a1 = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %m1 = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %m2 = onnx.Constant() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %rev = onnx.Slice(%x, %s0, %e0, %a1, %m1) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
  %rev_u = tensor.cast %rev : tensor<2x3xf32> to tensor<*xf32>
  call @show(%rev_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3]
  // CHECK-NEXT: {{\[\[}}3, 2, 1],
  // CHECK-NEXT: [7, 5, 4]]
  %odd = onnx.Slice(%x, %s0, %e0, %a1, %m2) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %odd_u = tensor.cast %odd : tensor<2x2xf32> to tensor<*xf32>
  call @show(%odd_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}3, 1],
  // CHECK-NEXT: [7, 4]]

  // MatMul with broadcast batches: [2, 1, 2, 3] x [3, 3, 2] -> [2, 3, 2, 2].
  %ma = onnx.Constant() {value = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], [[[-1.0, 0.0, 1.0], [2.0, -2.0, 0.5]]]]> : tensor<2x1x2x3xf32>} : () -> tensor<2x1x2x3xf32>
  %mb = onnx.Constant() {value = dense<[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 2.0], [0.0, 0.0]], [[0.5, -1.0], [-0.5, 1.0], [1.0, 0.0]]]> : tensor<3x3x2xf32>} : () -> tensor<3x3x2xf32>
  %mm = onnx.MatMul(%ma, %mb) : (tensor<2x1x2x3xf32>, tensor<3x3x2xf32>) -> tensor<2x3x2x2xf32>
  %mm_u = tensor.cast %mm : tensor<2x3x2x2xf32> to tensor<*xf32>
  call @show(%mm_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3, 2, 2]
  // CHECK-NEXT: {{\[\[\[\[}}4, 5],
  // CHECK-NEXT: [10, 11]],
  // CHECK-NEXT: {{\[\[}}4, 5],
  // CHECK-NEXT: [13, 14]],
  // CHECK-NEXT: {{\[\[}}2.5, 1],
  // CHECK-NEXT: [5.5, 1]]],
  // CHECK-NEXT: {{\[\[\[}}0, 1],
  // CHECK-NEXT: [2.5, -1.5]],
  // CHECK-NEXT: {{\[\[}}-2, -1],
  // CHECK-NEXT: [2, -2]],
  // CHECK-NEXT: {{\[\[}}0.5, 1],
  // CHECK-NEXT: [2.5, -4]]]]

  // Transpose [2, 1, 2, 3] with perm [3, 0, 2, 1] -> [3, 2, 2, 1].
  %tr = onnx.Transpose(%ma) {perm = array<i64: 3, 0, 2, 1>} : (tensor<2x1x2x3xf32>) -> tensor<3x2x2x1xf32>
  %tr_u = tensor.cast %tr : tensor<3x2x2x1xf32> to tensor<*xf32>
  call @show(%tr_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [3, 2, 2, 1]
  // CHECK-NEXT: {{\[\[\[\[}}1],
  // CHECK-NEXT: [4]],
  // CHECK-NEXT: {{\[\[}}-1],
  // CHECK-NEXT: [2]]],
  // CHECK-NEXT: {{\[\[\[}}2],
  // CHECK-NEXT: [5]],
  // CHECK-NEXT: {{\[\[}}0],
  // CHECK-NEXT: [-2]]],
  // CHECK-NEXT: {{\[\[\[}}3],
  // CHECK-NEXT: [6]],
  // CHECK-NEXT: {{\[\[}}1],
  // CHECK-NEXT: [0.5]]]]

  // Gemm: 2 * x * W^T + 0.5 * b.
  %w = onnx.initializer "W" dense<[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]> : tensor<2x3xf32>
  %b = onnx.initializer "b" dense<[10.0, 20.0]> : tensor<2xf32>
  %gemm = onnx.Gemm(%x, %w, %b) {alpha = 2.0 : f32, beta = 0.5 : f32, transB = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %gemm_u = tensor.cast %gemm : tensor<2x2xf32> to tensor<*xf32>
  call @show(%gemm_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}1, 16],
  // CHECK-NEXT: [-1, 26]]

  // Shape arithmetic -> Reshape; Expand; Split; Concat; integer Div and Cast;
  // Sigmoid, HardSigmoid, Clip.
  %shape = onnx.Shape(%x) : (tensor<2x3xf32>) -> tensor<2xi64>
  %rshape = onnx.Concat(%a1, %shape) {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %x3 = onnx.Reshape(%x, %rshape) : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<1x2x3xf32>
  %eshape = onnx.Constant() {value = dense<[2, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %ex = onnx.Expand(%x3, %eshape) : (tensor<1x2x3xf32>, tensor<3xi64>) -> tensor<2x2x3xf32>
  %p0, %p1 = onnx.Split(%ex, %none) {axis = 0 : i64} : (tensor<2x2x3xf32>, none) -> (tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  %neg = onnx.Neg(%p1) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %cat = onnx.Concat(%neg, %p0) {axis = 2 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x6xf32>
  %xi = onnx.Cast(%cat) {to = 7 : i64} : (tensor<1x2x6xf32>) -> tensor<1x2x6xi64>
  %cat_u = tensor.cast %cat : tensor<1x2x6xf32> to tensor<*xf32>
  call @show(%cat_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 6]
  // CHECK-NEXT: {{\[\[\[}}-1, -2, -3, 1, 2, 3],
  // CHECK-NEXT: [-4, -5, -7, 4, 5, 7]]]
  %two = onnx.Constant() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %half = onnx.Div(%xi, %two) : (tensor<1x2x6xi64>, tensor<i64>) -> tensor<1x2x6xi64>
  %halff = onnx.Cast(%half) {to = 1 : i64} : (tensor<1x2x6xi64>) -> tensor<1x2x6xf32>
  %half_u = tensor.cast %halff : tensor<1x2x6xf32> to tensor<*xf32>
  call @show(%half_u) : (tensor<*xf32>) -> ()
  // Integer division truncates toward zero.
  // CHECK: sizes = [1, 2, 6]
  // CHECK-NEXT: {{\[\[\[}}0, -1, -1, 0, 1, 1],
  // CHECK-NEXT: [-2, -2, -3, 2, 2, 3]]]
  %sig = onnx.Sigmoid(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %hs = onnx.HardSigmoid(%sig) {alpha = 2.0 : f32, beta = -0.75 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %lo = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %clip = onnx.Clip(%hs, %lo, %hi) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  %clip_u = tensor.cast %clip : tensor<2x3xf32> to tensor<*xf32>
  call @show(%clip_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3]
  // CHECK-NEXT: {{\[\[}}0.712117, 0.9, 0.9],
  // CHECK-NEXT: [0.9, 0.9, 0.9]]

  // A Sigmoid node keeps relative accuracy down to tiny outputs (the
  // reference form; 0.5 + 0.5 tanh(x / 2) would give 0 below about -17).
  %far = onnx.Constant() {value = dense<[-40.0, -20.0, 0.0, 20.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %tiny = onnx.Sigmoid(%far) : (tensor<4xf32>) -> tensor<4xf32>
  %tiny_u = tensor.cast %tiny : tensor<4xf32> to tensor<*xf32>
  call @show(%tiny_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [4]
  // CHECK-NEXT: [4.24835e-18, 2.06115e-09, 0.5, 1]
  return
}
