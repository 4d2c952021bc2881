// RUN: lstm-opt %s --convert-rnn-to-gpu --split-input-file | FileCheck %s --check-prefix=REGS
// RUN: lstm-opt %s --convert-rnn-to-gpu="units-per-block=2" --split-input-file | FileCheck %s --check-prefix=REGSGRID
// RUN: lstm-opt %s --convert-rnn-to-gpu=weights=shared --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-gpu=mapping=cpu --split-input-file | FileCheck %s --check-prefix=CPU
// RUN: lstm-opt %s --convert-rnn-to-gpu="units-per-block=2 weights=shared" --split-input-file | FileCheck %s --check-prefix=FLAGS
// RUN: lstm-opt %s --convert-rnn-to-gpu="units-per-block=2 grid-sync=barrier" --split-input-file | FileCheck %s --check-prefix=GRID
// RUN: lstm-opt %s --convert-rnn-to-gpu="shared-bytes=232448 weights=shared" --split-input-file | FileCheck %s --check-prefix=DYN

// The default design keeps the recurrent weights in registers: each group of
// L lanes is one unit (L at least the batch, 2 here: 7 groups, padded to a
// warp of 32 threads), each lane holds its k of the unit's 4 gate rows for
// the whole sequence, computes them against both batch rows, and after the
// shuffles lane b runs the cell of batch row b, its h and c (and the next
// step's projected input) carried in registers. Shared memory holds only h,
// double-buffered (2 x 2 x 8 floats); one barrier per step.
// REGS-LABEL: func.func private @__lstm_opt_gpu_layer(
// REGS:   %[[SMEM:.*]] = arith.constant 128 : i32
// REGS:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c1{{.*}}) threads in (%c32{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// REGS:   gpu.func @__lstm_opt_gpu_layer_persist(%[[R:[a-z0-9]*]]: memref<1x4x7x7xf32>{{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// REGS:     %[[ST:.*]] = memref.view {{.*}} to memref<32xf32, #gpu.address_space<workgroup>>
// REGS-NOT: memref.view
// REGS:     gpu.barrier
// REGS:     memref.load %[[R]]
// REGS:     scf.for %{{.*}} = %{{.*}} to %c5 step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32) {
// REGS-NOT:   memref.load %[[R]]
// REGS:       memref.load %[[ST]]
// REGS:       math.fma
// REGS:       gpu.shuffle  xor %{{.*}}, %c1_i32
// REGS:       scf.if
// REGS:         memref.store %{{.*}}, %[[ST]]
// REGS:       gpu.barrier
// REGS:       scf.yield
// REGS-NOT: llvm.atomicrmw
// Several blocks (2 units each): h goes between them as (value, step)
// words, read into the slot of the step; the barrier after the fill is the
// step's only one.
// REGSGRID-LABEL: func.func private @__lstm_opt_gpu_layer(
// REGSGRID:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// REGSGRID:     scf.for %{{.*}} = %{{.*}} to %c5 step %{{.*}} iter_args(
// REGSGRID:       scf.if
// REGSGRID:       } else {
// REGSGRID:         scf.while
// REGSGRID:           llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
// REGSGRID:       gpu.barrier
// REGSGRID:       math.fma
// REGSGRID:       gpu.shuffle
// REGSGRID-NOT:   gpu.barrier
// REGSGRID:       scf.if
// REGSGRID:         llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr
// REGSGRID-NOT:   gpu.barrier
// REGSGRID:       scf.yield

