// RUN: lstm-opt %s -split-input-file -rnn-recognize-cells="import-quantized=true quantized-precision=int8" -verify-diagnostics | FileCheck %s

// The MatMuls of onnxruntime.quantization's static forms, as the compiled
// targets import them (import-quantized): each is read as x · W with W
// dequantized exactly, (q - zero point) * scale per column or row, and the
// cell asks for int8; the activation's static quantization and the
// product's requantization are the int8 kernels' (per row and step).
// Anything else is refused with a remark. One LSTM step each (H = 1, I = 2),
// its x · W quantized, h · R in f32.

// QOperator: QuantizeLinear + QLinearMatMul + DequantizeLinear. W = wq *
// [0.5, 0.25, 1, 2] per column, kept transposed ([4H, I]) by the cell.
// CHECK-LABEL: func.func @qoperator_lstm_step
// CHECK: onnx.initializer "lstm_W" dense<{{\[}}[5.000000e-01, 2.500000e+00], [-5.000000e-01, 1.500000e+00], [3.000000e+00, -7.000000e+00], [8.000000e+00, 1.600000e+01]]> : tensor<4x2xf32>
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2
// CHECK-SAME: lstm_opt.precision = "int8"
// CHECK-NOT: QLinearMatMul
// CHECK-NOT: QuantizeLinear
func.func @qoperator_lstm_step(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<[0.5, 0.25, 1.0, 2.0]> : tensor<4xf32>
  %wz = onnx.initializer "wz" dense<0> : tensor<4xi8>
  %ys = onnx.initializer "ys" dense<0.05> : tensor<f32>
  %yz = onnx.initializer "yz" dense<120> : tensor<ui8>
  %xq = onnx.node "QuantizeLinear"(%x, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %yq = onnx.node "QLinearMatMul"(%xq, %xs, %xz, %wq, %ws, %wz, %ys, %yz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x4xi8>, tensor<4xf32>, tensor<4xi8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  %gx = onnx.node "DequantizeLinear"(%yq, %ys, %yz) : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// QDQ over the MatMul's input, weight and product, the weight per row
// (DequantizeLinear axis 0): wq * [0.5, 0.25] per row.
// CHECK-LABEL: func.func @qdq_lstm_step
// CHECK: onnx.initializer "lstm_W" dense<{{\[}}[5.000000e-01, 1.250000e+00], [-1.000000e+00, 1.500000e+00], [1.500000e+00, -1.750000e+00], [2.000000e+00, 2.000000e+00]]> : tensor<4x2xf32>
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2
// CHECK-SAME: lstm_opt.precision = "int8"
// CHECK-NOT: DequantizeLinear
func.func @qdq_lstm_step(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<[0.5, 0.25]> : tensor<2xf32>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) {attrs = {axis = 0 : i64}} : (tensor<2x4xi8>, tensor<2xf32>) -> tensor<2x4xf32>
  %xq = onnx.node "QuantizeLinear"(%x, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %xd = onnx.node "DequantizeLinear"(%xq, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %p = onnx.MatMul(%xd, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %pq = onnx.node "QuantizeLinear"(%p, %xs, %xz) : (tensor<1x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  %gx = onnx.node "DequantizeLinear"(%pq, %xs, %xz) : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Only the weight quantized: x · W is exact in f32, and the cell asks for
// no precision.
// CHECK-LABEL: func.func @qdq_weight_only
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2
// CHECK-NOT: lstm_opt.precision
// CHECK: return
func.func @qdq_weight_only(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<f32>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) : (tensor<2x4xi8>, tensor<f32>) -> tensor<2x4xf32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// x dequantized with another scale than it was quantized with: not a
// rounding of x.
// CHECK-LABEL: func.func @qdq_mismatched_scales
// CHECK-NOT: rnn.lstm_cell
func.func @qdq_mismatched_scales(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<f32>
  %xs2 = onnx.initializer "xs2" dense<0.02> : tensor<f32>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) : (tensor<2x4xi8>, tensor<f32>) -> tensor<2x4xf32>
  %xq = onnx.node "QuantizeLinear"(%x, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %xd = onnx.node "DequantizeLinear"(%xq, %xs2, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %gx = onnx.MatMul(%xd, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: a quantized MatMul's input is not a QuantizeLinear and DequantizeLinear pair with one scale and zero point}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Weights quantized in blocks (block_size, opset 21).
// CHECK-LABEL: func.func @qdq_blocked_weight
// CHECK-NOT: rnn.lstm_cell
func.func @qdq_blocked_weight(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<[[0.5, 0.25, 1.0, 2.0]]> : tensor<1x4xf32>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) {attrs = {axis = 0 : i64, block_size = 2 : i64}} : (tensor<2x4xi8>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: a quantized MatMul's weight is quantized in blocks (block_size)}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A scale per element: neither per tensor nor per column or row.
// CHECK-LABEL: func.func @qdq_scale_per_element
// CHECK-NOT: rnn.lstm_cell
func.func @qdq_scale_per_element(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<8xf32>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) : (tensor<2x4xi8>, tensor<8xf32>) -> tensor<2x4xf32>
  %gx = onnx.MatMul(%x, %w) : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: a quantized MatMul's weight: its scale or zero point is neither per tensor nor per index of its axis}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A QLinearMatMul whose input does not come from a QuantizeLinear (made its
// QDQ form first: a DequantizeLinear of a constant input).
// CHECK-LABEL: func.func @qoperator_unquantized_input
// CHECK-NOT: rnn.lstm_cell
func.func @qoperator_unquantized_input(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<f32>
  %wz = onnx.initializer "wz" dense<0> : tensor<i8>
  %xu = onnx.initializer "xu" dense<3> : tensor<1x2xui8>
  %yq = onnx.node "QLinearMatMul"(%xu, %xs, %xz, %wq, %ws, %wz, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  %gx = onnx.node "DequantizeLinear"(%yq, %xs, %xz) : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: a quantized MatMul's input is not a QuantizeLinear and DequantizeLinear pair with one scale and zero point}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// The QOperator format's other ops (com.microsoft's QLinearAdd here, its
// result untyped as the importer leaves it) become their QDQ form: each input
// dequantized, the float op, the result quantized with the output's scale
// and zero point (of the input's type where the zero point is absent).
// CHECK-LABEL: func.func @qlinear_add_expanded
// CHECK-DAG: %[[A:.*]] = onnx.node "DequantizeLinear"(%arg0, {{.*}}) : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
// CHECK-DAG: %[[B:.*]] = onnx.node "DequantizeLinear"(%arg1, {{.*}}) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
// CHECK: %[[S:.*]] = onnx.Add(%[[A]], %[[B]]) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: onnx.node "QuantizeLinear"(%[[S]], {{.*}}) : (tensor<2x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x4xi8>
// CHECK-NOT: QLinearAdd
func.func @qlinear_add_expanded(%a: tensor<2x4xi8>, %b: tensor<4xi8>) -> !onnx.unknown {
  %s = onnx.initializer "s" dense<0.1> : tensor<f32>
  %z = onnx.initializer "z" dense<3> : tensor<i8>
  %cs = onnx.initializer "cs" dense<0.2> : tensor<f32>
  %y = onnx.node "QLinearAdd"(%a, %s, %z, %b, %s, %z, %cs) {domain = "com.microsoft"} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<4xi8>, tensor<f32>, tensor<i8>, tensor<f32>) -> !onnx.unknown
  return %y : !onnx.unknown
}

// -----

// com.microsoft.QGemm (quantize_static's QOperator form of a Gemm: PyTorch's
// nn.LSTMCell exports its products as Gemm(x, W, b, transB=1)): made the QDQ
// form of the same Gemm, W [4H, I] dequantized per output column (its axis
// 0), the int32 bias C dequantized with xs * ws per column: [100, 200, -300,
// 400] * 0.01 * [0.5, 0.25, 1, 2]. A bias is C's (the cell's first).
// CHECK-LABEL: func.func @qgemm_lstm_step
// CHECK-DAG: %[[W:.*]] = onnx.initializer "W_dequantized" dense<{{\[}}[5.000000e-01, 2.500000e+00], [-5.000000e-01, 1.500000e+00], [3.000000e+00, -7.000000e+00], [8.000000e+00, 1.600000e+01]]> : tensor<4x2xf32>
// CHECK-DAG: %[[B:.*]] = onnx.initializer "C_dequantized" dense<[5.000000e-01, 5.000000e-01, -3.000000e+00, 8.000000e+00]> : tensor<4xf32>
// CHECK: rnn.lstm_cell %arg0, %arg1, %arg2, %[[W]], %{{.*}}, %[[B]],
// CHECK-SAME: lstm_opt.precision = "int8"
// CHECK-NOT: QGemm
func.func @qgemm_lstm_step(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, 5], [-2, 6], [3, -7], [4, 8]]> : tensor<4x2xi8>
  %cq = onnx.initializer "cq" dense<[100, 200, -300, 400]> : tensor<4xi32>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %ws = onnx.initializer "ws" dense<[0.5, 0.25, 1.0, 2.0]> : tensor<4xf32>
  %wz = onnx.initializer "wz" dense<0> : tensor<4xi8>
  %ys = onnx.initializer "ys" dense<0.05> : tensor<f32>
  %yz = onnx.initializer "yz" dense<120> : tensor<ui8>
  %xq = onnx.node "QuantizeLinear"(%x, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %yq = onnx.node "QGemm"(%xq, %xs, %xz, %wq, %ws, %wz, %cq, %ys, %yz) {domain = "com.microsoft", attrs = {transB = 1 : i64}} : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>, tensor<4x2xi8>, tensor<4xf32>, tensor<4xi8>, tensor<4xi32>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  %gx = onnx.node "DequantizeLinear"(%yq, %ys, %yz) : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %gh = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Gemms of one weight at three steps (QDQ), each with its own int32 bias,
// quantized to its input's scale: the second's ([167, 333, -500, 667] *
// 0.003) is within the two half steps of the first's ([100, 200, -300, 400]
// * 0.005) everywhere and reads the first's constant, so that the steps can
// make one layer; the third's (its first element 200 * 0.005) is not and
// keeps its own.
// CHECK-LABEL: func.func @qdq_gemm_biases
// CHECK-DAG: %[[B1:.*]] = onnx.initializer "C_dequantized" dense<[5.000000e-01, 1.000000e+00, -1.500000e+00, 2.000000e+00]>
// CHECK-DAG: %[[B3:.*]] = onnx.initializer "C_dequantized_{{[0-9]+}}" dense<[1.000000e+00, 1.000000e+00, -1.500000e+00, 2.000000e+00]>
// CHECK: rnn.lstm_cell %arg0, %arg3, %arg4, %{{.*}}, %{{.*}}, %[[B1]],
// CHECK: rnn.lstm_cell %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B1]],
// CHECK: rnn.lstm_cell %arg2, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B3]],
func.func @qdq_gemm_biases(%x1: tensor<1x2xf32>, %x2: tensor<1x2xf32>, %x3: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, 5], [-2, 6], [3, -7], [4, 8]]> : tensor<4x2xi8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<f32>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %w = onnx.node "DequantizeLinear"(%wq, %ws) : (tensor<4x2xi8>, tensor<f32>) -> tensor<4x2xf32>
  %cq1 = onnx.initializer "cq1" dense<[100, 200, -300, 400]> : tensor<4xi32>
  %cs1 = onnx.initializer "cs1" dense<0.005> : tensor<f32>
  %b1 = onnx.node "DequantizeLinear"(%cq1, %cs1) : (tensor<4xi32>, tensor<f32>) -> tensor<4xf32>
  %xq1 = onnx.node "QuantizeLinear"(%x1, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %xd1 = onnx.node "DequantizeLinear"(%xq1, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %gx1 = onnx.Gemm(%xd1, %w, %b1) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh1 = onnx.MatMul(%h, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g1 = onnx.Add(%gx1, %gh1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i1, %f1, %cc1, %o1 = onnx.Split(%g1, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si1 = onnx.Sigmoid(%i1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf1 = onnx.Sigmoid(%f1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg1 = onnx.Tanh(%cc1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so1 = onnx.Sigmoid(%o1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc1 = onnx.Mul(%sf1, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig1 = onnx.Mul(%si1, %tg1) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cn1 = onnx.Add(%fc1, %ig1) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc1 = onnx.Tanh(%cn1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %hn1 = onnx.Mul(%so1, %tc1) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cq2 = onnx.initializer "cq2" dense<[167, 333, -500, 667]> : tensor<4xi32>
  %cs2 = onnx.initializer "cs2" dense<0.003> : tensor<f32>
  %b2 = onnx.node "DequantizeLinear"(%cq2, %cs2) : (tensor<4xi32>, tensor<f32>) -> tensor<4xf32>
  %xq2 = onnx.node "QuantizeLinear"(%x2, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %xd2 = onnx.node "DequantizeLinear"(%xq2, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %gx2 = onnx.Gemm(%xd2, %w, %b2) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh2 = onnx.MatMul(%hn1, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g2 = onnx.Add(%gx2, %gh2) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i2, %f2, %cc2, %o2 = onnx.Split(%g2, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si2 = onnx.Sigmoid(%i2) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf2 = onnx.Sigmoid(%f2) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg2 = onnx.Tanh(%cc2) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so2 = onnx.Sigmoid(%o2) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc2 = onnx.Mul(%sf2, %cn1) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig2 = onnx.Mul(%si2, %tg2) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cn2 = onnx.Add(%fc2, %ig2) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc2 = onnx.Tanh(%cn2) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %hn2 = onnx.Mul(%so2, %tc2) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cq3 = onnx.initializer "cq3" dense<[200, 200, -300, 400]> : tensor<4xi32>
  %cs3 = onnx.initializer "cs3" dense<0.005> : tensor<f32>
  %b3 = onnx.node "DequantizeLinear"(%cq3, %cs3) : (tensor<4xi32>, tensor<f32>) -> tensor<4xf32>
  %xq3 = onnx.node "QuantizeLinear"(%x3, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %xd3 = onnx.node "DequantizeLinear"(%xq3, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %gx3 = onnx.Gemm(%xd3, %w, %b3) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %gh3 = onnx.MatMul(%hn2, %r) : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g3 = onnx.Add(%gx3, %gh3) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i3, %f3, %cc3, %o3 = onnx.Split(%g3, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si3 = onnx.Sigmoid(%i3) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf3 = onnx.Sigmoid(%f3) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg3 = onnx.Tanh(%cc3) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so3 = onnx.Sigmoid(%o3) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc3 = onnx.Mul(%sf3, %cn2) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig3 = onnx.Mul(%si3, %tg3) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cn3 = onnx.Add(%fc3, %ig3) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc3 = onnx.Tanh(%cn3) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %hn3 = onnx.Mul(%so3, %tc3) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %hn3, %cn3 : tensor<1x1xf32>, tensor<1x1xf32>
}
