// RUN: lstm-opt %s -split-input-file -verify-diagnostics

func.func @gemm_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Gemm' op inner dimensions differ: 3 vs 4}}
  %y = onnx.Gemm(%a, %b, %none) : (tensor<2x3xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Gemm' op A must have rank 2}}
  %y = onnx.Gemm(%a, %b, %none) : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @matmul_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'onnx.MatMul' op inner dimensions differ: 3 vs 4}}
  %y = onnx.MatMul(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'onnx.Add' op operands are not broadcast-compatible}}
  %y = onnx.Add(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @mul_types(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{'onnx.Mul' op element types differ: 'f32' and 'f16'}}
  %y = onnx.Mul(%a, %b) : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @sigmoid_types(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{'onnx.Sigmoid' op element types differ: 'f32' and 'f16'}}
  %y = onnx.Sigmoid(%a) : (tensor<3xf32>) -> tensor<3xf16>
  return %y : tensor<3xf16>
}

// -----

func.func @split_sizes(%a: tensor<1x12xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Split' op 'split' sizes add up to 10 but the axis has 12}}
  %x, %y = onnx.Split(%a, %none) {axis = 1 : i64, split_attr = array<i64: 4, 6>} : (tensor<1x12xf32>, none) -> (tensor<1x4xf32>, tensor<1x6xf32>)
  return
}

// -----

func.func @split_both_forms(%a: tensor<1x12xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'onnx.Split' op takes 'split' either as input or as attribute}}
  %x, %y = onnx.Split(%a, %s) {split_attr = array<i64: 4, 8>} : (tensor<1x12xf32>, tensor<2xi64>) -> (tensor<1x4xf32>, tensor<1x8xf32>)
  return
}

// -----

