// RUN: lstm-opt %s --convert-rnn-to-cpu --canonicalize --split-input-file | FileCheck %s
// RUN: lstm-opt %s --convert-rnn-to-cpu="parallel-min-work=0 batch-tile=2 block-tile=1" --canonicalize --split-input-file | FileCheck %s --check-prefix=PAR
// RUN: lstm-opt %s --convert-rnn-to-cpu="parallel-min-work=0 threads=2" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=TEAM
// RUN: lstm-opt %s --convert-rnn-to-cpu="parallel-min-work=0 batch-tile=2 block-tile=1 cache-bytes=1024" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=BACK
// RUN: lstm-opt %s --convert-rnn-to-cpu="l1-cache-bytes=8192" --canonicalize --split-input-file | FileCheck %s --check-prefix=L1
// RUN: lstm-opt %s --convert-rnn-to-cpu --cse --split-input-file | FileCheck %s --check-prefix=READ
// RUN: lstm-opt %s --convert-rnn-to-cpu="gemm-chunk-steps=3" --canonicalize --split-input-file | FileCheck %s --check-prefix=CHUNK
// RUN: %expect-exit 1 lstm-opt %s --convert-rnn-to-cpu="block-tile=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADTILE
// BADTILE: convert-rnn-to-cpu: block-tile must be >= 0, not -1
// RUN: %expect-exit 1 lstm-opt %s --convert-rnn-to-cpu="gemm-chunk-steps=-2" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADCHUNK
// BADCHUNK: convert-rnn-to-cpu: gemm-chunk-steps must be >= 0, not -2

// A GRU with the reset before the recurrent GEMM: two phases per step, each
// with its packed weights [D][H/16][H][G'][16]; hidden 18 pads to 32.
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_W : memref<288xf32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_B : memref<96xf32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_Rrz : memref<1152xf32>
// CHECK-DAG: memref.global "private" constant @__lstm_opt_layer_Rn : memref<576xf32>
// Two phases per step on a team: a barrier after each.
// TEAM-LABEL: func.func private @__lstm_opt_layer(
// TEAM:   omp.parallel
// TEAM:     scf.for %{{.*}} = %c0 to %c5 step %c1 {
// TEAM:       omp.barrier
// TEAM:       omp.barrier
// TEAM-NEXT: }
// TEAM-NEXT: omp.terminator
// The input GEMM in chunks of 3 steps (T = 5, B = 2): P holds 3 * 2 rows,
// filled at steps 0 and 3 (the last chunk, 2 steps, has a GEMM of its own),
// its rows in step order: the reverse direction's input GEMM reads x at
// time 4 - s for step s.
// CHUNK-LABEL: func.func private @__lstm_opt_layer(
// CHUNK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x6x3x16xf32>
// CHUNK:   scf.for %[[S:.*]] = %c0 to %c5 step %c1 {
// CHUNK:     %[[IN:.*]] = arith.remui %[[S]], %c3 : index
// CHUNK:     %[[FIRST:.*]] = arith.cmpi eq, %[[IN]], %c0 : index
// CHUNK:     scf.if %[[FIRST]] {
// CHUNK:       %[[WHOLE:.*]] = arith.cmpi ule, %[[S]], %c2 : index
// CHUNK:       scf.if %[[WHOLE]] {
// CHUNK:         arith.subi %c4, %[[S]] : index
// CHUNK-COUNT-18: vector.store %{{.*}}, %[[P]]
// CHUNK:       } else {
// CHUNK-COUNT-12: vector.store %{{.*}}, %[[P]]
// CHUNK:       }
// CHUNK:     }
// CHUNK:     arith.muli %[[IN]], %c2 : index
// CHECK-LABEL: func.func @gru(
// CHECK:   %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK:   %[[XR:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<5x2x3xf32> into memref<10x3xf32>
// CHECK:   %[[H0:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK:   %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5x1x2x18xf32>
// CHECK:   %[[HN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x18xf32>
// CHECK:   call @__lstm_opt_layer(%[[XR]], %[[H0]], %[[Y]], %[[HN]])
// CHECK:   bufferization.to_tensor %[[Y]] restrict writable
// CHECK: func.func private @__lstm_opt_layer(%{{.*}}: memref<10x3xf32>, %{{.*}}: memref<1x2x18xf32>, %{{.*}}: memref<5x1x2x18xf32>, %{{.*}}: memref<1x2x18xf32>)
// Flat globals (one raw array in LLVM) viewed in the kernel's layout.
// CHECK:   %[[WF:.*]] = memref.get_global @__lstm_opt_layer_W : memref<288xf32>
// CHECK:   memref.expand_shape %[[WF]] {{\[}}[0, 1, 2, 3, 4]] output_shape [1, 2, 3, 3, 16] : memref<288xf32> into memref<1x2x3x3x16xf32>
// The input GEMM: 2 hidden blocks x one row tile of 8 (3 gates -> 24
// accumulators, the automatic tile for a GRU) + a tail of 2 rows.
// CHECK:   scf.for
// CHECK:     %{{.*}}:24 = scf.for {{.*}} iter_args(
// CHECK-COUNT-24: vector.fma
// The time loop. P's rows are in step order (the input GEMM read x at
// t = 4 - s for them), so the step reads P at row s.
// CHECK:   scf.for %[[S:.*]] = %c0 to %c5 step %c1 {
// The gates' sigmoid in the kernel form of rnn::emitActivation:
// 0.5 + 0.5 tanh(x / 2) (a model's own Sigmoid nodes get the reference form:
// convert-onnx-to-linalg.mlir).
// CHECK:   %[[T:.*]] = math.tanh %{{.*}} : vector<16xf32>
// CHECK:   math.fma %[[T]], %{{.*}}, %{{.*}} : vector<16xf32>
// Reverse: Y's row is t = 4 - s.
// CHECK:     arith.subi %c4, %[[S]]
// CHECK:   math.tanh
// CHECK-NOT: scf.parallel
// CHECK:   return
func.func @gru(%x: tensor<5x2x3xf32>, %h0: tensor<1x2x18xf32>) -> (tensor<5x1x2x18xf32>, tensor<1x2x18xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x54x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x54x18xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x54xf32>
  %y, %hn = rnn.sequence gru reverse %x, %w, %r, %b, %b init(%h0) {hidden_size = 18 : i64} : (tensor<5x2x3xf32>, tensor<1x54x3xf32>, tensor<1x54x18xf32>, tensor<1x54xf32>, tensor<1x54xf32>, tensor<1x2x18xf32>) -> (tensor<5x1x2x18xf32>, tensor<1x2x18xf32>)
  return %y, %hn : tensor<5x1x2x18xf32>, tensor<1x2x18xf32>
}

