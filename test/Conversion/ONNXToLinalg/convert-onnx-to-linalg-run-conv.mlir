// RUN: lstm-opt %s --convert-onnx-to-linalg \
// RUN: | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:     --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | %mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// REQUIRES: mlir-runner

// The operators a whole real model (silero-vad) needs around its recurrent
// layers: Pad (constant, reflect, edge), Conv (bias, pads, strides,
// dilations, groups, auto_pad), Pow and ReduceMean (opset 18: axes as an
// input). Expected values are ONNX Runtime 1.32's on the same graph.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @show(%t: tensor<*xf32>) {
  call @printMemrefF32(%t) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %none = onnx.none
  %x = onnx.Constant() {value = dense<[[[1.0, 2.0, 3.0, 4.0, 5.0]]]> : tensor<1x1x5xf32>} : () -> tensor<1x1x5xf32>
  %x2 = onnx.Constant() {value = dense<[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]> : tensor<1x2x4xf32>} : () -> tensor<1x2x4xf32>
  %pads = onnx.Constant() {value = dense<[0, 0, 2, 0, 0, 1]> : tensor<6xi64>} : () -> tensor<6xi64>

  %pr = onnx.node "Pad"(%x, %pads) {domain = "", attrs = {mode = "reflect"}} : (tensor<1x1x5xf32>, tensor<6xi64>) -> tensor<1x1x8xf32>
  %pr_u = tensor.cast %pr : tensor<1x1x8xf32> to tensor<*xf32>
  call @show(%pr_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 1, 8]
  // CHECK-NEXT: {{\[\[\[}}3, 2, 1, 2, 3, 4, 5, 4]]]
  %pe = onnx.node "Pad"(%x, %pads) {domain = "", attrs = {mode = "edge"}} : (tensor<1x1x5xf32>, tensor<6xi64>) -> tensor<1x1x8xf32>
  %pe_u = tensor.cast %pe : tensor<1x1x8xf32> to tensor<*xf32>
  call @show(%pe_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 1, 8]
  // CHECK-NEXT: {{\[\[\[}}1, 1, 1, 2, 3, 4, 5, 5]]]
  %cv = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %pc = onnx.node "Pad"(%x, %pads, %cv) {domain = ""} : (tensor<1x1x5xf32>, tensor<6xi64>, tensor<f32>) -> tensor<1x1x8xf32>
  %pc_u = tensor.cast %pc : tensor<1x1x8xf32> to tensor<*xf32>
  call @show(%pc_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 1, 8]
  // CHECK-NEXT: {{\[\[\[}}0.5, 0.5, 1, 2, 3, 4, 5, 0.5]]]

  %w = onnx.Constant() {value = dense<[[[1.0, 0.0, -1.0]], [[0.5, 0.5, 0.5]]]> : tensor<2x1x3xf32>} : () -> tensor<2x1x3xf32>
  %b = onnx.Constant() {value = dense<[0.1, -0.1]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = onnx.node "Conv"(%x, %w, %b) {domain = "", attrs = {pads = array<i64: 1, 1>, strides = array<i64: 2>}} : (tensor<1x1x5xf32>, tensor<2x1x3xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  %c_u = tensor.cast %c : tensor<1x2x3xf32> to tensor<*xf32>
  call @show(%c_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 3]
  // CHECK-NEXT: {{\[\[\[}}-1.9, -1.9, 4.1],
  // CHECK-NEXT: [1.4, 4.4, 4.4]]]
  %wg = onnx.Constant() {value = dense<[[[1.0, 2.0]], [[3.0, -1.0]]]> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
  %cg = onnx.node "Conv"(%x2, %wg) {domain = "", attrs = {group = 2 : i64, dilations = array<i64: 2>}} : (tensor<1x2x4xf32>, tensor<2x1x2xf32>) -> tensor<1x2x2xf32>
  %cg_u = tensor.cast %cg : tensor<1x2x2xf32> to tensor<*xf32>
  call @show(%cg_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 2]
  // CHECK-NEXT: {{\[\[\[}}7, 10],
  // CHECK-NEXT: [8, 10]]]
  %cs = onnx.node "Conv"(%x, %w) {domain = "", attrs = {auto_pad = "SAME_UPPER"}} : (tensor<1x1x5xf32>, tensor<2x1x3xf32>) -> tensor<1x2x5xf32>
  %cs_u = tensor.cast %cs : tensor<1x2x5xf32> to tensor<*xf32>
  call @show(%cs_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 5]
  // CHECK-NEXT: {{\[\[\[}}-2, -2, -2, -2, 4],
  // CHECK-NEXT: [1.5, 3, 4.5, 6, 4.5]]]

  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %sq = onnx.node "Pow"(%x, %two) {domain = ""} : (tensor<1x1x5xf32>, tensor<f32>) -> tensor<1x1x5xf32>
  %sq_u = tensor.cast %sq : tensor<1x1x5xf32> to tensor<*xf32>
  call @show(%sq_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 1, 5]
  // CHECK-NEXT: {{\[\[\[}}1, 4, 9, 16, 25]]]
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %rt = onnx.node "Pow"(%x, %half) {domain = ""} : (tensor<1x1x5xf32>, tensor<f32>) -> tensor<1x1x5xf32>
  %rt_u = tensor.cast %rt : tensor<1x1x5xf32> to tensor<*xf32>
  call @show(%rt_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 1, 5]
  // CHECK-NEXT: {{\[\[\[}}1, 1.41421, 1.73205, 2, 2.23607]]]

  %ax = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %rm = onnx.node "ReduceMean"(%x2, %ax) {domain = "", attrs = {keepdims = 0 : i64}} : (tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %rm_u = tensor.cast %rm : tensor<1x2xf32> to tensor<*xf32>
  call @show(%rm_u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2]
  // CHECK-NEXT: {{\[\[}}2.5, 6.5]]
  return
}
