// RUN: lstm-opt %s -split-input-file -rnn-recognize-cells -verify-diagnostics | FileCheck %s

// Near misses are left alone, with a remark naming the node and the reason.

// The output gate uses Tanh where an LSTM uses the gate activation.
// CHECK-LABEL: func.func @swapped_activation
// CHECK-NOT: rnn.lstm_cell
// CHECK: onnx.Split
func.func @swapped_activation(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<1.0> : tensor<4x2xf32>
  %r = onnx.initializer "weight_hh" dense<0.5> : tensor<4x1xf32>
  %gx = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, none) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%h, %r, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %to = onnx.Tanh(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: the output gate's activation (Tanh) differs from the forget gate's (Sigmoid)}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%to, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A gate pre-activation goes through a non-linear op (Relu) before the split.
// CHECK-LABEL: func.func @nonlinear_gates
// CHECK-NOT: rnn.lstm_cell
func.func @nonlinear_gates(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %w = onnx.initializer "weight_ih" dense<1.0> : tensor<4x2xf32>
  %r = onnx.initializer "weight_hh" dense<0.5> : tensor<4x1xf32>
  %gx = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, none) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%h, %r, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g0 = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %g = onnx.Relu(%g0) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: 'Relu' in a gate pre-activation is not linear}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Weights that are graph inputs, not constants, cannot be packed.
// CHECK-LABEL: func.func @runtime_weights
// CHECK-NOT: rnn.lstm_cell
func.func @runtime_weights(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>, %w: tensor<4x2xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %r = onnx.initializer "weight_hh" dense<0.5> : tensor<4x1xf32>
  %gx = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<4x2xf32>, none) -> tensor<1x4xf32>
  %gh = onnx.Gemm(%h, %r, %none) {transB = 1 : i64} : (tensor<1x1xf32>, tensor<4x1xf32>, none) -> tensor<1x4xf32>
  %g = onnx.Add(%gx, %gh) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %i, %f, %cc, %o = onnx.Split(%g, %none) {axis = 1 : i64} : (tensor<1x4xf32>, none) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  %si = onnx.Sigmoid(%i) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %sf = onnx.Sigmoid(%f) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %tg = onnx.Tanh(%cc) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %so = onnx.Sigmoid(%o) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%sf, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%si, %tg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: the weight of a gate matmul is a graph or subgraph input, not a constant}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// ONNX LSTM with peepholes computed at run time: the layer's weights must be
// constants.
// CHECK-LABEL: func.func @peepholes
// CHECK: onnx.LSTM
func.func @peepholes(%x: tensor<3x2x1xf32>, %p: tensor<1x3xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<1.0> : tensor<1x4x1xf32>
  %r = onnx.initializer "R" dense<1.0> : tensor<1x4x1xf32>
  // expected-remark @+1 {{not imported into the rnn dialect: P is not an f32 constant}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %p) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, tensor<1x3xf32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}

// -----

// An ONNX LSTM converted to f16 (onnxconverter_common's float16): left as
// it is, the remark naming the element type.
// CHECK-LABEL: func.func @f16_weights
// CHECK: onnx.LSTM
func.func @f16_weights(%x: tensor<3x2x1xf16>) -> tensor<1x2x1xf16> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<1.0> : tensor<1x4x1xf16>
  %r = onnx.initializer "R" dense<1.0> : tensor<1x4x1xf16>
  // expected-remark @+1 {{not imported into the rnn dialect: W is a constant of f16 (only f32 layers are fused; convert the model to f32)}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 1 : i64} : (tensor<3x2x1xf16>, tensor<1x4x1xf16>, tensor<1x4x1xf16>, none, none, none, none, none) -> (tensor<3x1x2x1xf16>, tensor<1x2x1xf16>, tensor<1x2x1xf16>)
  return %yh : tensor<1x2x1xf16>
}

// -----

