// RUN: lstm-opt %s --convert-rnn-to-cudnn --split-input-file -verify-diagnostics

func.func @reverse(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-remark @below {{convert-rnn-to-cudnn: layer left for the CPU kernels: cuDNN has no reverse-only direction}}
  %y, %h = rnn.sequence rnn reverse %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @gru_reset_before(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x12x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x12x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x12xf32>
  // expected-remark @below {{convert-rnn-to-cudnn: layer left for the CPU kernels: cuDNN's GRU applies the reset after the recurrent GEMM (linear_before_reset = 1) only}}
  %y, %h = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @activation(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  // expected-remark @below {{convert-rnn-to-cudnn: layer left for the CPU kernels: cuDNN runs the default activations only}}
  %y, %h, %c = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, activations = ["HardSigmoid", "Tanh", "Tanh"]} : (tensor<3x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @bad_option_free(%x: tensor<?x2x3xf32>) -> tensor<?x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cudnn: needs a static f32 [T, B, I] input; specialise the input shapes first}}
  %y, %h = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<?x1x2x4xf32>
}

// -----

func.func @lstm_peephole(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  %p = onnx.initializer "P" dense<0.5> : tensor<1x12xf32>
  // expected-remark @below {{convert-rnn-to-cudnn: layer left for the CPU kernels: cuDNN cannot run a peephole LSTM}}
  %y, %h, %c = rnn.sequence lstm forward %x, %w, %r, %b, %b peephole(%p) {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @lstm_input_forget(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  // expected-remark @below {{convert-rnn-to-cudnn: layer left for the CPU kernels: cuDNN cannot run an LSTM with coupled input and forget gates (input_forget)}}
  %y, %h, %c = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, input_forget} : (tensor<3x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}
