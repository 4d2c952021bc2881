// RUN: rm -rf %t && mkdir -p %t
// RUN: lstm-opt %s --allow-unregistered-dialect --convert-rnn-to-iree-kernels="object-dir=%t stem=m" --split-input-file | FileCheck %s
// RUN: test -s %t/m.layer0.o

// Each layer becomes one flow.dispatch of a stream.executable whose entry
// calls the layer's CPU kernel (each split is its own module: layer 0) (an object file, linked by IREE) with the
// buffers' addresses: inputs, outputs, then the kernel's workspace, which
// the dispatch returns as an extra result.

// An LSTM with initial states.
// CHECK-LABEL: func.func @lstm(
// CHECK-SAME:     %[[X:.*]]: tensor<5x2x3xf32>, %[[H0:.*]]: tensor<1x2x4xf32>, %[[C0:.*]]: tensor<1x2x4xf32>)
// CHECK:   %[[D:.*]]:4 = "flow.dispatch"(%[[X]], %[[H0]], %[[C0]]) {entry_points = [@lstm_opt_layer0::@lstm_opt_layer0_run], operandSegmentSizes = array<i32: 0, 3, 0, 0>, tied_operands = [-1 : index, -1 : index, -1 : index, -1 : index]} : (tensor<5x2x3xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<[[WS:[0-9]+]]xi8>)
// CHECK:   return %[[D]]#0, %[[D]]#1, %[[D]]#2
// CHECK: "stream.executable"() ({
// CHECK:   "stream.executable.export"() ({
// CHECK:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:     "stream.return"(%[[ONE]], %[[ONE]], %[[ONE]])
// CHECK:   }) {function_ref = @lstm_opt_layer0_run, sym_name = "lstm_opt_layer0_run", sym_visibility = "public"}
// CHECK:   module {
// CHECK:     func.func private @[[K:lstm_opt_layer0_[0-9a-f]+]](i64, i64, i64, i64, i64, i64, i64) attributes {hal.import.static}
// CHECK:     func.func @lstm_opt_layer0_run(%[[B0:.*]]: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %[[B6:.*]]: !stream.binding)
// CHECK:       %[[M0:.*]] = "stream.binding.subspan"(%[[B0]], %{{.*}}) : (!stream.binding, index) -> memref<5x2x3xf32>
// CHECK:       memref.extract_strided_metadata %[[M0]]
// CHECK:       memref.extract_aligned_pointer_as_index %[[M0]]
// CHECK:       "stream.binding.subspan"(%[[B6]], %{{.*}}) : (!stream.binding, index) -> memref<[[WS]]xi8>
// CHECK:       call @[[K]](
// CHECK:   "stream.executable.end"()
// CHECK: }) {hal.executable.objects = #hal.executable.objects<{#hal.executable.target<"llvm-cpu", "embedded-elf-{{x86_64|arm_64}}"> = [#hal.executable.object<{path = "{{.*}}m.layer0.o"}>]}>, sym_name = "lstm_opt_layer0", sym_visibility = "private"}
func.func @lstm(%x: tensor<5x2x3xf32>, %h0: tensor<1x2x4xf32>, %c0: tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b init(%h0, %c0) {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %hn, %cn : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// A bidirectional GRU without initial state, and a result whose type is
// less static than the kernel's: cast back.
// CHECK-LABEL: func.func @gru(
// CHECK:   %[[D:.*]]:3 = "flow.dispatch"(%{{.*}}) {entry_points = [@lstm_opt_layer0::@lstm_opt_layer0_run]{{.*}} : (tensor<3x1x2xf32>) -> (tensor<3x2x1x5xf32>, tensor<2x1x5xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK:   %[[Y:.*]] = tensor.cast %[[D]]#0 : tensor<3x2x1x5xf32> to tensor<?x2x1x5xf32>
// CHECK:   return %[[Y]], %[[D]]#1
// CHECK: func.func private @lstm_opt_layer0_{{[0-9a-f]+}}(i64, i64, i64, i64) attributes {hal.import.static}
func.func @gru(%x: tensor<3x1x2xf32>) -> (tensor<?x2x1x5xf32>, tensor<2x1x5xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<2x15x2xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<2x15x5xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<2x15xf32>
  %y, %hn = rnn.sequence gru bidirectional %x, %w, %r, %b, %b {hidden_size = 5 : i64, linear_before_reset} : (tensor<3x1x2xf32>, tensor<2x15x2xf32>, tensor<2x15x5xf32>, tensor<2x15xf32>, tensor<2x15xf32>) -> (tensor<?x2x1x5xf32>, tensor<2x1x5xf32>)
  return %y, %hn : tensor<?x2x1x5xf32>, tensor<2x1x5xf32>
}

// -----

// A recurrence fed by its input projection: both go into the kernel.
// CHECK-LABEL: func.func @recurrence(
// CHECK-NOT: rnn.
// CHECK:   "flow.dispatch"(%{{.*}}) {entry_points = [@lstm_opt_layer0::@lstm_opt_layer0_run]
// CHECK-NOT: rnn.
func.func @recurrence(%x: tensor<4x1x3xf32>) -> tensor<4x1x1x2xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x2x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x2x2xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x2xf32>
  %p = rnn.input_projection %x, %w, %b : (tensor<4x1x3xf32>, tensor<1x2x3xf32>, tensor<1x2xf32>) -> tensor<1x4x1x2xf32>
  %y, %hn = rnn.recurrence rnn forward %p, %r, %b {hidden_size = 2 : i64} : (tensor<1x4x1x2xf32>, tensor<1x2x2xf32>, tensor<1x2xf32>) -> (tensor<4x1x1x2xf32>, tensor<1x1x2xf32>)
  return %y : tensor<4x1x1x2xf32>
}
