// RUN: lstm-opt %s --convert-onnx-to-linalg \
// RUN: | %mlir-opt --allow-unregistered-dialect \
// RUN:     --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:     --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | sed -e 's/ attributes {onnx.opset_import[^}]*}//' \
// RUN: | %mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// REQUIRES: mlir-runner

// Before opset 13, Softmax/LogSoftmax coerce the input to 2-D at `axis`
// (default 1): each [2, 2] block of x[i] is normalised as a whole. (sed
// drops the module's #onnx.opset attribute, which mlir-runner cannot parse.)

module attributes {onnx.opset_import = [#onnx.opset<"", 11>]} {
  func.func private @printMemrefF32(tensor<*xf32>)

  func.func @main() {
    %x = onnx.Constant() {value = dense<[[[0.0, 1.0], [2.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]]]> : tensor<2x2x2xf32>} : () -> tensor<2x2x2xf32>
    %s = onnx.Softmax(%x) : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %l = onnx.LogSoftmax(%x) {axis = 2 : i64} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %su = tensor.cast %s : tensor<2x2x2xf32> to tensor<*xf32>
    call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
    // CHECK: sizes = [2, 2, 2]
    // CHECK-NEXT: {{\[\[\[}}0.0320586, 0.0871443],
    // CHECK-NEXT: [0.236883, 0.643914]],
    // CHECK-NEXT: {{\[\[}}0.25, 0.25],
    // CHECK-NEXT: [0.25, 0.25]]]
    %lu = tensor.cast %l : tensor<2x2x2xf32> to tensor<*xf32>
    call @printMemrefF32(%lu) : (tensor<*xf32>) -> ()
    // axis = 2 is the last axis: pairs.
    // CHECK: sizes = [2, 2, 2]
    // CHECK-NEXT: {{\[\[\[}}-1.31326, -0.313262],
    // CHECK-NEXT: [-1.31326, -0.313262]],
    // CHECK-NEXT: {{\[\[}}-0.693147, -0.693147],
    // CHECK-NEXT: [-0.693147, -0.693147]]]
    return
  }
}
