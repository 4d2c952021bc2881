// RUN: lstm-opt %s --convert-rnn-to-gpu -verify-diagnostics | FileCheck %s
// In the pipeline the layer goes to the CPU kernels.
// RUN: sed 's/expected-remark/remark/' %s | lstm-opt - --lstm-opt-cpu="gpu-kernels-on-cpu=1 recognize=0" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: FileCheck %s --check-prefix=LLVM < %t.mlir
// PIPE: remark: convert-rnn-to-gpu: layer left for the CPU kernels
// PIPE: remark: CPU kernel:
// LLVM: llvm.func @lens(

// A layer the GPU kernels cannot run is left as it is, with a remark, for
// convert-rnn-to-cpu (rnn::remarkLayerLeftForCPU, as convert-rnn-to-cudnn).
// CHECK-LABEL: func.func @lens(
// CHECK: rnn.sequence rnn forward {{.*}} lens(
// CHECK-NOT: gpu.launch_func
func.func @lens(%x: tensor<5x2x3xf32>, %lens: tensor<2xi32>) -> tensor<5x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-remark @below {{convert-rnn-to-gpu: layer left for the CPU kernels: the GPU kernels cannot skip the padded steps of short rows (sequence_lens)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b lens(%lens) {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<2xi32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<5x1x2x4xf32>
}

// CHECK-LABEL: func.func @peephole(
// CHECK: rnn.sequence lstm forward {{.*}} peephole(
func.func @peephole(%x: tensor<5x2x3xf32>) -> tensor<5x1x2x4xf32> {
  %w = onnx.initializer "Wl" dense<0.5> : tensor<1x16x3xf32>
  %r = onnx.initializer "Rl" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "Bl" dense<0.125> : tensor<1x16xf32>
  %p = onnx.initializer "Pl" dense<0.5> : tensor<1x12xf32>
  // expected-remark @below {{convert-rnn-to-gpu: layer left for the CPU kernels: the GPU kernels cannot run a peephole LSTM}}
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b peephole(%p) {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<5x1x2x4xf32>
}
