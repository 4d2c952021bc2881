// RUN: lstm-opt %s --convert-rnn-to-gpu=precision=bf16 --split-input-file -verify-diagnostics | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-gpu="precision=bf16 units-per-block=2" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=GRID

// precision=bf16: the persistent kernel's recurrent products on the tensor
// cores. The LSTM's 28 gate rows of H = 7 are two tiles of 16 rows (4 units
// of 4 gates each); one block holds both (2 warps, one a tile; 8 k tiles of
// 16 would need 1 warp each: H = 7 is one k tile). Each lane keeps its A
// fragments (4 words of two bf16, cvt.rn.bf16x2.f32 of R) for the whole
// sequence; per step it rounds its two pairs of h to bf16 for the B
// fragment, runs mma.sync m16n8k16 and leaves its sums in shared memory
// (after h, double-buffered: 2 x 2 x 16 floats; then 2 tiles x 16 x 8);
// after a barrier thread (b, unit) adds its 4 gate sums and runs the cell.
// CHECK-LABEL: func.func private @__lstm_opt_gpu_layer(
// CHECK:   %[[SMEM:.*]] = arith.constant 1280 : i32
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c1{{.*}}) threads in (%c64{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:   gpu.func @__lstm_opt_gpu_layer_persist(%[[R:[a-z0-9]*]]: memref<1x4x7x7xf32>{{.*}}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:     %[[ST:.*]] = memref.view {{.*}} to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK:     %[[RED:.*]] = memref.view {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:     memref.load %[[R]]
// CHECK:     llvm.inline_asm "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f"
// CHECK:     scf.for %{{.*}} = %{{.*}} to %c5 step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK-NOT:   memref.load %[[R]]
// CHECK:       scf.if
// CHECK:         memref.load %[[ST]]
// CHECK:         llvm.inline_asm "cvt.rn.bf16x2.f32
// CHECK:         llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};", "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f"
// CHECK:         memref.store %{{.*}}, %[[RED]]
// CHECK:       gpu.barrier
// CHECK:       memref.load %[[RED]]
// CHECK:       math.tanh
// CHECK:       memref.store %{{.*}}, %[[ST]]
// CHECK:       gpu.barrier
// With one tile a block (units-per-block=2: 4 units, the tile's), 2 blocks
// hand h to each other as (value, step) words.
// GRID-LABEL: func.func private @__lstm_opt_gpu_layer(
// GRID:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c2{{.*}}) threads in (%c32{{.*}})
// GRID:     llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// GRID:     llvm.store {{.*}} atomic syncscope("device") monotonic
func.func @lstm(%x: tensor<5x2x3xf32>, %h0: tensor<1x2x7xf32>, %c0: tensor<1x2x7xf32>) -> (tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x28x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x28x7xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x28xf32>
  // expected-remark @below {{convert-rnn-to-gpu: bf16 recurrent products on the tensor cores (mma.sync m16n8k16, f32 sums): 1 block of 64 threads, 2 tiles of 16 gate rows, 1 warp a tile}}
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b init(%h0, %c0) {hidden_size = 7 : i64} : (tensor<5x2x3xf32>, tensor<1x28x3xf32>, tensor<1x28x7xf32>, tensor<1x28xf32>, tensor<1x28xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>) -> (tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>)
  return %y, %hn, %cn : tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>
}

// -----

// H = 1024: 64 k tiles are spread over 8 warps a tile (8 each: 32 registers
// of weights a lane). With the pass's default 48 blocks and 48 KiB (not an
// sm_90's 132 and 227 KiB: test/Target/GPU/ptxas.test) a block would need 6
// tiles: it stays f32 (there, the step kernels).
// CHECK-LABEL: func.func @lstm_h1024(
// CHECK: gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_step
// CHECK: gpu.module
// CHECK-NOT: llvm.inline_asm
func.func @lstm_h1024(%x: tensor<2x4x3xf32>) -> tensor<2x1x4x1024xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4096x3xf32>
  %r = onnx.initializer "R" dense<0.001> : tensor<1x4096x1024xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4096xf32>
  // expected-remark @below {{convert-rnn-to-gpu: runs f32, not bf16: 1 x 43 blocks of 1536 threads (6 tiles of 16 rows, 8 warps each) would need 57344 bytes of shared memory (at most 49152), 116 registers a thread (at most 40) and 43 co-resident blocks (at most 48)}}
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 1024 : i64} : (tensor<2x4x3xf32>, tensor<1x4096x3xf32>, tensor<1x4096x1024xf32>, tensor<1x4096xf32>, tensor<1x4096xf32>) -> (tensor<2x1x4x1024xf32>, tensor<1x4x1024xf32>, tensor<1x4x1024xf32>)
  return %y : tensor<2x1x4x1024xf32>
}

// -----

// What the bf16 design cannot run stays f32, with the reason.
// CHECK-LABEL: func.func @gru_reset_before(
// CHECK-NOT: llvm.inline_asm
func.func @gru_reset_before(%x: tensor<4x2x3xf32>) -> tensor<4x1x2x5xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x15x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x15x5xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x15xf32>
  // expected-remark @below {{convert-rnn-to-gpu: runs f32, not bf16: a GRU without linear_before_reset multiplies r * h, which its first products give, in a second product}}
  %y, %hn = rnn.sequence gru forward %x, %w, %r, %b, %b {hidden_size = 5 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return %y : tensor<4x1x2x5xf32>
}
func.func @rnn_batch16(%x: tensor<4x16x3xf32>) -> tensor<4x1x16x5xf32> {
  %w = onnx.initializer "Wr" dense<0.5> : tensor<1x5x3xf32>
  %r = onnx.initializer "Rr" dense<0.25> : tensor<1x5x5xf32>
  %b = onnx.initializer "Br" dense<0.125> : tensor<1x5xf32>
  // expected-remark @below {{convert-rnn-to-gpu: runs f32, not bf16: batch 16 is above 8, the columns of an mma tile}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 5 : i64} : (tensor<4x16x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x5xf32>, tensor<1x5xf32>) -> (tensor<4x1x16x5xf32>, tensor<1x16x5xf32>)
  return %y : tensor<4x1x16x5xf32>
}
