"""A hostile graph for the shape arithmetic: four Concats, each of K copies
of the one before, make a shape list of K^4 entries (13 million for K = 60)
from a few bytes, which a Reshape then takes as its target.

Usage: make_concat_blowup.py K > blowup.mlir
"""
import sys

k = int(sys.argv[1])
print("func.func @blowup(%x: tensor<2x3xf32>) -> tensor<*xf32> {")
print('  %c0 = onnx.initializer "c0" dense<[1]> : tensor<1xi64>')
prev, prev_type = "%c0", "tensor<1xi64>"
for level in range(1, 5):
    print(f"  %c{level} = onnx.Concat({', '.join([prev] * k)}) {{axis = 0 : i64}} : "
          f"({', '.join([prev_type] * k)}) -> tensor<*xi64>")
    prev, prev_type = f"%c{level}", "tensor<*xi64>"
print(f"  %r = onnx.Reshape(%x, {prev}) : (tensor<2x3xf32>, tensor<*xi64>) -> tensor<*xf32>")
print("  %y = onnx.Relu(%r) : (tensor<*xf32>) -> tensor<*xf32>")
print("  return %y : tensor<*xf32>")
print("}")
