// RUN: lstm-opt %s -split-input-file -convert-onnx-to-linalg -verify-diagnostics

// Errors name the ONNX node: its NameLoc when imported from a model (see
// convert-onnx-to-linalg-models.test), else its first output name.

// An operator without a lowering; the ops that read it get no error of
// their own, and the rest of the function is still lowered.
func.func @unsupported_generic(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'ln_out' (Hardmax) is not supported by the CPU backend}}
  %y = onnx.node "Hardmax"(%x) {domain = "", onnx.names = ["ln_out"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = onnx.Relu(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %w = onnx.Relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %z, %w : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Standard recurrent layers are lowered from the rnn dialect, not from onnx.
func.func @unsupported_lstm(%x: tensor<3x2x1xf32>) -> tensor<1x2x1xf32> {
  %none = onnx.none
  %w = onnx.initializer "W" dense<1.0> : tensor<1x4x1xf32>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'Y' (LSTM) is not supported by the CPU backend}}
  %y, %yh, %yc = onnx.LSTM(%x, %w, %w, %none, %none, %none, %none, %none) {hidden_size = 1 : i64, onnx.names = ["Y", "Y_h", "Y_c"]} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  return %yh : tensor<1x2x1xf32>
}

// -----

// A shape computed at run time.
func.func @runtime_shape(%x: tensor<2x3xf32>, %shape: tensor<2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'r' (Reshape): 'shape' is not a compile-time constant}}
  %r = onnx.Reshape(%x, %shape) {onnx.names = ["r"]} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @runtime_expand(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %c = onnx.Cast(%s) {to = 7 : i64} : (tensor<2xi64>) -> tensor<2xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'e' (Expand): 'shape' is not a compile-time constant}}
  %e = onnx.Expand(%x, %c) {onnx.names = ["e"]} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}

// -----

// A graph input whose size the driver did not fix.
func.func @dynamic_input(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 't' (Tanh): operand #0 has the type 'tensor<?x3xf32>'; the CPU backend needs static shapes}}
  %t = onnx.Tanh(%x) {onnx.names = ["t"]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %t : tensor<?x3xf32>
}

// -----

// The shape the lowering computes must agree with the declared one. (Typed
// ops cannot get here: their verifier checks the declared type against the
// shape rule; a generic onnx.node has no rule.)
func.func @wrong_result_type(%a: tensor<2x3x2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'f' (Flatten): the computed result type 'tensor<2x6xf32>' contradicts the declared type 'tensor<2x4xf32>'}}
  %f = onnx.node "Flatten"(%a) {attrs = {axis = 1 : i64}, domain = "", onnx.names = ["f"]} : (tensor<2x3x2xf32>) -> tensor<2x4xf32>
  return %f : tensor<2x4xf32>
}

// -----

// The shape rule's refusal, found once the operands' shapes are known.
func.func @rule_refusal(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %x = onnx.Identity(%a) : (tensor<2x3xf32>) -> tensor<*xf32>
  %w = onnx.initializer "w" dense<1.0> : tensor<4x5xf32>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'm' (MatMul): inner dimensions differ: 3 vs 4}}
  %m = onnx.MatMul(%x, %w) {onnx.names = ["m"]} : (tensor<*xf32>, tensor<4x5xf32>) -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}

// -----

func.func @squeeze_non_unit(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %none = onnx.none
  // expected-error @+1 {{cannot squeeze dimension 0 of size 2}}
  %s = onnx.Squeeze(%x, %none) {axes_attr = array<i64: 0>} : (tensor<2x3xf32>, none) -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

func.func @gather_out_of_range(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %i = onnx.Constant() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{index 4 is out of range for dimension 0 of size 4}}
  %g = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

func.func @integer_softmax(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{element type 'i32' is not supported (expected a float type)}}
  %s = onnx.Softmax(%x) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %s : tensor<2x3xi32>
}

// -----