// Batch 2: the persistent kernel. The whole recurrent matrix (G * H rows of
// H = 7, each padded to a stride of 8 floats), the state (h double-buffered,
// 2 x 2 x 7) and the sums (2 x 28) fit a block's shared memory: one block of
// 128 threads (one per dot product, 56 of them; H < 16: one lane each), and a
// step ends with the block's barrier alone (no grid barrier, no counter).
// The launch asks for (224 + 28 + 56) * 4 bytes of dynamic shared memory.
// CHECK-LABEL: func.func @lstm(
// CHECK:   call @__lstm_opt_gpu_layer(
// CHECK-LABEL: func.func private @__lstm_opt_gpu_layer(
// CHECK-SAME: %[[X:.*]]: memref<10x3xf32>, %[[H0:.*]]: memref<1x2x7xf32>, %[[C0:.*]]: memref<1x2x7xf32>, %[[Y:.*]]: memref<5x1x2x7xf32>, %[[HN:.*]]: memref<1x2x7xf32>, %[[CN:.*]]: memref<1x2x7xf32>)
// CHECK:   %[[DX:.*]] = gpu.alloc () : memref<10x3xf32>
// CHECK:   gpu.memcpy %[[DX]], %[[X]]
// The recurrent weights as they are ([D][G][H][K]), not transposed.
// CHECK:   memref.get_global @__lstm_opt_gpu_layer_R : memref<196xf32>
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_init blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_proj
// CHECK-NOT: gpu.memset
// CHECK-NOT: scf.for
// CHECK:   %[[SMEM:.*]] = arith.constant 1232 : i32
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c1{{.*}}) threads in (%c128{{.*}}) dynamic_shared_memory_size %[[SMEM]] args({{.*}} : memref<5x1x2x7xf32>){{$}}
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_final
// CHECK:   gpu.memcpy %[[Y]], %{{.*}} : memref<5x1x2x7xf32>, memref<5x1x2x7xf32>
// CHECK:   gpu.dealloc
// CHECK: gpu.module @__lstm_opt_kernels
// CHECK:   gpu.func @__lstm_opt_gpu_layer_init({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:   gpu.func @__lstm_opt_gpu_layer_proj(
// CHECK:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:     gpu.block_id x
// CHECK:     gpu.thread_id x
// CHECK:     %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK:     %[[WS:.*]] = memref.view %[[RAW]][%{{.*}}][] : {{.*}} to memref<224xf32, #gpu.address_space<workgroup>>
// CHECK:     %[[ST:.*]] = memref.view %[[RAW]][%{{.*}}][] : {{.*}} to memref<28xf32, #gpu.address_space<workgroup>>
// CHECK:     %[[PRE:.*]] = memref.view %[[RAW]][%{{.*}}][] : {{.*}} to memref<56xf32, #gpu.address_space<workgroup>>
// The weight rows into shared memory, once; so is the initial state.
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[WS]]
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[ST]]
// CHECK:     gpu.barrier
// The time loop inside the kernel: each thread's dot product (the weights
// and h from shared memory) into the sums, the block's barrier, the
// epilogue threads' cell (the new h to global memory and to the state),
// the block's barrier.
// CHECK:     scf.for %[[S:.*]] = %{{.*}} to %c5
// CHECK:       scf.for
// CHECK:         memref.load %[[WS]]
// CHECK:         memref.load %[[ST]]
// CHECK:         math.fma
// CHECK:       memref.store %{{.*}}, %[[PRE]]
// CHECK:       gpu.barrier
// CHECK:       scf.if
// CHECK:         memref.load %[[PRE]]
// CHECK:         math.tanh
// CHECK:         memref.store %{{.*}}, %[[ST]]
// CHECK:       gpu.barrier
// CHECK-NOT:   llvm.atomicrmw
// CHECK:   gpu.func @__lstm_opt_gpu_layer_final(

