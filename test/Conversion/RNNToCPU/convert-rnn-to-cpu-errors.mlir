// RUN: lstm-opt %s --convert-rnn-to-cpu --split-input-file -verify-diagnostics

func.func @dynamic(%x: tensor<?x2x3xf32>) -> tensor<?x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cpu: needs a static f32 [T, B, I] input; specialise the input shapes first (lstm-run does)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<?x1x2x4xf32>
}

// -----

func.func @weights_not_constant(%x: tensor<3x2x3xf32>, %w: tensor<1x4x3xf32>) -> tensor<3x1x2x4xf32> {
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cpu: needs constant f32 weights}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @bad_activation(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cpu: unsupported activation 'gelu'}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, activations = ["Gelu"]} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @lone_cell(%x: tensor<2x3xf32>, %h: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<4xf32>
  // expected-error @below {{convert-rnn-to-cpu: a single cell must be rolled into a layer first (run rnn-roll-time-loop)}}
  %h1 = rnn.rnn_cell %x, %h, %w, %r, %b, %b : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %h1 : tensor<2x4xf32>
}

// -----

func.func @recurrence_without_projection(%p: tensor<1x3x2x4xf32>) -> tensor<3x1x2x4xf32> {
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cpu: the recurrence's input projection must come from rnn.input_projection}}
  %y, %hn = rnn.recurrence rnn forward %p, %r, %b {hidden_size = 4 : i64} : (tensor<1x3x2x4xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @bad_precision(%x: tensor<3x2x3xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-cpu: lstm_opt.precision must be "f32", "bf16" or "int8", not "int4"}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, lstm_opt.precision = "int4"} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}
