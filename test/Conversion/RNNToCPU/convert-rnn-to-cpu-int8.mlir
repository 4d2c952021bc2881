// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-dot=1 vector-width=16" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=VNNI
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 vector-width=8" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=WIDE
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-pair-dot=1 vector-width=8" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=PAIR
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-pair-dot=1 vector-width=16" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARKPAIR
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-pair-dot=1 vector-width=8 parallel-min-work=0 threads=2" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=PAIRTEAM
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-pair-dot=1 dot-isa=aarch64 vector-width=4" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=SMULL
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-pair-dot=1 dot-isa=aarch64 vector-width=4" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARKSMULL
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-dot=1 vector-width=8" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK8
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-dot=1 vector-width=8 parallel-min-work=0 threads=2" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=TEAM
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-dot=1 dot-isa=aarch64 vector-width=4" --canonicalize --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=SDOT
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 int8-dot=1 dot-isa=aarch64 vector-width=4" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK4
// layer-precision: the layer at loc("layer") f32, the other int8 (one
// module: without the split).
// RUN: lstm-opt %s --convert-rnn-to-cpu="precision=int8 layer-precision=layer=f32" 2>&1 >/dev/null | FileCheck %s --check-prefix=PERLAYER
// PERLAYER-DAG: loc("layer"): CPU kernel: {{.*}}; precision f32{{$}}
// PERLAYER-DAG: loc("gru"): CPU kernel: {{.*}}; precision int8 (

// precision=int8 with int8-dot (VNNI): the weights are quantized per gate
// row (W = 0.5 everywhere: scale 0.5/127, every q = 127) and packed four k
// to a 32-bit word ([D][H/V][ceil(K/4)][G][V]: K = 5 inputs -> 2 words);
// 128 * the sum of each row's q is kept beside them (127 * 5 * 128 = 81280)
// for vpdpbusd's unsigned operands (q + 128).
// VNNI-DAG: memref.global "private" constant @__lstm_opt_layer_W_comp : memref<64xi32> = dense<[81280, 81280, 81280, 81280, 0,
// VNNI-DAG: memref.global "private" constant @__lstm_opt_layer_W_scale : memref<64xf32> = dense<[0.00393700786, 0.00393700786, 0.00393700786, 0.00393700786, 0.000000e+00,
// VNNI-DAG: memref.global "private" constant @__lstm_opt_layer_W_i8x4 : memref<128xi32> = dense<"0x7F7F7F7F
// VNNI-DAG: memref.global "private" constant @__lstm_opt_layer_R_i8x4 : memref<64xi32>
// VNNI-LABEL: func.func private @__lstm_opt_layer(
// VNNI: memref.expand_shape {{.*}} : memref<128xi32> into memref<1x1x2x4x16xi32>
// x quantized once per row: max |x| (a plain max; v - v summed finds NaNs),
// q = round(x * 127 / max) + 128 as u8.
// VNNI: arith.maxnumf {{.*}} fastmath<nnan> : vector<16xf32>
// VNNI: vector.reduction <maxnumf>, {{.*}} fastmath<nnan> : vector<16xf32> into f32
// VNNI: math.roundeven {{.*}} : vector<16xf32>
// VNNI: arith.fptosi {{.*}} : vector<16xf32> to vector<16xi32>
// VNNI: arith.trunci {{.*}} : vector<16xi32> to vector<16xi8>
// The GEMMs: one vpdpbusd per gate and word of four k, the row's word
// broadcast; the sums dequantized: (sum - comp) * weight scale * row scale.
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"({{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// VNNI: arith.subi {{.*}} : vector<16xi32>
// VNNI: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>

// Without int8-dot: one s8 per weight ([D][H/V][K][G][V]), sign-extended and
// converted in registers, f32 FMAs on the quantized operands (exact).
// WIDE-DAG: memref.global "private" constant @__lstm_opt_layer_W_i8 : memref<160xi8>
// WIDE-DAG: memref.global "private" constant @__lstm_opt_layer_R_i8 : memref<128xi8>
// WIDE-LABEL: func.func private @__lstm_opt_layer(
// WIDE: math.roundeven {{.*}} : vector<8xf32>
// WIDE: arith.extsi {{.*}} : vector<8xi8> to vector<8xi32>
// WIDE: arith.sitofp {{.*}} : vector<8xi32> to vector<8xf32>
// WIDE: vector.fma
// WIDE-NOT: vpdpbusd

