// RUN: rm -rf %t && mkdir -p %t
// RUN: lstm-opt %s --allow-unregistered-dialect --convert-rnn-to-iree-kernels="object-dir=%t" --split-input-file -verify-diagnostics
// RUN: not lstm-opt %s --convert-rnn-to-iree-kernels="object-dir=%t" --split-input-file 2>&1 | FileCheck %s --check-prefix=REGISTERED
// RUN: not lstm-opt %s --allow-unregistered-dialect --convert-rnn-to-iree-kernels --split-input-file 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not lstm-opt %s --allow-unregistered-dialect --convert-rnn-to-iree-kernels="object-dir=%t precision=f16" --split-input-file 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not lstm-opt %s --allow-unregistered-dialect --convert-rnn-to-iree-kernels="object-dir=%t target-cpu=nosuchcpu" --split-input-file 2>&1 | FileCheck %s --check-prefix=CPU
// REGISTERED: error: convert-rnn-to-iree-kernels writes IREE's flow and stream ops, which needs unregistered dialects allowed
// NODIR: error: convert-rnn-to-iree-kernels: object-dir is required
// PRECISION: error: convert-rnn-to-iree-kernels: precision must be f32, bf16 or int8, not 'f16'
// CPU: error: convert-rnn-to-iree-kernels: {{.*}}nosuchcpu

// Layers the kernels cannot take stay as they are (convert-rnn-to-linalg
// writes them), with a remark naming the reason.

func.func @weights_are_inputs(%x: tensor<3x2x3xf32>, %w: tensor<1x4x3xf32>) -> tensor<3x1x2x4xf32> {
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-remark @below {{convert-rnn-to-iree-kernels: kept for IREE's own code generation: its weights are not constants (a graph input or a block argument)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @dynamic_input(%x: tensor<?x2x3xf32>) -> tensor<?x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-remark @below {{convert-rnn-to-iree-kernels: kept for IREE's own code generation: its input has no static shape}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<?x1x2x4xf32>
}

// -----

// Weights computed by an op convert-rnn-to-cpu does not fold: its error is
// the reason.
func.func @weights_transposed(%x: tensor<3x1x2xf32>) -> tensor<3x1x1x5xf32> {
  %wt = onnx.initializer "Wt" dense<0.5> : tensor<1x2x5xf32>
  %w = onnx.Transpose(%wt) {perm = array<i64: 0, 2, 1>} : (tensor<1x2x5xf32>) -> tensor<1x5x2xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x5x5xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x5xf32>
  // expected-remark @below {{convert-rnn-to-iree-kernels: kept for IREE's own code generation: convert-rnn-to-cpu: needs constant f32 weights}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 5 : i64} : (tensor<3x1x2xf32>, tensor<1x5x2xf32>, tensor<1x5x5xf32>, tensor<1x5xf32>, tensor<1x5xf32>) -> (tensor<3x1x1x5xf32>, tensor<1x1x5xf32>)
  return %y : tensor<3x1x1x5xf32>
}
