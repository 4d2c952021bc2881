// RUN: lstm-opt %s --convert-rnn-to-linalg=iree-dispatch=true -verify-diagnostics

// iree-dispatch builds IREE's ops, which need unregistered dialects allowed.
func.func @iree_dispatch_unregistered(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  // expected-error @below {{convert-rnn-to-linalg: iree-dispatch writes IREE's flow.dispatch.region, which this context does not know: allow unregistered dialects (--allow-unregistered-dialect)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}
