// RUN: lstm-opt %s --convert-rnn-to-gpu --split-input-file -verify-diagnostics
// RUN: not lstm-opt %s --convert-rnn-to-gpu=weights=global --split-input-file 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: convert-rnn-to-gpu: weights must be registers or shared, not 'global'
// RUN: not lstm-opt %s --convert-rnn-to-gpu=precision=f16 --split-input-file 2>&1 | FileCheck %s --check-prefix=PREC
// PREC: convert-rnn-to-gpu: precision must be f32 or bf16, not 'f16'

func.func @dynamic(%x: tensor<?x2x3xf32>) -> tensor<?x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-gpu: needs a static f32 [T, B, I] input; specialise the input shapes first (--input-shape)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<?x1x2x4xf32>
}

// -----

func.func @weights_not_constant(%x: tensor<3x2x3xf32>, %w: tensor<1x4x3xf32>) -> tensor<3x1x2x4xf32> {
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-gpu: needs constant f32 weights}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @bad_activation(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-gpu: unsupported activation 'gelu'}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, activations = ["Gelu"]} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}