func.func @unnamed(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node '<unnamed>' (Hardmax) is not supported by the CPU backend}}
  %y = onnx.node "Hardmax"(%x) {domain = ""} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Reflect padding needs a dimension larger than the pad.
func.func @pad_reflect_too_wide(%x: tensor<1x3xf32>) -> tensor<1x8xf32> {
  %pads = onnx.Constant() {value = dense<[0, 3, 0, 2]> : tensor<4xi64>} : () -> tensor<4xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'p' (Pad): dimension 1 of size 3 cannot be padded by 3/2 in mode 'reflect'}}
  %y = onnx.node "Pad"(%x, %pads) {domain = "", attrs = {mode = "reflect"}, onnx.names = ["p"]} : (tensor<1x3xf32>, tensor<4xi64>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

func.func @pad_unknown_mode(%x: tensor<1x3xf32>) -> tensor<1x4xf32> {
  %pads = onnx.Constant() {value = dense<[0, 1, 0, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'p' (Pad): mode 'wrap' is not supported}}
  %y = onnx.node "Pad"(%x, %pads) {domain = "", attrs = {mode = "wrap"}, onnx.names = ["p"]} : (tensor<1x3xf32>, tensor<4xi64>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Channels that do not match the weight's, for the group count.
func.func @conv_channels(%x: tensor<1x3x5xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x3xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'c' (Conv): channels 3 (weight 2x2) do not split into 1 groups}}
  %y = onnx.node "Conv"(%x, %w) {domain = "", onnx.names = ["c"]} : (tensor<1x3x5xf32>, tensor<2x2x3xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x1x2xf32>, %w: tensor<1x1x3xf32>) -> tensor<1x1x1xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'c' (Conv): the kernel is larger than the padded input}}
  %y = onnx.node "Conv"(%x, %w) {domain = "", onnx.names = ["c"]} : (tensor<1x1x2xf32>, tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}

// -----

func.func @reduce_mean_axis(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %ax = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'r' (ReduceMean): axis 2 is out of range for rank 2}}
  %y = onnx.node "ReduceMean"(%x, %ax) {domain = "", attrs = {keepdims = 0 : i64}, onnx.names = ["r"]} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @einsum_ellipsis(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'e' (Einsum): an equation with an ellipsis ('...') is not supported}}
  %y = onnx.node "Einsum"(%a) {domain = "", attrs = {equation = "...ij->...ji"}, onnx.names = ["e"]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'e' (Einsum): letter 'j' has sizes 3 and 4}}
  %y = onnx.node "Einsum"(%a, %b) {domain = "", attrs = {equation = "ij,jk->ik"}, onnx.names = ["e"]} : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @conv_transpose_output_shape(%x: tensor<1x2x5xf32>, %w: tensor<2x3x4xf32>) -> tensor<1x3x10xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'ct' (ConvTranspose): output_shape and auto_pad SAME_* are not supported; give explicit pads}}
  %y = onnx.node "ConvTranspose"(%x, %w) {domain = "", attrs = {strides = array<i64: 2>, output_shape = array<i64: 10>}, onnx.names = ["ct"]} : (tensor<1x2x5xf32>, tensor<2x3x4xf32>) -> tensor<1x3x10xf32>
  return %y : tensor<1x3x10xf32>
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x5xf32>, %u: tensor<2x4xf32>) -> tensor<4x5xf32> {
  %i = onnx.Constant() {value = dense<[[1], [2]]> : tensor<2x1xi64>} : () -> tensor<2x1xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 's' (ScatterND): updates must have the shape indices[:-1] + data[k:]}}
  %y = onnx.node "ScatterND"(%x, %i, %u) {domain = "", onnx.names = ["s"]} : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

