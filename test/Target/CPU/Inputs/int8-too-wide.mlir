// Input for precision-int8.test: a layer with 70000 inputs.
func.func @wide(%x: tensor<1x1x70000xf32>) -> tensor<1x1x1x1xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x1x70000xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x1x1xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x1xf32>
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 1 : i64} : (tensor<1x1x70000xf32>, tensor<1x1x70000xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
  return %y : tensor<1x1x1x1xf32>
}
