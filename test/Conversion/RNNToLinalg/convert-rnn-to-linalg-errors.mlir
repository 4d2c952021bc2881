// RUN: lstm-opt %s --convert-rnn-to-linalg --split-input-file -verify-diagnostics

func.func @dynamic(%x: tensor<?x2x5xf32>) -> tensor<?x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-linalg: needs a static f32 [T, B, I] input; specialise the input shapes first}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<?x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<?x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<?x1x2x4xf32>
}

// -----

func.func @weights_not_constant(%x: tensor<3x2x5xf32>, %w: tensor<1x4x5xf32>) -> tensor<3x1x2x4xf32> {
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-linalg: needs constant f32 weights}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @int8(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-linalg: lowers f32 layers only; this layer asks for precision int8}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, lstm_opt.precision = "int8"} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

func.func @cell(%x: tensor<2x5xf32>, %h: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<4xf32>
  // expected-error @below {{convert-rnn-to-linalg: a single cell must be rolled into a layer first (run rnn-roll-time-loop)}}
  %hn = rnn.rnn_cell %x, %h, %w, %r, %b, %b : (tensor<2x5xf32>, tensor<2x4xf32>, tensor<4x5xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %hn : tensor<2x4xf32>
}