func.func @gather_axis(%a: tensor<3x4xf32>, %i: tensor<i64>) -> tensor<3xf32> {
  // expected-error @+1 {{'onnx.Gather' op axis 2 is out of range for rank 2}}
  %y = onnx.Gather(%a, %i) {axis = 2 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @gather_indices(%a: tensor<3x4xf32>, %i: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Gather' op indices must be int32 or int64, got 'f32'}}
  %y = onnx.Gather(%a, %i) : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'onnx.Concat' op inputs differ in dimension 1 outside the concat axis}}
  %y = onnx.Concat(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm is not a permutation}}
  %y = onnx.Transpose(%a) {perm = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @unsqueeze_axes(%a: tensor<3xf32>) -> tensor<1x3xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Unsqueeze' op needs 'axes'}}
  %y = onnx.Unsqueeze(%a, %none) : (tensor<3xf32>, none) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

func.func @slice_forms(%a: tensor<3xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Slice' op takes starts/ends either as inputs (opset 10+) or as attributes (opset 1), not both}}
  %y = onnx.Slice(%a, %s, %s, %none, %none) {starts_attr = array<i64: 0>, ends_attr = array<i64: 1>} : (tensor<3xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @cast_to(%a: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{'onnx.Cast' op result #0 has the type 'tensor<3xi32>' but the operator's shape rule gives tensor<3xi64>}}
  %y = onnx.Cast(%a) {to = 7 : i64} : (tensor<3xf32>) -> tensor<3xi32>
  return %y : tensor<3xi32>
}

// -----

func.func @constant_two_values() -> tensor<1xf32> {
  // expected-error @+1 {{'onnx.Constant' op needs exactly one value attribute, has 2}}
  %y = onnx.Constant() {value = dense<1.0> : tensor<1xf32>, value_float = 1.0 : f32} : () -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @lstm_direction(%x: tensor<5x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.LSTM' op direction must be forward, reverse or bidirectional, got 'sideways'}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {direction = "sideways"} : (tensor<5x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (none, none, none)
  return
}

// -----

func.func @lstm_w_shape(%x: tensor<5x1x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x16x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.LSTM' op W dimension 1 is 12, expected 16}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) : (tensor<5x1x3xf32>, tensor<1x12x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (none, none, none)
  return
}

// -----

func.func @lstm_bidir_d(%x: tensor<5x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.LSTM' op W dimension 0 is 1, expected 2}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {direction = "bidirectional"} : (tensor<5x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (none, none, none)
  return
}

// -----

func.func @gru_activations(%x: tensor<5x1x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.GRU' op needs 2 activations, got 1}}
  %y, %yh = onnx.GRU(%x, %w, %r, %none, %none, %none) {activations = ["Tanh"]} : (tensor<5x1x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, none) -> (none, none)
  return
}

// -----

func.func @rnn_activation_name(%x: tensor<5x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.RNN' op unknown activation 'Swish'}}
  %y, %yh = onnx.RNN(%x, %w, %r, %none, %none, %none) {activations = ["Swish"]} : (tensor<5x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (none, none)
  return
}

// -----

func.func @rnn_initial_h(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %h: tensor<1x3x4xf32>) {
  %none = onnx.none
  // expected-error @+1 {{'onnx.RNN' op initial_h dimension 1 is 3, expected 2}}
  %y, %yh = onnx.RNN(%x, %w, %r, %none, %none, %h) : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, tensor<1x3x4xf32>) -> (none, none)
  return
}

// -----

func.func @initializer_type() {
  // expected-error @+1 {{'onnx.initializer' op failed to verify that all of {value, result} have same type}}
  %w = "onnx.initializer"() {name = "w", value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @node_regions(%c: tensor<i1>) {
  // expected-error @+1 {{'onnx.node' op has 1 subgraph regions but 0 graph_attrs names}}
  %y = onnx.node "If"(%c) graphs {
    onnx.yield {input_names = [], output_names = []}
  } : (tensor<i1>) -> tensor<f32>
  return
}

// -----

func.func @yield_names(%c: tensor<i1>, %v: tensor<f32>) {
  %y = onnx.node "If"(%c) graphs {
    // expected-error @+1 {{'onnx.yield' op names 0 subgraph outputs but yields 1 values}}
    onnx.yield %v : tensor<f32> {input_names = [], output_names = []}
  } {graph_attrs = ["then_branch"]} : (tensor<i1>) -> tensor<f32>
  return
}

// -----

// Each typed op's declared result types must agree with its shape rule.
func.func @rule_elementwise(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'onnx.Sigmoid' op result #0 has the type 'tensor<2x4xf32>' but the operator's shape rule gives tensor<2x3xf32>}}
  %s = onnx.Sigmoid(%a) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

func.func @rule_reshape(%a: tensor<2x3xf32>) -> tensor<?x4xf32> {
  %shape = onnx.initializer "shape" dense<[-1, 4]> : tensor<2xi64>
  // expected-error @+1 {{'onnx.Reshape' op cannot infer the -1 dimension reshaping 'tensor<2x3xf32>'}}
  %r = onnx.Reshape(%a, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

func.func @rule_reshape_count(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %shape = onnx.Constant() {value_ints = array<i64: 4, 2>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Reshape' op cannot reshape 'tensor<2x3xf32>' to [4, 2]}}
  %r = onnx.Reshape(%a, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

func.func @rule_transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{'onnx.Transpose' op result #0 has the type 'tensor<4x2x3xf32>' but the operator's shape rule gives tensor<4x3x2xf32>}}
  %t = onnx.Transpose(%a) : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %t : tensor<4x2x3xf32>
}

// -----

func.func @rule_slice(%a: tensor<5x6xf32>) -> tensor<5x3xf32> {
  %s = onnx.initializer "s" dense<[-4]> : tensor<1xi64>
  %e = onnx.initializer "e" dense<[100]> : tensor<1xi64>
  %ax = onnx.initializer "ax" dense<[1]> : tensor<1xi64>
  // expected-error @+1 {{'onnx.Slice' op result #0 has the type 'tensor<5x3xf32>' but the operator's shape rule gives tensor<5x4xf32>}}
  %y = onnx.Slice(%a, %s, %e, %ax, %ax) : (tensor<5x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}

// -----

func.func @rule_slice_step(%a: tensor<5x6xf32>) -> tensor<*xf32> {
  %s = onnx.initializer "s" dense<[0]> : tensor<1xi64>
  %z = onnx.initializer "z" dense<[0]> : tensor<1xi64>
  // expected-error @+1 {{'onnx.Slice' op step 0}}
  %y = onnx.Slice(%a, %s, %s, %z, %z) : (tensor<5x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @rule_squeeze(%a: tensor<1x3xf32>) -> tensor<*xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Squeeze' op cannot squeeze dimension 1 of size 3}}
  %y = onnx.Squeeze(%a, %none) {axes_attr = array<i64: 1>} : (tensor<1x3xf32>, none) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @rule_gemm(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Gemm' op result #0 has the type 'tensor<2x3xf32>' but the operator's shape rule gives tensor<2x4xf32>}}
  %y = onnx.Gemm(%a, %b, %none) {transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @rule_gemm_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'onnx.Gemm' op C 'tensor<3xf32>' does not broadcast to [2, 4]}}
  %y = onnx.Gemm(%a, %b, %c) : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @rule_matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MatMul' op batch dimensions do not broadcast: 'tensor<2x3x4xf32>' and 'tensor<5x4x6xf32>'}}
  %y = onnx.MatMul(%a, %b) : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @rule_gather(%a: tensor<4x3xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'onnx.Gather' op result #0 has the type 'tensor<2x5xf32>' but the operator's shape rule gives tensor<2x5x3xf32>}}
  %y = onnx.Gather(%a, %i) : (tensor<4x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @rule_shape(%a: tensor<2x3x4xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{'onnx.Shape' op result #0 has the type 'tensor<3xi64>' but the operator's shape rule gives tensor<2xi64>}}
  %y = onnx.Shape(%a) {start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}

// -----

func.func @rule_lstm_y(%x: tensor<5x2x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>) -> tensor<5x1x3x8xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.LSTM' op result #0 has the type 'tensor<5x1x3x8xf32>' but the operator's shape rule gives tensor<5x1x2x8xf32>}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) : (tensor<5x2x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, none, none, none, none, none) -> (tensor<5x1x3x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
  return %y : tensor<5x1x3x8xf32>
}

// -----

func.func @rule_split_count(%a: tensor<6xf32>) -> tensor<*xf32> {
  %none = onnx.none
  // expected-error @+1 {{'onnx.Split' op dimension 6 does not split into 4 equal parts}}
  %y:4 = onnx.Split(%a, %none) : (tensor<6xf32>, none) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %y#0 : tensor<*xf32>
}
