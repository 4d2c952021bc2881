"""A hostile chain for the shape inference: N Reshapes, each to the shape
of the one before (Reshape(x, Gather(Shape(x)))), every value unranked and a
graph output (so no type is refined in place and each rule's integer operand
starts a nested inference over the whole chain above it).

Usage: make_reshape_chain.py N > chain.mlir
"""
import sys

n = int(sys.argv[1])
lines, rets = [], []
prev, prev_type = "%x0", "tensor<2x3xf32>"
for i in range(1, n + 1):
    lines.append(f"  %s{i} = onnx.Shape({prev}) : ({prev_type}) -> tensor<*xi64>")
    lines.append(f"  %g{i} = onnx.Gather(%s{i}, %i0) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>")
    lines.append(f"  %x{i} = onnx.Reshape({prev}, %g{i}) : ({prev_type}, tensor<*xi64>) -> tensor<*xf32>")
    prev, prev_type = f"%x{i}", "tensor<*xf32>"
    rets.append(prev)
types = ", ".join(["tensor<*xf32>"] * n)
print(f"func.func @chain(%x0: tensor<2x3xf32>) -> ({types}) {{")
print('  %i0 = onnx.initializer "i0" dense<[0, 1]> : tensor<2xi64>')
print("\n".join(lines))
print(f"  return {', '.join(rets)} : {types}")
print("}")
