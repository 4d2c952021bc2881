// RUN: lstm-opt %s --convert-rnn-to-gpu --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-gpu=mapping=cpu --split-input-file | FileCheck %s --check-prefix=CPU
// RUN: lstm-opt %s --convert-rnn-to-gpu="shared-bytes=448" --split-input-file | FileCheck %s --check-prefix=GRID
// RUN: lstm-opt %s --convert-rnn-to-gpu="shared-bytes=232448" --split-input-file | FileCheck %s --check-prefix=DYN

// Batch 2: the persistent kernel. The whole recurrent matrix (H * G * H =
// 7 * 4 * 7 floats) fits a block's shared memory: one block of 2 x 7
// threads, and a step ends with the block's barrier alone (no grid barrier,
// no counter).
// CHECK-LABEL: func.func @lstm(
// CHECK:   call @__lstm_opt_gpu_layer(
// CHECK-LABEL: func.func private @__lstm_opt_gpu_layer(
// CHECK-SAME: %[[X:.*]]: memref<10x3xf32>, %[[H0:.*]]: memref<1x2x7xf32>, %[[C0:.*]]: memref<1x2x7xf32>, %[[Y:.*]]: memref<5x1x2x7xf32>, %[[HN:.*]]: memref<1x2x7xf32>, %[[CN:.*]]: memref<1x2x7xf32>)
// CHECK:   %[[DX:.*]] = gpu.alloc () : memref<10x3xf32>
// CHECK:   gpu.memcpy %[[DX]], %[[X]]
// CHECK:   memref.get_global @__lstm_opt_gpu_layer_Rt : memref<196xf32>
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_init blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_proj
// CHECK-NOT: gpu.memset
// CHECK-NOT: scf.for
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist {{.*}} args({{.*}} : memref<5x1x2x7xf32>){{$}}
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_final
// CHECK:   gpu.memcpy %[[Y]], %{{.*}} : memref<5x1x2x7xf32>, memref<5x1x2x7xf32>
// CHECK:   gpu.dealloc
// CHECK: gpu.module @__lstm_opt_kernels
// CHECK:   gpu.func @__lstm_opt_gpu_layer_init({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:   gpu.func @__lstm_opt_gpu_layer_proj(
// CHECK:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) workgroup(%[[SH:.*]] : memref<196xf32, #gpu.address_space<workgroup>>, %[[ST:.*]] : memref<28xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 14, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:     gpu.block_id x
// CHECK:     gpu.thread_id x
// The weight slice into shared memory, once; so is the initial state (the
// block's copy of h, double-buffered: 2 x 2 x 7 floats).
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[SH]]
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[ST]]
// CHECK:     gpu.barrier
// The time loop inside the kernel: the cell (h from the block's copy, the
// weights from the slice; the new h to global memory and to the copy), then
// the block's barrier.
// CHECK:     scf.for %[[S:.*]] = %{{.*}} to %c5
// CHECK:       scf.if
// CHECK:         memref.load %[[ST]]
// CHECK:         memref.load %[[SH]]
// CHECK:         math.fma
// CHECK:         math.tanh
// CHECK:         memref.store %{{.*}}, %[[ST]]
// CHECK:       gpu.barrier
// CHECK-NOT:   memref.atomic_rmw
// CHECK:   gpu.func @__lstm_opt_gpu_layer_final(

// With room for one unit's weights per block (shared-bytes=448: 7 * 4 * 4
// floats), 7 blocks of one unit share the steps through the grid barrier: a
// counter zeroed before the launch, and after each step an arrival and a
// wait on it between two fences.
// GRID-LABEL: func.func private @__lstm_opt_gpu_layer(
// GRID:   %[[CTR:.*]] = gpu.alloc () : memref<1xi32>
// GRID:   gpu.memset %[[CTR]], %{{.*}} : memref<1xi32>, i32
// GRID:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist {{.*}} args({{.*}}, %[[CTR]] : memref<1xi32>)
// GRID:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) workgroup(%{{.*}} : memref<28xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 2, 1, 1>, known_grid_size = array<i32: 7, 1, 1>}
// GRID:     scf.for %{{.*}} = %{{.*}} to %c5
// GRID:       math.fma
// GRID:       gpu.barrier
// GRID:       scf.if
// GRID:         llvm.fence acq_rel
// GRID:         memref.atomic_rmw addi
// GRID:         scf.while
// GRID:           memref.atomic_rmw addi
// GRID:           arith.cmpi slt
// GRID:         llvm.fence acq_rel
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

// H = 64: the recurrent matrix (64 * 4 * 64 floats, 64 KiB) is past the 48
// KiB of static shared memory. With shared-bytes for an sm_90 (227 KiB,
// what --gpu-chip=sm_90 sets) it is still one block, the matrix in dynamic
// shared memory, with the block's copy of h after it (2 x 64 floats): the
// launch asks for 65536 + 512 bytes.
// DYN-LABEL: func.func @lstm_h64(
// DYN:   %[[SMEM:.*]] = arith.constant 66048 : i32
// DYN:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c64, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// DYN:   gpu.func @__lstm_opt_gpu_layer_persist({{[^)]*}}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// DYN:     %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYN:     memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16384xf32, #gpu.address_space<workgroup>>
// DYN:     memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
// DYN-NOT: memref.atomic_rmw
// Without it (the pass's default, 48 KiB), two blocks and the grid barrier.
// CHECK-LABEL: func.func @lstm_h64(
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist blocks in (%c2{{.*}}
func.func @lstm_h64(%x: tensor<2x1x3xf32>) -> tensor<2x1x1x64xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x256x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x256x64xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x256xf32>
  %y, %hn, %cn = rnn.sequence lstm forward %x, %w, %r, %b, %b {hidden_size = 64 : i64} : (tensor<2x1x3xf32>, tensor<1x256x3xf32>, tensor<1x256x64xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> (tensor<2x1x1x64xf32>, tensor<1x1x64xf32>, tensor<1x1x64xf32>)
  return %y : tensor<2x1x1x64xf32>
}