// -----

// A hoisted LSTM (input_projection + recurrence) lowers to the same kind of
// function. With parallel-min-work=0 (one thread) the input GEMM's blocks
// are an scf.parallel; each step visits the blocks upwards at even steps and
// downwards at odd ones. batch-tile=2 gives 2 rows x 4 gates = 8
// accumulator chains, doubled over consecutive k (step 2) to hide the FMA
// latency, and summed after the loop.
// PAR-LABEL: func.func @lstm(
// PAR:   call @__lstm_opt_lstm_layer(
// PAR-NOT: rnn.
// PAR: func.func private @__lstm_opt_lstm_layer(
// PAR:   scf.parallel
// PAR-NOT: omp.
// PAR:   scf.for %[[S:.*]] = %c0 to %c3 step %c1 {
// PAR:     %[[PAR:.*]] = arith.remui %[[S]], %c2
// PAR:     %[[ODD:.*]] = arith.trunci %{{.*}} : i64 to i1
// PAR:     scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// PAR:       %[[DOWN:.*]] = arith.subi %c1, %[[I]]
// PAR:       %[[JB:.*]] = arith.select %[[ODD]], %[[DOWN]], %[[I]] : index
// Before the tile's GEMM, the lines of P its epilogue will read (block jb,
// rows t*B + 0 and t*B + 1, 4 gates; P is block-major [H/V][T*B][G][V]) are
// prefetched.
// PAR:       %[[ROW0:.*]] = arith.muli %[[S]], %c2 : index
// PAR-COUNT-4: memref.prefetch %{{.*}}[%[[JB]], %[[ROW0]], %{{.*}}, %c0], read, locality<3>, data : memref<2x6x4x16xf32>
// PAR:       %[[ROW1:.*]] = arith.addi %{{.*}}, %c1 : index
// PAR-COUNT-4: memref.prefetch %{{.*}}[%[[JB]], %[[ROW1]], %{{.*}}, %c0], read, locality<3>, data : memref<2x6x4x16xf32>
// PAR-NOT:   memref.prefetch
// With the default cache-bytes (1 MiB) the 16 KiB of recurrent weights fit:
// k always runs upwards.
// PAR-NOT:   arith.select %{{.*}}, %c-1, %c1 : index
// PAR:       %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c32 step %c2 iter_args(
// PAR-COUNT-16: vector.fma
// PAR:       arith.addf %{{.*}}#0, %{{.*}}#8 : vector<16xf32>