// An LSTM whose recurrent weight is a Slice of a runtime value (as onnxslim
// leaves a Loop body's weights): the remark names the node.
// CHECK-LABEL: func.func @computed_r
// CHECK: onnx.LSTM
func.func @computed_r(%x: tensor<3x2x1xf32>, %rr: tensor<1x8x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<1.0> : tensor<1x4x1xf32>
  %st = onnx.initializer "st" dense<0> : tensor<1xi64>
  %en = onnx.initializer "en" dense<4> : tensor<1xi64>
  %ax = onnx.initializer "ax" dense<1> : tensor<1xi64>
  %r = onnx.Slice(%rr, %st, %en, %ax, %none) : (tensor<1x8x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x4x1xf32> loc("r_slice")
  // expected-remark @+1 {{not imported into the rnn dialect: R is computed by Slice node 'r_slice', not a constant}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 1 : i64} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}


// -----

// An elementwise product in a gate that is not a peephole (the cell state
// times a constant in the cell candidate g): no ONNX op computes it.
// CHECK-LABEL: func.func @peephole_on_g
// CHECK-NOT: rnn.lstm_cell
func.func @peephole_on_g(%x: tensor<1x1xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %w = onnx.initializer "w" dense<1.0> : tensor<1x1xf32>
  %pg = onnx.initializer "pg" dense<[0.5]> : tensor<1xf32>
  %xw = onnx.MatMul(%x, %w) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %hw = onnx.MatMul(%h, %w) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %a = onnx.Add(%xw, %hw) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %cg = onnx.Mul(%c, %pg) : (tensor<1x1xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %ag = onnx.Add(%a, %cg) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %i = onnx.Sigmoid(%a) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %f = onnx.Sigmoid(%a) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %o = onnx.Sigmoid(%a) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %g = onnx.Tanh(%ag) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %fc = onnx.Mul(%f, %c) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %ig = onnx.Mul(%i, %g) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  // expected-remark @+1 {{not fused as an LSTM cell: the cell candidate's pre-activation multiplies a value elementwise (ONNX's peepholes are on i, f and o)}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%o, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// A quantized MatMul (quantize_static's QOperator form) without
// import-quantized (the ONNX target): kept for ONNX Runtime.
// CHECK-LABEL: func.func @qlinearmatmul_kept
// CHECK: QLinearMatMul
// CHECK-NOT: rnn.lstm_cell
func.func @qlinearmatmul_kept(%x: tensor<1x2xf32>, %h: tensor<1x1xf32>, %c: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %none = onnx.none
  %wq = onnx.initializer "wq" dense<[[1, -2, 3, 4], [5, 6, -7, 8]]> : tensor<2x4xi8>
  %ws = onnx.initializer "ws" dense<0.5> : tensor<f32>
  %wz = onnx.initializer "wz" dense<0> : tensor<i8>
  %xs = onnx.initializer "xs" dense<0.01> : tensor<f32>
  %xz = onnx.initializer "xz" dense<128> : tensor<ui8>
  %r = onnx.initializer "r" dense<[[0.1, 0.2, 0.3, 0.4]]> : tensor<1x4xf32>
  %xq = onnx.node "QuantizeLinear"(%x, %xs, %xz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %yq = onnx.node "QLinearMatMul"(%xq, %xs, %xz, %wq, %ws, %wz, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
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
  // expected-remark @+1 {{not fused as an LSTM cell: a quantized MatMul (QLinearMatMul) stays as it is for ONNX Runtime (the compiled targets import it as an int8 layer)}}
  %c1 = onnx.Add(%fc, %ig) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %tc = onnx.Tanh(%c1) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %h1 = onnx.Mul(%so, %tc) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %h1, %c1 : tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Two RNN steps whose state is rounded to integers (QuantizeLinear +
// DequantizeLinear) and the rounded value used beyond the next MatMul's
// input: no cell form, and the recurrence's remark names the rounding.
// CHECK-LABEL: func.func @rounded_state
// CHECK-NOT: rnn.rnn_cell
func.func @rounded_state(%x0: tensor<1x2xf32>, %x1: tensor<1x2xf32>, %h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.initializer "w" dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %r = onnx.initializer "r" dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %s = onnx.initializer "s" dense<0.01> : tensor<f32>
  %z = onnx.initializer "z" dense<128> : tensor<ui8>
  %a0 = onnx.MatMul(%x0, %w) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  // expected-remark @+1 {{not fused: a recurrence is left as it is: 1 constant weight is applied at 2 steps, each to values computed from an earlier application, and no cell form matched it; the model rounds a value inside the cell to integers (QuantizeLinear 'h1_q') and uses it beyond a MatMul's input, which a fused layer would not do}}
  %b0 = onnx.MatMul(%h, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %g0 = onnx.Add(%a0, %b0) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %h1 = onnx.Tanh(%g0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %q = onnx.node "QuantizeLinear"(%h1, %s, %z) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8> loc("h1_q")
  %hd = onnx.node "DequantizeLinear"(%q, %s, %z) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %a1 = onnx.MatMul(%x1, %w) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %b1 = onnx.MatMul(%hd, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %g1 = onnx.Add(%a1, %b1) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %g2 = onnx.Add(%g1, %hd) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %h2 = onnx.Tanh(%g2) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}

// -----

// A recurrence through an op no cell form has (Sin): no step comes close to
// a form, and the remark says so rather than pointing to earlier remarks.
// CHECK-LABEL: func.func @no_near_miss
func.func @no_near_miss(%h: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %r = onnx.initializer "r" dense<[[0.5, 0.1], [0.2, 0.3]]> : tensor<2x2xf32>
  // expected-remark @+1 {{not fused: a recurrence is left as it is: 1 constant weight is applied at 2 steps, each to values computed from an earlier application, and no cell form matched it: no step came close to a cell form}}
  %a = onnx.MatMul(%h, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %s = onnx.node "Sin"(%a) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %b = onnx.MatMul(%s, %r) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %t = onnx.node "Sin"(%b) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %t : tensor<1x2xf32>
}