// With 2 units per block, 4 blocks share the steps. By default each new h is
// published as one 64-bit word (its bits, the step it is for) in a buffer
// zeroed before the launch; a block refills its copy of h from those words
// (at step 0, from h0), reloading them until every step tag matches, and
// needs no barrier with the other blocks.
// FLAGS-LABEL: func.func private @__lstm_opt_gpu_layer(
// FLAGS:   %[[XCH:.*]] = gpu.alloc () : memref<56xi32>
// FLAGS:   gpu.memset %[[XCH]], %{{.*}} : memref<56xi32>, i32
// FLAGS:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c4{{.*}}) {{.*}} args({{.*}}, %[[XCH]] : memref<56xi32>)
// FLAGS:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// FLAGS:     scf.for %[[S:.*]] = %{{.*}} to %c5
// FLAGS:       scf.if
// FLAGS:         memref.load %{{.*}} : memref<2x1x2x7xf32>
// FLAGS:       } else {
// FLAGS:         scf.while : () -> i64
// FLAGS:           llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
// FLAGS:           arith.cmpi ne
// FLAGS:           scf.condition
// FLAGS:       gpu.barrier
// FLAGS:       math.fma
// FLAGS:       gpu.barrier
// FLAGS:       scf.if
// FLAGS:         math.tanh
// FLAGS:         llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr
// FLAGS-NOT:   llvm.atomicrmw
// FLAGS:   gpu.func @__lstm_opt_gpu_layer_final(

// grid-sync=barrier: h is refilled from global memory each step, and after
// it the grid barrier on the direction's counter (zeroed before the
// launch): the block's writes released at GPU scope, an arrival, a spin on
// relaxed loads (no read-modify-write while waiting), an acquiring fence.
// GRID-LABEL: func.func private @__lstm_opt_gpu_layer(
// GRID:   %[[CTR:.*]] = gpu.alloc () : memref<1xi32>
// GRID:   gpu.memset %[[CTR]], %{{.*}} : memref<1xi32>, i32
// GRID:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c4{{.*}}) {{.*}} args({{.*}}, %[[CTR]] : memref<1xi32>)
// GRID:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// GRID:     memref.view {{.*}} to memref<64xf32, #gpu.address_space<workgroup>>
// GRID:     memref.view {{.*}} to memref<14xf32, #gpu.address_space<workgroup>>
// GRID:     memref.extract_aligned_pointer_as_index
// GRID:     llvm.inttoptr
// GRID:     scf.for %{{.*}} = %{{.*}} to %c5
// GRID:       scf.for
// GRID:         memref.load %{{.*}} : memref<2x1x2x7xf32>
// GRID:       gpu.barrier
// GRID:       math.fma
// GRID:       gpu.barrier
// GRID:       scf.if
// GRID:         llvm.fence syncscope("device") release
// GRID:         llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// GRID:         scf.while
// GRID:           llvm.load %{{.*}} atomic syncscope("device") monotonic
// GRID:           arith.cmpi slt
// GRID:         llvm.fence syncscope("device") acquire
// GRID:       gpu.barrier

// The same bodies in scf.parallel loops: the shared memory is a [blocks][slice]
// buffer, the grid barrier the end of one parallel loop per step.
// CPU-LABEL: func.func private @__lstm_opt_gpu_layer(
// CPU-NOT: gpu.
// CPU:   scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c128{{[_0-9]*}})
// CPU:   %[[SH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x196xf32>
// CPU:   scf.parallel (%[[B:.*]], %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c14{{[_0-9]*}})
// CPU:     memref.store %{{.*}}, %[[SH]][%[[B]], %{{.*}}]
// CPU:   scf.for
// CPU:     scf.parallel (%[[B2:.*]], %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c14{{[_0-9]*}})
// CPU:       memref.load %[[SH]][%[[B2]], %{{.*}}]
// CPU:       math.fma
// CPU-NOT: gpu.
// CPU:   return
func.func @lstm(%x: tensor<5x2x3xf32>, %h0: tensor<1x2x7xf32>, %c0: tensor<1x2x7xf32>) -> (tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x28x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x28x7xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x28xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b init(%h0, %c0) {hidden_size = 7 : i64} : (tensor<5x2x3xf32>, tensor<1x28x3xf32>, tensor<1x28x7xf32>, tensor<1x28xf32>, tensor<1x28xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>) -> (tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>)
  return %y, %hn, %cn : tensor<5x1x2x7xf32>, tensor<1x2x7xf32>, tensor<1x2x7xf32>
}

// -----