// cache-bytes=1024: the layer's 16 KiB of recurrent weights do not fit, so
// odd steps also read each block's weights (and h) from k = 31 down:
// k = base + dir * i, base = odd ? 31 : 0, dir = odd ? -1 : 1.
// BACK-LABEL: func.func private @__lstm_opt_lstm_layer(
// The input GEMM, before the time loop, reads k upwards.
// BACK-NOT: arith.select %{{.*}}, %c31, %c0
// BACK:   scf.for %[[S:.*]] = %c0 to %c3 step %c1 {
// BACK:     %[[PARITY:.*]] = arith.remui %[[S]], %c2
// BACK:     %[[ODD:.*]] = arith.trunci %{{.*}} : i64 to i1
// BACK:       %[[BASE:.*]] = arith.select %[[ODD]], %c31, %c0 : index
// BACK:       %[[DIR:.*]] = arith.select %[[ODD]], %c-1, %c1 : index
// BACK:       %{{.*}}:16 = scf.for %[[I:.*]] = %c0 to %c32 step %c2 iter_args(
// BACK:         %[[OFF:.*]] = arith.muli %[[DIR]], %[[I]] : index
// BACK:         %[[K:.*]] = arith.addi %[[BASE]], %[[OFF]] : index
// BACK-DAG:     vector.load %{{.*}}[%c0, %{{.*}}, %[[K]], %c0, %c0]
// BACK-DAG:     memref.load %{{.*}}[%[[PARITY]], %c0, %[[K]]]

// threads=2: one OpenMP team runs the input GEMM and every step; thread k of
// n takes blocks k*nb/n .. (k+1)*nb/n - 1, and the team meets at a barrier
// after each step. The team is capped at the layer's 2 blocks.
// TEAM-LABEL: func.func private @__lstm_opt_lstm_layer(
// TEAM-NOT: scf.parallel
// TEAM:   omp.parallel num_threads(%c2_i32 : i32) {
// TEAM:     %[[ME:.*]] = func.call @omp_get_thread_num() : () -> i32
// TEAM:     %[[ALL:.*]] = func.call @omp_get_num_threads() : () -> i32
// TEAM:     %[[LO:.*]] = arith.divui
// TEAM:     %[[HI:.*]] = arith.divui
// TEAM:     scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c1 {
// TEAM:     scf.for %[[S:.*]] = %c0 to %c3 step %c1 {
// TEAM:       scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c1 {
// TEAM-COUNT-1: omp.barrier
// TEAM-NEXT: }
// TEAM-NEXT: omp.terminator
// TEAM-NEXT: } {lstm_opt.max_threads = 2 : i64}
// By default (block-tile=0), with B = 2 rows x 4 gates = 8 chains per block
// and 16 KiB of recurrent weights (under 32 KiB), a step's GEMM is one tile
// over both hidden blocks: 16 accumulators, k not split, each row's
// broadcast of h feeds both blocks' weights; then both blocks' gates.
// CHECK-LABEL: func.func @lstm(
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func private @__lstm_opt_lstm_layer(
// CHECK:   scf.for %[[S:.*]] = %c0 to %c3 step %c1 {
// CHECK-NOT: arith.trunci
// CHECK:     %{{.*}}:16 = scf.for %[[K:.*]] = %c0 to %c32 step %c1 iter_args(
// CHECK-COUNT-4: vector.load %{{.*}}[%c0, %c0, %[[K]], %{{.*}}, %c0]
// CHECK:       %[[H0:.*]] = memref.load %{{.*}}[%{{.*}}, %c0, %[[K]]]
// CHECK:       %[[A0:.*]] = vector.broadcast %[[H0]]
// CHECK-COUNT-4: vector.fma %{{.*}}, %[[A0]]
// CHECK:       %[[H1:.*]] = memref.load %{{.*}}[%{{.*}}, %c1, %[[K]]]
// CHECK:       %[[A1:.*]] = vector.broadcast %[[H1]]
// CHECK-COUNT-4: vector.fma %{{.*}}, %[[A1]]
// CHECK-COUNT-4: vector.load %{{.*}}[%c0, %c1, %[[K]], %{{.*}}, %c0]
// CHECK-COUNT-4: vector.fma %{{.*}}, %[[A0]]
// CHECK-COUNT-4: vector.fma %{{.*}}, %[[A1]]
// CHECK-NEXT:  scf.yield
// CHECK-COUNT-2: math.tanh
// With l1-cache-bytes=8192 the 16 KiB of weights do not fit: one block per
// tile, blocks alternating their order, k split in two sets of 8 chains.
// L1-LABEL: func.func private @__lstm_opt_lstm_layer(
// L1:   scf.for %{{.*}} = %c0 to %c3 step %c1 {
// L1:     arith.trunci %{{.*}} : i64 to i1
// L1:     %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c32 step %c2 iter_args(
func.func @lstm(%x: tensor<3x2x4xf32>) -> tensor<3x1x2x32xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x128x4xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x128x32xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x128xf32>
  %p = rnn.input_projection %x, %w, %b : (tensor<3x2x4xf32>, tensor<1x128x4xf32>, tensor<1x128xf32>) -> tensor<1x3x2x128xf32> loc("lstm_layer")
  %y, %hn, %cn = rnn.recurrence lstm forward %p, %r, %b {hidden_size = 32 : i64} : (tensor<1x3x2x128xf32>, tensor<1x128x32xf32>, tensor<1x128xf32>) -> (tensor<3x1x2x32xf32>, tensor<1x2x32xf32>, tensor<1x2x32xf32>) loc("lstm_layer")
  return %y : tensor<3x1x2x32xf32>
}