func.func @gather_elements_rank(%x: tensor<4x5xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'g' (GatherElements): indices must have the data's rank (2), not 1}}
  %y = onnx.node "GatherElements"(%x, %i) {domain = "", onnx.names = ["g"]} : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @resize_cubic(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %n = onnx.none
  // expected-error @+1 {{convert-onnx-to-linalg: node 'r' (Resize): mode 'cubic' is not supported (nearest, linear)}}
  %y = onnx.node "Resize"(%x, %n, %s) {domain = "", attrs = {mode = "cubic"}, onnx.names = ["r"]} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

func.func @topk_k(%x: tensor<2x5xf32>) -> tensor<2x6xf32> {
  %k = onnx.Constant() {value = dense<6> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 't' (TopK): K = 6 is not in [0, 5]}}
  %v, %i = onnx.node "TopK"(%x, %k) {domain = "", onnx.names = ["t", "ti"]} : (tensor<2x5xf32>, tensor<1xi64>) -> (tensor<2x6xf32>, tensor<2x6xi64>)
  return %v : tensor<2x6xf32>
}

// -----

// A scale that is neither a scalar nor one per element of the axis (blocked).
func.func @dequantize_blocked(%x: tensor<4x6xi8>) -> tensor<4x6xf32> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'd' (DequantizeLinear): the scale of shape [4, 2] is neither a scalar nor one value per element of the axis (blocked quantization is not supported)}}
  %y = onnx.node "DequantizeLinear"(%x, %s) {domain = "", onnx.names = ["d"]} : (tensor<4x6xi8>, tensor<4x2xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

func.func @matmul_integer_float(%a: tensor<2x3xf32>, %b: tensor<3x4xi8>) -> tensor<2x4xi32> {
  // expected-error @+1 {{convert-onnx-to-linalg: node 'm' (MatMulInteger): A and B must be 8-bit integer tensors}}
  %y = onnx.node "MatMulInteger"(%a, %b) {domain = "", onnx.names = ["m"]} : (tensor<2x3xf32>, tensor<3x4xi8>) -> tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}

// -----

func.func @quantize_int16(%x: tensor<4xf32>) -> tensor<4xi16> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'q' (QuantizeLinear): only 8-bit results (int8, uint8) are supported}}
  %y = onnx.node "QuantizeLinear"(%x, %s, %z) {domain = "", onnx.names = ["q"]} : (tensor<4xf32>, tensor<f32>, tensor<i16>) -> tensor<4xi16>
  return %y : tensor<4xi16>
}

// -----

func.func @scatter_elements_shapes(%x: tensor<4x5xf32>, %u: tensor<2x2xf32>) -> tensor<4x5xf32> {
  %i = onnx.Constant() {value = dense<[[1, 2, 3], [0, 1, 2]]> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 's' (ScatterElements): indices and updates must have one shape, of the data's rank (2)}}
  %y = onnx.node "ScatterElements"(%x, %i, %u) {domain = "", onnx.names = ["s"]} : (tensor<4x5xf32>, tensor<2x3xi64>, tensor<2x2xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

func.func @scatter_elements_reduction(%x: tensor<4x5xf32>, %u: tensor<2x2xf32>) -> tensor<4x5xf32> {
  %i = onnx.Constant() {value = dense<[[1, 2], [0, 1]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  // expected-error @+1 {{convert-onnx-to-linalg: node 's' (ScatterElements): reduction 'mean' is not supported}}
  %y = onnx.node "ScatterElements"(%x, %i, %u) {attrs = {reduction = "mean"}, domain = "", onnx.names = ["s"]} : (tensor<4x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

func.func @dropout_training(%x: tensor<4x5xf32>, %t: tensor<i1>) -> tensor<4x5xf32> {
  %r = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{convert-onnx-to-linalg: node 'd' (Dropout): training_mode must be a constant false (the CPU backend runs inference)}}
  %y = onnx.node "Dropout"(%x, %r, %t) {domain = "", onnx.names = ["d"]} : (tensor<4x5xf32>, tensor<f32>, tensor<i1>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
