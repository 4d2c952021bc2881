// RUN: lstm-opt %s | lstm-opt | FileCheck %s
// RUN: lstm-opt %s --mlir-print-op-generic | lstm-opt | FileCheck %s

// CHECK-LABEL: func.func @cells
func.func @cells(%x: tensor<2x8xf32>, %h: tensor<2x16xf32>, %c: tensor<2x16xf32>,
                 %w4: tensor<64x8xf32>, %r4: tensor<64x16xf32>, %b4: tensor<64xf32>,
                 %w3: tensor<48x8xf32>, %r3: tensor<48x16xf32>, %b3: tensor<48xf32>,
                 %w1: tensor<16x8xf32>, %r1: tensor<16x16xf32>, %b1: tensor<16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  // CHECK: rnn.lstm_cell %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  %h1, %c1 = rnn.lstm_cell %x, %h, %c, %w4, %r4, %b4, %b4 : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  // CHECK: rnn.gru_cell {{.*}} {linear_before_reset}
  %h2 = rnn.gru_cell %x, %h1, %w3, %r3, %b3, %b3 {linear_before_reset} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<48x8xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16xf32>
  // CHECK: rnn.rnn_cell {{.*}} {activations = ["Relu"]}
  %h3 = rnn.rnn_cell %x, %h2, %w1, %r1, %b1, %b1 {activations = ["Relu"]} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %h1, %c1, %h3 : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// CHECK-LABEL: func.func @layers
func.func @layers(%x: tensor<5x2x8xf32>, %w: tensor<2x64x8xf32>, %r: tensor<2x64x16xf32>, %b: tensor<2x64xf32>,
                  %h0: tensor<2x2x16xf32>, %lens: tensor<2xi32>) -> (tensor<5x2x2x16xf32>, tensor<5x2x2x16xf32>) {
  // CHECK: rnn.sequence lstm bidirectional %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}) lens(%{{.*}}) {hidden_size = 16 : i64}
  %y, %hn, %cn = rnn.sequence lstm bidirectional %x, %w, %r, %b, %b init(%h0, %h0) lens(%lens) {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<2x64x8xf32>, tensor<2x64x16xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>, tensor<2xi32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  // CHECK: rnn.input_projection
  %p = rnn.input_projection %x, %w, %b : (tensor<5x2x8xf32>, tensor<2x64x8xf32>, tensor<2x64xf32>) -> tensor<2x5x2x64xf32>
  // CHECK: rnn.recurrence lstm bidirectional
  %y2, %hn2, %cn2 = rnn.recurrence lstm bidirectional %p, %r, %b init(%h0, %h0) {hidden_size = 16 : i64} : (tensor<2x5x2x64xf32>, tensor<2x64x16xf32>, tensor<2x64xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  return %y, %y2 : tensor<5x2x2x16xf32>, tensor<5x2x2x16xf32>
}

// CHECK-LABEL: func.func @gru_layer
func.func @gru_layer(%x: tensor<?x1x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %b: tensor<1x48xf32>) -> tensor<1x1x16xf32> {
  // CHECK: rnn.sequence gru reverse
  %y, %hn = rnn.sequence gru reverse %x, %w, %r, %b, %b {hidden_size = 16 : i64, linear_before_reset} : (tensor<?x1x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x48xf32>) -> (tensor<?x1x1x16xf32>, tensor<1x1x16xf32>)
  return %hn : tensor<1x1x16xf32>
}

// LSTM variants: peephole weights (i, f, o) and input_forget, on a cell and
// on layers (round trip, also through the generic form).
// CHECK-LABEL: func.func @lstm_variants
func.func @lstm_variants(%x: tensor<2x8xf32>, %h: tensor<2x16xf32>, %w4: tensor<64x8xf32>, %r4: tensor<64x16xf32>, %b4: tensor<64xf32>, %p: tensor<48xf32>,
                         %xs: tensor<5x2x8xf32>, %w: tensor<2x64x8xf32>, %r: tensor<2x64x16xf32>, %b: tensor<2x64xf32>, %ps: tensor<2x48xf32>, %pj: tensor<2x5x2x64xf32>) -> (tensor<2x16xf32>, tensor<5x2x2x16xf32>, tensor<5x2x2x16xf32>) {
  // CHECK: rnn.lstm_cell %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} peephole(%{{.*}}) {input_forget} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<48xf32>)
  %h1, %c1 = rnn.lstm_cell %x, %h, %h, %w4, %r4, %b4, %b4 peephole(%p) {input_forget} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<48xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  // CHECK: rnn.sequence lstm bidirectional %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} peephole(%{{.*}}) {hidden_size = 16 : i64, input_forget}
  %y, %hn, %cn = rnn.sequence lstm bidirectional %xs, %w, %r, %b, %b peephole(%ps) {hidden_size = 16 : i64, input_forget} : (tensor<5x2x8xf32>, tensor<2x64x8xf32>, tensor<2x64x16xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x48xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  // CHECK: rnn.recurrence lstm bidirectional %{{.*}}, %{{.*}}, %{{.*}} peephole(%{{.*}}) {hidden_size = 16 : i64}
  %y2, %hn2, %cn2 = rnn.recurrence lstm bidirectional %pj, %r, %b peephole(%ps) {hidden_size = 16 : i64} : (tensor<2x5x2x64xf32>, tensor<2x64x16xf32>, tensor<2x64xf32>, tensor<2x48xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  return %h1, %y, %y2 : tensor<2x16xf32>, tensor<5x2x2x16xf32>, tensor<5x2x2x16xf32>
}
