// RUN: lstm-opt %s --convert-rnn-to-gpu --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-gpu=mapping=cpu --split-input-file | FileCheck %s --check-prefix=CPU

// Batch 2: the persistent kernel. H = 7 units, 16 per block at most
// (a warp of B * U >= 32 threads): one block of 2 x 7 threads; the weight
// slice H * G * U = 7 * 4 * 7 floats in shared memory.
// CHECK-LABEL: func.func @lstm(
// CHECK:   call @__lstm_opt_gpu_layer(
// CHECK-LABEL: func.func private @__lstm_opt_gpu_layer(
// CHECK-SAME: %[[X:.*]]: memref<10x3xf32>, %[[H0:.*]]: memref<1x2x7xf32>, %[[C0:.*]]: memref<1x2x7xf32>, %[[Y:.*]]: memref<5x1x2x7xf32>, %[[HN:.*]]: memref<1x2x7xf32>, %[[CN:.*]]: memref<1x2x7xf32>)
// CHECK:   %[[DX:.*]] = gpu.alloc () : memref<10x3xf32>
// CHECK:   gpu.memcpy %[[DX]], %[[X]]
// CHECK:   memref.get_global @__lstm_opt_gpu_layer_Rt : memref<196xf32>
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_init blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_proj
// CHECK:   %[[CTR:.*]] = gpu.alloc () : memref<1xi32>
// CHECK:   gpu.memset %[[CTR]], %{{.*}} : memref<1xi32>, i32
// CHECK-NOT: scf.for
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_persist {{.*}} args({{.*}}, %[[CTR]] : memref<1xi32>)
// CHECK:   gpu.launch_func @__lstm_opt_kernels::@__lstm_opt_gpu_layer_final
// CHECK:   gpu.memcpy %[[Y]], %{{.*}} : memref<5x1x2x7xf32>, memref<5x1x2x7xf32>
// CHECK:   gpu.dealloc
// CHECK: gpu.module @__lstm_opt_kernels
// CHECK:   gpu.func @__lstm_opt_gpu_layer_init({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:   gpu.func @__lstm_opt_gpu_layer_proj(
// CHECK:   gpu.func @__lstm_opt_gpu_layer_persist({{.*}}) workgroup(%[[SH:.*]] : memref<196xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 14, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:     gpu.block_id x
// CHECK:     gpu.thread_id x
// The weight slice into shared memory, once.
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[SH]]
// CHECK:     gpu.barrier
// The time loop inside the kernel: the cell, then the grid barrier.
// CHECK:     scf.for %[[S:.*]] = %{{.*}} to %c5
// CHECK:       scf.if
// CHECK:         memref.load %[[SH]]
// CHECK:         math.fma
// CHECK:         math.tanh
// CHECK:       gpu.barrier
// CHECK:       scf.if
// CHECK:         llvm.fence acq_rel
// CHECK:         memref.atomic_rmw addi
// CHECK:         scf.while
// CHECK:           memref.atomic_rmw addi
// CHECK:           arith.cmpi slt
// CHECK:         llvm.fence acq_rel
// CHECK:       gpu.barrier
// CHECK:   gpu.func @__lstm_opt_gpu_layer_final(

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
