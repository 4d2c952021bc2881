// RUN: lstm-opt %s --convert-rnn-to-linalg --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-linalg=unroll-steps=3 --split-input-file | FileCheck %s --check-prefix=UNROLL
// RUN: lstm-opt %s --convert-rnn-to-linalg=iree-dispatch=true --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=IREE
// RUN: lstm-opt %s --convert-rnn-to-linalg=iree-dispatch=true --allow-unregistered-dialect --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=IREEBIG

// iree-dispatch: the time loop inside IREE's flow.dispatch.region (generic
// form: IREE's dialects are not linked), the states h and c in one flat
// tensor [h; c] created in the region and updated in place with
// insert_slice, the output sequence too; the step's matmul with R^T carries
// IREE's lowering config (no distribution: one workgroup for the whole
// recurrence). A two-phase GRU's second matmul has none (one per dispatch).
// IREE-LABEL: func.func @lstm(
// IREE: %[[R:.*]]:2 = "flow.dispatch.region"() ({
// IREE:   tensor.empty() : tensor<16xf32>
// IREE:   scf.for %{{.*}} iter_args(%[[ST:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}}) -> (tensor<16xf32>, tensor<3x2x4xf32>)
// IREE:     tensor.extract_slice %[[ST]][0] [8] [1] : tensor<16xf32> to tensor<8xf32>
// IREE:     tensor.extract_slice %[[ST]][8] [8] [1] : tensor<16xf32> to tensor<8xf32>
// IREE:     linalg.matmul {compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [0, 0, 0], vector_common_parallel = [1, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>}
// IREE:     tensor.insert_slice %{{.*}} into %[[Y]][%{{.*}}, 0, 0] [1, 2, 4] [1, 1, 1]
// IREE:     %[[H:.*]] = tensor.insert_slice %{{.*}} into %[[ST]][0] [8] [1]
// IREE:     tensor.insert_slice %{{.*}} into %[[H]][8] [8] [1]
// IREE:   "flow.return"(
// IREE: }, {
// IREE: }) {operandSegmentSizes = array<i32: 0, 0>} : () -> (tensor<16xf32>, tensor<3x2x4xf32>)
// IREE: tensor.extract_slice %[[R]]#0[0] [8] [1]
// IREE: tensor.extract_slice %[[R]]#0[8] [8] [1]
// IREE-LABEL: func.func @gru_reset_before(
// IREE: "flow.dispatch.region"
// IREE:   linalg.matmul {compilation_info
// IREE:   linalg.matmul ins(
// IREE: "flow.return"
// IREE-LABEL: func.func @rnn_reverse_lens(
// IREE: "flow.dispatch.region"
// IREE-LABEL: func.func @lstm_peephole_input_forget(
// IREE: "flow.dispatch.region"

// unroll-steps=3: the 3 steps one after the other, no loop; each step's
// matmul with R^T and its Y row at a constant time index.
// UNROLL-LABEL: func.func @lstm(
// UNROLL-NOT: scf.for
// UNROLL-COUNT-4: linalg.matmul
// UNROLL: tensor.insert_slice %{{.*}} into %{{.*}}[%c2, 0, 0] [1, 2, 4] [1, 1, 1]
// UNROLL-NOT: scf.for
// UNROLL-LABEL: func.func @gru_reset_before(

