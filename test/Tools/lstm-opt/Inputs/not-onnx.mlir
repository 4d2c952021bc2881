// Input of export-errors.test: an arith op cannot be written to ONNX.
module {
  func.func @g(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
    %s = onnx.Sigmoid(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %c = arith.constant dense<1.0> : tensor<4xf32>
    %y = arith.addf %s, %c : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