// int8-pair-dot (x86 without VNNI): two k per lane, s8, [D][H/V][ceil(K/2)][G][2V]
// (K = 5 inputs -> 3 pairs, the last k's partner 0), sign-extended to 16
// bits in registers; x and h quantized to q itself as i16 (no + 128, no
// compensation); pmaddwd's exact 32-bit sums added up.
// PAIR-NOT: _comp
// PAIR-DAG: memref.global "private" constant @__lstm_opt_layer_W_i8x2 : memref<192xi8> = dense<"0x7F7F7F7F
// PAIR-DAG: memref.global "private" constant @__lstm_opt_layer_R_i8x2 : memref<128xi8>
// PAIR-LABEL: func.func private @__lstm_opt_layer(
// PAIR: memref.expand_shape {{.*}} : memref<192xi8> into memref<1x1x3x4x16xi8>
// PAIR: arith.fptosi {{.*}} : vector<8xf32> to vector<8xi32>
// PAIR-NEXT: arith.trunci {{.*}} : vector<8xi32> to vector<8xi16>
// PAIR: arith.extsi {{.*}} : vector<16xi8> to vector<16xi16>
// PAIR: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"({{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// PAIR: arith.addi {{.*}} : vector<8xi32>
// PAIR-NOT: arith.subi {{.*}} : vector<8xi32>
// PAIR: arith.sitofp {{.*}} : vector<8xi32> to vector<8xf32>
// PAIR-NOT: vector<8xi8> to vector<8xi32>
// REMARKPAIR: integer products, gates and states f32): AVX512BW vpmaddwd on pairs of k, exact 32-bit sums;

// int8-pair-dot with dot-isa=aarch64 (NEON without DotProd): the same pairs
// of k; the operands q as i8, two to a 16-bit broadcast word; smull's 16-bit
// products summed pairwise into 32 bits by saddlp.
// SMULL-NOT: _comp
// SMULL-LABEL: func.func private @__lstm_opt_layer(
// SMULL: memref.expand_shape {{.*}} : memref<96xi8> into memref<1x1x3x4x8xi8>
// SMULL: arith.trunci {{.*}} : vector<4xi32> to vector<4xi8>
// SMULL: vector.broadcast {{.*}} : i16 to vector<4xi16>
// SMULL: llvm.call_intrinsic "llvm.aarch64.neon.smull.v8i16"({{.*}}) : (vector<8xi8>, vector<8xi8>) -> vector<8xi16>
// SMULL: llvm.call_intrinsic "llvm.aarch64.neon.saddlp.v4i32.v8i16"({{.*}}) : (vector<8xi16>) -> vector<4xi32>
// SMULL: arith.addi {{.*}} : vector<4xi32>
// SMULL: arith.sitofp {{.*}} : vector<4xi32> to vector<4xf32>
// REMARKSMULL: integer products, gates and states f32): AArch64 NEON smull + saddlp on pairs of k, exact 32-bit sums;

// dot-isa=aarch64 at 4 lanes: DotProd's sdot (s8 * s8): the same words of
// four k, the operands q themselves (no + 128), so no compensation.
// SDOT-NOT: _comp
// SDOT-LABEL: func.func private @__lstm_opt_layer(
// SDOT: memref.expand_shape {{.*}} : memref<32xi32> into memref<1x1x2x4x4xi32>
// SDOT: arith.fptosi {{.*}} : vector<4xf32> to vector<4xi32>
// SDOT-NEXT: arith.trunci {{.*}} : vector<4xi32> to vector<4xi8>
// SDOT: llvm.call_intrinsic "llvm.aarch64.neon.sdot.v4i32.v16i8"({{.*}}) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// SDOT-NOT: arith.subi {{.*}} : vector<4xi32>
// SDOT: arith.sitofp {{.*}} : vector<4xi32> to vector<4xf32>
// REMARK4: integer products, gates and states f32): AArch64 DotProd sdot;

// VNNI at 8 lanes is the 256-bit vpdpbusd (AVX-VNNI or AVX512_VNNI+VL).
// REMARK8: precision int8 (weights int8 with one scale per gate row, x and h quantized per row and step to their range, integer products, gates and states f32): VNNI vpdpbusd (256-bit); int8 against f32 on random inputs (3 steps, simulated on the host): max rel error {{[0-9]\.[0-9]e-0[2-5]}}
func.func @lstm(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x16x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x16x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x16xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) loc("layer")
  return %y : tensor<3x1x2x4xf32>
}

// -----