// An LSTM: the input GEMM over all T*B rows with W^T (a constant [I, 4H]),
// the biases added once; the time loop carries h, the output sequence and c
// as tensors; per step one matmul of h with R^T [H, 4H] and one generic for
// the cell (math.exp/tanh, no approximation); Y[t] inserted.
// CHECK-LABEL: func.func @lstm(
// CHECK-NOT: rnn.
// CHECK: %[[WT:.*]] = arith.constant dense<5.000000e-01> : tensor<5x16xf32>
// CHECK: %[[RT:.*]] = arith.constant dense<2.500000e-01> : tensor<4x16xf32>
// CHECK: %[[BIAS:.*]] = arith.constant dense<2.500000e-01> : tensor<16xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %[[WT]] : tensor<6x5xf32>, tensor<5x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[BIAS]] : tensor<16xf32>) outs(%[[P]] : tensor<6x16xf32>)
// CHECK: scf.for %[[T:.*]] = %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}) -> (tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<2x4xf32>)
// CHECK:   tensor.extract_slice %{{.*}}[%[[T]], 0, 0] [1, 2, 16] [1, 1, 1] : tensor<3x2x16xf32> to tensor<2x16xf32>
// CHECK:   linalg.matmul ins(%[[H]], %[[RT]] : tensor<2x4xf32>, tensor<4x16xf32>)
// CHECK:   linalg.generic
// CHECK:     math.exp
// CHECK:     math.tanh
// CHECK:   -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:   tensor.insert_slice %{{.*}} into %[[Y]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK:   scf.yield
// CHECK: tensor.insert_slice {{.*}} into {{.*}}[0, 0, 0, 0] [3, 1, 2, 4] [1, 1, 1, 1] : tensor<3x1x2x4xf32> into tensor<3x1x2x4xf32>
func.func @lstm(%x: tensor<3x2x5xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %hn, %cn : tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// A GRU with the reset before its matmul: r and z from h R_rz^T [H, 2H], then
// n from (r * h) R_n^T [H, H]: two matmuls per step.
// CHECK-LABEL: func.func @gru_reset_before(
// CHECK: scf.for
// CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x8xf32>)
// CHECK:   linalg.generic
// CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK:   linalg.generic
// CHECK:   scf.yield
func.func @gru_reset_before(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x12x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x12x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x12xf32>
  %y, %hn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

// A reverse RNN with sequence_lens: each row's first `len` steps of X
// reversed before the loop (a gather: tensor.extract at len - 1 - t) and of
// Y after it; in the cell, rows past their length keep h and write zeros;
// a row of length 0 ends in zeros.
// CHECK-LABEL: func.func @rnn_reverse_lens(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2xi32>) outs(%{{.*}} : tensor<3x2x5xf32>)
// CHECK:   linalg.index 0
// CHECK:   arith.cmpi slt
// CHECK:   tensor.extract %{{.*}} : tensor<3x2x5xf32>
// CHECK: scf.for
// CHECK:   linalg.generic {{.*}} ins({{.*}}, %{{.*}} : {{.*}}, tensor<2xi32>)
// CHECK:     arith.cmpi slt
// CHECK:     arith.select
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2xi32>) outs(%{{.*}} : tensor<3x2x4xf32>)
// CHECK:   tensor.extract %{{.*}} : tensor<3x2x4xf32>
// CHECK: arith.cmpi eq
func.func @rnn_reverse_lens(%x: tensor<3x2x5xf32>, %lens: tensor<2xi32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  %y, %hn = rnn.sequence rnn reverse %x, %w, %r, %b, %b lens(%lens) {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<2xi32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %hn : tensor<3x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// An LSTM with peepholes and input_forget: the cell's generic reads the
// peephole weights (i, f, o) by the unit's index; f = 1 - i.
// CHECK-LABEL: func.func @lstm_peephole_input_forget(
// CHECK: %[[PEEP:.*]] = arith.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00]> : tensor<6xf32>
// CHECK: scf.for
// CHECK:   linalg.generic
// CHECK:     linalg.index 1
// CHECK:     tensor.extract %[[PEEP]]
// CHECK:     arith.subf
func.func @lstm_peephole_input_forget(%x: tensor<3x1x2xf32>) -> tensor<3x1x1x2xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x8x2xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x8x2xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x8xf32>
  %p = onnx.initializer "P" dense<[[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]]> : tensor<1x6xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b peephole(%p) {hidden_size = 2 : i64, input_forget} : (tensor<3x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x6xf32>) -> (tensor<3x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  return %y : tensor<3x1x1x2xf32>
}

// -----

// A layer whose step tensors do not fit the 32 KiB of stack IREE gives a
// dispatch (the gates [8, 2048] alone take 64 KiB) keeps the plain loop,
// with a remark.
// IREE-LABEL: func.func @lstm_large_step(
// IREE-NOT: flow.dispatch.region
// IREE: scf.for
// IREE: return
// IREEBIG: remark: convert-rnn-to-linalg: the time loop stays outside an IREE dispatch region: one step's tensors take about 112 KiB, over the 32 KiB of stack IREE gives a dispatch
func.func @lstm_large_step(%x: tensor<3x8x4xf32>) -> tensor<3x1x8x512xf32> {
  %w = onnx.initializer "W" dense<0.01> : tensor<1x2048x4xf32>
  %r = onnx.initializer "R" dense<0.001> : tensor<1x2048x512xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x2048xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 512 : i64} : (tensor<3x8x4xf32>, tensor<1x2048x4xf32>, tensor<1x2048x512xf32>, tensor<1x2048xf32>, tensor<1x2048xf32>) -> (tensor<3x1x8x512xf32>, tensor<1x8x512xf32>, tensor<1x8x512xf32>)
  return %y : tensor<3x1x8x512xf32>
}
