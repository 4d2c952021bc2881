// RUN: lstm-opt %s -split-input-file -verify-diagnostics

func.func @cell_w_rows(%x: tensor<2x8xf32>, %h: tensor<2x16xf32>, %w: tensor<60x8xf32>, %r: tensor<64x16xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'rnn.lstm_cell' op W dimension 0 is 60, expected 64}}
  %h1, %c1 = rnn.lstm_cell %x, %h, %h, %w, %r, %b, %b : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<60x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

func.func @cell_batch(%x: tensor<3x8xf32>, %h: tensor<2x16xf32>, %w: tensor<48x8xf32>, %r: tensor<48x16xf32>, %b: tensor<48xf32>) {
  // expected-error @+1 {{'rnn.gru_cell' op h dimension 0 is 2, expected 3}}
  %h1 = rnn.gru_cell %x, %h, %w, %r, %b, %b : (tensor<3x8xf32>, tensor<2x16xf32>, tensor<48x8xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @cell_acts(%x: tensor<2x8xf32>, %h: tensor<2x16xf32>, %w: tensor<16x8xf32>, %r: tensor<16x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'rnn.rnn_cell' op needs 1 activations, got 2}}
  %h1 = rnn.rnn_cell %x, %h, %w, %r, %b, %b {activations = ["Tanh", "Relu"]} : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @seq_hidden(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>, %b: tensor<1x64xf32>) {
  // expected-error @+1 {{'rnn.sequence' op hidden_size is 8 but the weights say 16}}
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 8 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> (tensor<5x1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @seq_directions(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>, %b: tensor<1x64xf32>) {
  // expected-error @+1 {{'rnn.sequence' op R dimension 0 is 1, expected 2}}
  %y, %hn, %cn = rnn.sequence lstm bidirectional %x, %w, %r, %b, %b {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  return
}

// -----

func.func @seq_cn(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %b: tensor<1x48xf32>) {
  // expected-error @+1 {{'rnn.sequence' op has c_n exactly when the cell is an LSTM}}
  %y, %hn, %cn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x48xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return
}

// -----

func.func @seq_lbr(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{'rnn.sequence' op linear_before_reset is a GRU attribute}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 16 : i64, linear_before_reset} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return
}

// -----

func.func @seq_lens(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>, %b: tensor<1x16xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.sequence' op sequence_lens must be i32}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b lens(%l) {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<2xi64>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return
}

// -----

func.func @proj(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %b: tensor<1x64xf32>) {
  // expected-error @+1 {{'rnn.input_projection' op P dimension 1 is 4, expected 5}}
  %p = rnn.input_projection %x, %w, %b : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64xf32>) -> tensor<1x4x2x64xf32>
  return
}

// -----

func.func @cell_peephole_size(%x: tensor<2x8xf32>, %h: tensor<2x16xf32>, %w: tensor<64x8xf32>, %r: tensor<64x16xf32>, %b: tensor<64xf32>, %p: tensor<32xf32>) {
  // expected-error @+1 {{'rnn.lstm_cell' op peephole dimension 0 is 32, expected 48}}
  %h1, %c1 = rnn.lstm_cell %x, %h, %h, %w, %r, %b, %b peephole(%p) : (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

func.func @seq_peephole_directions(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>, %b: tensor<1x64xf32>, %p: tensor<2x48xf32>) {
  // expected-error @+1 {{'rnn.sequence' op peephole dimension 0 is 2, expected 1}}
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b peephole(%p) {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>, tensor<2x48xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return
}

// -----

func.func @seq_gru_input_forget(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %b: tensor<1x48xf32>) {
  // expected-error @+1 {{'rnn.sequence' op input_forget and peephole weights are LSTM variants}}
  %y, %hn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 16 : i64, input_forget} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x48xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return
}
