// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=bf16 vector-width=8" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-cpu="vector-width=8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=F32
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=bf16 bf16-dot=1 vector-width=16" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=DOT
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=bf16 bf16-dot=1 vector-width=8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=DOT8
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=bf16 bf16-dot=1 dot-isa=aarch64 vector-width=4" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=BFDOT

// bf16-dot at 16 lanes: per gate and pair of k one x86vector.avx512.dot
// (vdpbf16ps) on the weights' words seen as 32 bf16, the operand pair packed
// into one word (low: k = 2p, high: k = 2p + 1) and broadcast.
// DOT-LABEL: func.func private @__lstm_opt_layer(
// DOT: %[[W:.*]] = vector.load %{{.*}} : memref<1x1x3x4x16xi32>, vector<16xi32>
// DOT: %[[WB:.*]] = vector.bitcast %[[W]] : vector<16xi32> to vector<32xbf16>
// DOT: x86vector.avx512.dot %{{.*}}, %[[WB]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// Not at 8 lanes (the op needs AVX-512 registers): widened instead.
// DOT8-NOT: x86vector

// dot-isa=aarch64 at 4 lanes: the same words and packed operands, AArch64's
// BF16 bfdot (acc + lo * lo + hi * hi per lane) instead.
// BFDOT-LABEL: func.func private @__lstm_opt_layer(
// BFDOT: %[[W:.*]] = vector.load %{{.*}} : memref<1x1x3x4x4xi32>, vector<4xi32>
// BFDOT: %[[WB:.*]] = vector.bitcast %[[W]] : vector<4xi32> to vector<8xbf16>
// BFDOT: llvm.call_intrinsic "llvm.aarch64.neon.bfdot.v4f32.v8bf16"(%{{.*}}, %[[WB]], %{{.*}}) : (vector<4xf32>, vector<8xbf16>, vector<8xbf16>) -> vector<4xf32>
// BFDOT-NOT: x86vector

// precision=bf16: the packed weights are 32-bit words, each the bf16 of two
// consecutive k (K = 5 input features -> 3 words, the last with k = 4 alone;
// H = 4 -> 4 words per gate row pair), and the GEMMs get both f32 weight
// vectors from one load: k = 2p by a shift left by 16, k = 2p + 1 by a mask.
// x and h are read rounded to bf16 (x once per layer, h once per step).
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_W_bf16 : memref<96xi32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_R_bf16 : memref<64xi32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_B : memref<32xf32>
// CHECK-LABEL: func.func private @__lstm_opt_layer(
// CHECK:   memref.expand_shape {{.*}} : memref<96xi32> into memref<1x1x3x4x8xi32>
// CHECK:   memref.expand_shape {{.*}} : memref<64xi32> into memref<1x1x2x4x8xi32>
// x rounded once: the bits + 0x7fff + their lsb, masked to the upper half.
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       %[[XB:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:       arith.addi %[[XB]], %c32767_i32
// CHECK:       arith.andi %{{.*}}, %c-65536_i32
// The input GEMM over pairs: load a word vector, shift and mask.
// CHECK:   vector.load %{{.*}} : memref<1x1x3x4x8xi32>, vector<8xi32>
// CHECK:   arith.shli %{{.*}}, %cst{{.*}} : vector<8xi32>
// CHECK:   arith.andi %{{.*}}, %cst{{.*}} : vector<8xi32>
// CHECK:   vector.fma
// h stored exact (for the cell and the outputs) and rounded (for the GEMM).
// CHECK:   arith.andi %{{.*}} : vector<8xi32>
// CHECK:   vector.store
// F32-DAG: memref.global "private" constant @__lstm_opt_layer_W : memref<160xf32>
// F32-DAG: memref.global "private" constant @__lstm_opt_layer_R : memref<128xf32>
// F32-LABEL: func.func @lstm(
// F32-NOT: xi32>
func.func @lstm(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<3x1x2x4xf32>
}

// -----

// A layer's lstm_opt.precision overrides the option: f32 here under
// precision=bf16 ...
// CHECK-DAG: memref.global "private" constant @__lstm_opt_keep_W : memref<{{[0-9]+}}xf32>
// F32-LABEL: func.func @keep_f32(
func.func @keep_f32(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, lstm_opt.precision = "f32"} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>) loc("keep")
  return %y : tensor<3x1x2x4xf32>
}

// -----

// ... and bf16 here under the default.
// F32-DAG: memref.global "private" constant @__lstm_opt_lower_W_bf16 : memref<{{[0-9]+}}xi32>
func.func @lower_bf16(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 4 : i64, lstm_opt.precision = "bf16"} : (tensor<3x2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>) loc("lower")
  return %y : tensor<3x1x2x4xf32>
}