// Batch 8, bidirectional GRU with the reset before the GEMM: one fused
// launch per step is two launches (r, z; then n), D * B * H = 2 * 8 * 5 = 80
// threads in one block of 128; both directions in each launch.
// CHECK-LABEL: func.func private @__lstm_opt_gpu_layer(
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_init
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_proj
// CHECK:   scf.for %[[S:.*]] = %{{.*}} to %c4
// CHECK:     gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_step_rz {{.*}} args({{.*}}, %[[S]] : index)
// CHECK:     gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_step_n {{.*}} args({{.*}}, %[[S]] : index)
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_final
// CHECK: gpu.module @__lstm_opt_kernels
// CHECK:   gpu.func @__lstm_opt_gpu_layer_step_rz({{.*}}, %[[SA:.*]]: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:     arith.cmpi ult, %{{.*}}, %c80
// t = s forward, 3 - s for direction 1.
// CHECK:     arith.subi %c3, %[[SA]]
// CHECK:     scf.for
// CHECK-COUNT-2: math.fma
// CHECK:   gpu.func @__lstm_opt_gpu_layer_step_n(
// CHECK:     scf.for
// CHECK-COUNT-1: math.fma
// CHECK:     math.tanh
// CHECK-NOT: gpu.barrier

// CPU-LABEL: func.func private @__lstm_opt_gpu_layer(
// CPU:   scf.for
// CPU:     scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c128{{[_0-9]*}})
// CPU:     scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c128{{[_0-9]*}})
func.func @gru(%x: tensor<4x8x3xf32>) -> tensor<4x2x8x5xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<2x15x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<2x15x5xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<2x15xf32>
  %y, %hn = rnn.sequence gru bidirectional %x, %w, %r, %b, %b {hidden_size = 5 : i64} : (tensor<4x8x3xf32>, tensor<2x15x3xf32>, tensor<2x15x5xf32>, tensor<2x15xf32>, tensor<2x15xf32>) -> (tensor<4x2x8x5xf32>, tensor<2x8x5xf32>)
  return %y : tensor<4x2x8x5xf32>
}

// -----

// H = 64: the recurrent rows (256 of 64, at a stride of 72), the state and
// the sums take 75264 bytes, past the 48 KiB of static shared memory. With
// shared-bytes for an sm_90 (227 KiB, what --gpu-chip=sm_90 sets) it is
// still one block (512 threads: 64 groups of 8 lanes, each a gate row of 4
// of the 256 against h), all in dynamic shared memory.
// DYN-LABEL: func.func @lstm_h64(
// DYN:   %[[SMEM:.*]] = arith.constant 75264 : i32
// DYN:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c512, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// DYN:   gpu.func @__lstm_opt_gpu_layer_persist({{[^)]*}}) kernel attributes {known_block_size = array<i32: 512, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// DYN:     %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYN:     memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<18432xf32, #gpu.address_space<workgroup>>
// DYN:     memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
// The 8 lanes of a dot product add their parts up by shuffles.
// DYN:     gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// DYN:     gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// DYN:     gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// DYN-NOT: llvm.atomicrmw
// Without it (the pass's default, 48 KiB and 48 blocks), 32 blocks of two
// units and the grid barrier.
// CHECK-LABEL: func.func @lstm_h64(
// In registers it is one block by default: 64 groups of 8 lanes, each lane
// 8 k of its unit's 4 rows; shared memory holds h alone (2 x 64 floats).
// REGS-LABEL: func.func @lstm_h64(
// REGS:   %[[SMEM:.*]] = arith.constant 512 : i32
// REGS:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c1{{.*}}) threads in (%c512{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c32{{.*}}
func.func @lstm_h64(%x: tensor<2x1x3xf32>) -> tensor<2x1x1x64xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x256x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x256x64xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x256xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 64 : i64} : (tensor<2x1x3xf32>, tensor<1x256x3xf32>, tensor<1x256x64xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> (tensor<2x1x1x64xf32>, tensor<1x1x64xf32>, tensor<1x1x64xf32>)
  return %y : tensor<2x1x1x64xf32>
}