// A GRU with the reset before its matmul: r * h is quantized per row too,
// between the step's two phases.
// WIDE-LABEL: func.func private @__lstm_opt_gru(
// WIDE-COUNT-3: math.roundeven
// REMARK8: precision int8
func.func @gru(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x4xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x12x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x12x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x12xf32>
  %y, %hn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 4 : i64} : (tensor<3x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x4xf32>, tensor<1x2x4xf32>) loc("gru")
  return %y : tensor<3x1x2x4xf32>
}

// -----

// On an OpenMP team (threads=2, two hidden blocks of 8), each thread
// keeps the quantized h of its own on its stack and quantizes the whole new
// h into it after the step's barrier: one barrier per step, none after the
// quantization (no thread reads another's copy).
// With pmaddwd the team's own copies hold q as i16.
// PAIRTEAM-LABEL: func.func private @__lstm_opt_team_lstm(
// PAIRTEAM:       omp.parallel
// PAIRTEAM:         memref.alloca() {alignment = 64 : i64} : memref<2x2x16xi16>
// PAIRTEAM:         llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// PAIRTEAM:         omp.terminator
// TEAM-LABEL: func.func private @__lstm_opt_team_lstm(
// TEAM-NOT:   memref<2x2x16xi8>
// TEAM:       omp.parallel
// TEAM:         %[[HQ:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2x16xi8>
// TEAM:         %[[HS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// TEAM:         scf.for %{{.*}} = %c0 to %c3 step %c1 {
// TEAM:           vector.load %[[HQ]]
// TEAM:           memref.load %[[HS]]
// TEAM:           omp.barrier
// TEAM-NOT:       omp.barrier
// TEAM:           memref.store %{{.*}}, %[[HS]]
// TEAM:           vector.store %{{.*}}, %[[HQ]]
// TEAM-NOT:       omp.barrier
// TEAM:         omp.terminator
func.func @team_lstm(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x16xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x64x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x64x16xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x64xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 16 : i64} : (tensor<3x2x5xf32>, tensor<1x64x5xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> (tensor<3x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>) loc("team_lstm")
  return %y : tensor<3x1x2x16xf32>
}

// -----

// A GRU with the reset before its matmul on a team: r * h is quantized by
// every thread into its own copy too, so each step has the barrier after
// each phase and no other.
// TEAM-LABEL: func.func private @__lstm_opt_team_gru(
// TEAM:       omp.parallel
// TEAM:         memref.alloca() {alignment = 64 : i64} : memref<2x2x16xi8>
// TEAM:         memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// TEAM:         %[[RHQ:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x16xi8>
// TEAM:         scf.for %{{.*}} = %c0 to %c3 step %c1 {
// TEAM:           omp.barrier
// TEAM:           vector.store %{{.*}}, %[[RHQ]]
// TEAM:           vector.load %[[RHQ]]
// TEAM:           omp.barrier
// TEAM-NOT:       omp.barrier
// TEAM:         omp.terminator
func.func @team_gru(%x: tensor<3x2x5xf32>) -> tensor<3x1x2x16xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x48x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x48x16xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x48xf32>
  %y, %hn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 16 : i64} : (tensor<3x2x5xf32>, tensor<1x48x5xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x48xf32>) -> (tensor<3x1x2x16xf32>, tensor<1x2x16xf32>) loc("team_gru")
  return %y : tensor<3x1x2x16xf32>
}

// -----

// A batch whose quantized h passes 32 KiB: one shared copy, each thread
// quantizing its blocks (thread 0 storing the scales), and a second
// barrier before any thread reads it (T = 1: no time loop).
// TEAM-LABEL: func.func private @__lstm_opt_team_wide(
// TEAM:       memref.alloc() {alignment = 64 : i64} : memref<2x1000x16xi8>
// TEAM:       omp.parallel
// TEAM-NOT:     memref.alloca
// TEAM:         omp.barrier
// TEAM:         scf.if
// TEAM:         omp.barrier
// TEAM-NEXT:    omp.terminator
func.func @team_wide(%x: tensor<1x1000x5xf32>) -> tensor<1x1x1000x16xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x64x5xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x64x16xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x64xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 16 : i64} : (tensor<1x1000x5xf32>, tensor<1x64x5xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> (tensor<1x1x1000x16xf32>, tensor<1x1000x16xf32>, tensor<1x1000x16xf32>) loc("team_wide")
  return %y : tensor<1x1x1000x16xf32>
}
