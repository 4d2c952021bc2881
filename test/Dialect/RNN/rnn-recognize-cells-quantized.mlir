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
