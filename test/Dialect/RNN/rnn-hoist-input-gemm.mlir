// RUN: lstm-opt %s -rnn-hoist-input-gemm | FileCheck %s

// The input GEMM of all steps moves out of the time loop.

// CHECK-LABEL: func.func @hoist
// CHECK: %[[P:.*]] = rnn.input_projection %arg0, %arg1, %arg3 : (tensor<5x2x8xf32>, tensor<2x64x8xf32>, tensor<2x64xf32>) -> tensor<2x5x2x64xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = rnn.recurrence lstm bidirectional %[[P]], %arg2, %arg4 init(%arg5, %arg5) {hidden_size = 16 : i64, rnn.source_nodes = 7 : i64}
// CHECK-NOT: rnn.sequence
// CHECK: return %[[Y]]
func.func @hoist(%x: tensor<5x2x8xf32>, %w: tensor<2x64x8xf32>, %r: tensor<2x64x16xf32>, %bw: tensor<2x64xf32>, %br: tensor<2x64xf32>, %h0: tensor<2x2x16xf32>) -> tensor<5x2x2x16xf32> {
  %y, %hn, %cn = rnn.sequence lstm bidirectional %x, %w, %r, %bw, %br init(%h0, %h0) {hidden_size = 16 : i64, rnn.source_nodes = 7 : i64} : (tensor<5x2x8xf32>, tensor<2x64x8xf32>, tensor<2x64x16xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  return %y : tensor<5x2x2x16xf32>
}