// -----

// An LSTM with peepholes and input_forget: the peephole weights are packed
// [D, 3, Hp] (i, f, o; padded units zero) and added with an FMA before the
// clip; f is 1 - i.
// CHECK-DAG: memref.global "private" constant @__lstm_opt_peep_layer_Peep : memref<48xf32>
// CHECK-LABEL: func.func @lstm_peephole(
// CHECK: call @__lstm_opt_peep_layer
// CHECK-LABEL: func.func private @__lstm_opt_peep_layer(
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<16xf32>
func.func @lstm_peephole(%x: tensor<3x2x4xf32>) -> tensor<3x1x2x5xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x20x4xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x20x5xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x20xf32>
  %pp = onnx.initializer "P" dense<0.5> : tensor<1x15xf32>
  %p = rnn.input_projection %x, %w, %b : (tensor<3x2x4xf32>, tensor<1x20x4xf32>, tensor<1x20xf32>) -> tensor<1x3x2x20xf32> loc("peep_layer")
  %y, %hn, %cn = rnn.recurrence lstm forward %p, %r, %b peephole(%pp) {hidden_size = 5 : i64, input_forget} : (tensor<1x3x2x20xf32>, tensor<1x20x5xf32>, tensor<1x20xf32>, tensor<1x15xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) loc("peep_layer")
  return %y : tensor<3x1x2x5xf32>
}

// -----

// Two layers read the same tensor (a model whose inputs were bound to
// equal values reads two equal, merged step inputs). Each call reads its
// own buffer of it, made where the call is: CSE keeps the two to_buffer
// ops apart (they name their layer), so bufferization sees the second read
// where it happens and no op in between may write over that buffer.
// READ-LABEL: func.func @two_layers_one_input(
// READ: %[[X1:.*]] = bufferization.to_buffer %arg0 read_only {lstm_opt.read_by = "__lstm_opt_layer"}
// READ: call @__lstm_opt_layer(
// READ: %[[X2:.*]] = bufferization.to_buffer %arg0 read_only {lstm_opt.read_by = "__lstm_opt_layer_1"}
// READ: call @__lstm_opt_layer_1(
func.func @two_layers_one_input(%x: tensor<2x1x3xf32>, %h0: tensor<1x1x4xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4xf32>) {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x4x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x4x4xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x4xf32>
  %y1, %h1 = rnn.sequence rnn forward %x, %w, %r, %b, %b init(%h0) {hidden_size = 4 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x1x4xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  %y2, %h2 = rnn.sequence rnn forward %x, %w, %r, %b, %b init(%h1) {hidden_size = 4 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x1x4xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %h1, %h2 : tensor<1x1x4xf32>, tensor<1x1x4xf32>
}
