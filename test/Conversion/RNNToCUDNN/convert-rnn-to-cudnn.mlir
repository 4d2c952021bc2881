// RUN: lstm-opt %s --convert-rnn-to-cudnn --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-cudnn="data-type=f16 algo=persist-static" --split-input-file | FileCheck %s --check-prefix=F16
// RUN: lstm-opt %s --convert-rnn-to-cudnn="algo=standard" --split-input-file | FileCheck %s --check-prefix=STD
// RUN: lstm-opt %s --convert-rnn-to-cudnn="algo=persist-small-h" --split-input-file | FileCheck %s --check-prefix=SMALLH

// A bidirectional LSTM with initial states: one runtime call; the canonical
// weights as flat constants; config = {cell 0 (LSTM), bidirectional 1,
// layers 1, I 3, H 4, T 5, B 2, data type 0 (f32), algo 3 (auto: the runtime
// picks per layer on the GPU), id 0}.
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_enc_config : memref<10xi64> = dense<[0, 1, 1, 3, 4, 5, 2, 0, 3, 0]>
// The layer's state slot is mutable and zero: each loaded copy of the model
// gets its own cuDNN layer.
// CHECK-DAG: memref.global "private" @__lstm_opt_cudnn_enc_state : memref<1xi64> = dense<0>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_enc_W0 : memref<96xf32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_enc_Wn : memref<0xf32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_enc_R : memref<128xf32>
// CHECK-LABEL: func.func @lstm_bidir(
// CHECK:   %[[X:.*]] = bufferization.to_buffer %arg0 read_only {lstm_opt.read_by = "__lstm_opt_cudnn_{{.*}}"} : tensor<5x2x3xf32> to memref<5x2x3xf32>
// CHECK:   %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5x2x2x4xf32>
// CHECK:   call @lstm_opt_rnn_forward_memref(
// CHECK-SAME: (memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?x?x?xf32>, memref<?xi32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
// CHECK:   bufferization.to_tensor %[[Y]] restrict writable
// CHECK: func.func private @lstm_opt_rnn_forward_memref({{.*}}) attributes {llvm.emit_c_interface}
// F16: dense<[0, 1, 1, 3, 4, 5, 2, 1, 1, 0]>
// STD: dense<[0, 1, 1, 3, 4, 5, 2, 0, 0, 0]>
// SMALLH: dense<[0, 1, 1, 3, 4, 5, 2, 0, 2, 0]>
func.func @lstm_bidir(%x: tensor<5x2x3xf32>, %h0: tensor<2x2x4xf32>, %c0: tensor<2x2x4xf32>) -> (tensor<5x2x2x4xf32>, tensor<2x2x4xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<2x16x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<2x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<2x16xf32>
  %y, %hn, %cn = rnn.sequence lstm bidirectional %x, %w, %r, %b, %b init(%h0, %c0) {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> (tensor<5x2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) loc("enc")
  return %y, %hn : tensor<5x2x2x4xf32>, tensor<2x2x4xf32>
}

// -----

// A 2-layer GRU stack (linear_before_reset) is ONE call: config layers = 2,
// Wn holds layer 1's input weights; no initial state -> an empty memref.
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_dec_config : memref<10xi64> = dense<[1, 0, 2, 3, 4, 6, 1, 0, 3, 0]>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_cudnn_dec_Wn : memref<48xf32>
// CHECK-LABEL: func.func @gru_stack(
// CHECK:   memref.alloc() : memref<0x0x0xf32>
// CHECK:   call @lstm_opt_rnn_forward_memref(
// CHECK-NOT: rnn.stack
func.func @gru_stack(%x: tensor<6x1x3xf32>) -> tensor<6x1x1x4xf32> {
  %w0 = onnx.initializer "W0" dense<0.5> : tensor<1x12x3xf32>
  %wn = onnx.initializer "Wn" dense<0.5> : tensor<1x1x12x4xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<2x1x12x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<2x1x12xf32>
  %y, %hn = rnn.stack gru forward %x, %w0, %wn, %r, %b, %b {hidden_size = 4 : i64, num_layers = 2 : i64, linear_before_reset} : (tensor<6x1x3xf32>, tensor<1x12x3xf32>, tensor<1x1x12x4xf32>, tensor<2x1x12x4xf32>, tensor<2x1x12xf32>, tensor<2x1x12xf32>) -> (tensor<6x1x1x4xf32>, tensor<2x1x4xf32>) loc("dec")
  return %y : tensor<6x1x1x4xf32>
}

// -----

// What cuDNN cannot run exactly stays (for convert-rnn-to-cpu), with a remark.
// CHECK-LABEL: func.func @left_alone(
// CHECK: rnn.sequence rnn reverse
// CHECK: rnn.sequence gru forward
// CHECK: rnn.sequence lstm forward
// CHECK-NOT: call @lstm_opt_rnn_forward_memref
func.func @left_alone(%x: tensor<3x2x3xf32>) -> (tensor<3x1x2x4xf32>, tensor<3x1x2x4xf32>, tensor<3x1x2x4xf32>) {
  %w1 = onnx.initializer "W1" dense<0.5> : tensor<1x4x3xf32>
  %r1 = onnx.initializer "R1" dense<0.25> : tensor<1x4x4xf32>
  %b1 = onnx.initializer "B1" dense<0.125> : tensor<1x4xf32>
  %y1, %h1 = rnn.sequence rnn reverse %x, %w1, %r1, %b1, %b1 {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  %w2 = onnx.initializer "W2" dense<0.5> : tensor<1x12x3xf32>
  %r2 = onnx.initializer "R2" dense<0.25> : tensor<1x12x4xf32>
  %b2 = onnx.initializer "B2" dense<0.125> : tensor<1x12xf32>
  %y2, %h2 = rnn.sequence gru forward %x, %w2, %r2, %b2, %b2 {hidden_size = 4 : i64} : (tensor<3x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  %w3 = onnx.initializer "W3" dense<0.5> : tensor<1x16x3xf32>
  %r3 = onnx.initializer "R3" dense<0.25> : tensor<1x16x4xf32>
  %b3 = onnx.initializer "B3" dense<0.125> : tensor<1x16xf32>
  %y3, %h3, %c3 = rnn.sequence lstm forward %x, %w3, %r3, %b3, %b3 {hidden_size = 4 : i64, clip = 3.0 : f32} : (tensor<3x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y1, %y2, %y3 : tensor<3x1x2x4xf32>, tensor<3x1x2x4xf32>, tensor<3x1x2x4xf32>
}
