// RUN: lstm-opt %s -split-input-file --allow-unregistered-dialect -cpu-persistent-teams | FileCheck %s

// A time loop of one team per step (what convert-scf-to-openmp makes of a
// parallel hidden-block loop): one team around the loop, the team size a
// copy of the constant, the work-sharing loop (and its barrier) in the loop.

// CHECK-LABEL: func.func @one_team_per_step
// CHECK: %[[N:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: omp.parallel num_threads(%[[N]] : i32) {
// CHECK-NEXT: scf.for %[[S:.*]] = %c0 to %c150 step %c1 {
// CHECK-NEXT: %[[CUR:.*]] = arith.remui %[[S]], %c2
// CHECK-NOT: omp.parallel
// CHECK: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[J:.*]]) : index = (%c0) to (%c16) step (%c1) {
// CHECK-NEXT: memref.load %{{.*}}[%[[CUR]], %[[J]]]
// CHECK: omp.yield
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @one_team_per_step(%h: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c150 = arith.constant 150 : index
  scf.for %s = %c0 to %c150 step %c1 {
    %cur = arith.remui %s, %c2 : index
    %nxt = arith.subi %c1, %cur : index
    %n = llvm.mlir.constant(2 : i32) : i32
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c16) step (%c1) {
          %v = memref.load %h[%cur, %j] : memref<2x16xf32>
          memref.store %v, %h[%nxt, %j] : memref<2x16xf32>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}

// -----

// Two phases per step (a GRU that resets before its GEMM): both loops in the
// one team, in order, each ending in its barrier. The size comes from
// outside the loop and stays that value.

// CHECK-LABEL: func.func @two_phases
// CHECK-SAME: %[[N:[^:]*]]: i32
// CHECK: omp.parallel num_threads(%[[N]] : i32) {
// CHECK-NEXT: scf.for
// CHECK-NEXT: omp.wsloop {
// CHECK: "test.phase_a"
// CHECK: omp.wsloop {
// CHECK: "test.phase_b"
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
func.func @two_phases(%n: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %s = %c0 to %c8 step %c1 {
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.phase_a"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.phase_b"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}

// -----

// Left alone: memory written outside the work-sharing loop (every thread
// would write it), a loop without barrier (nowait), teams of different sizes,
// a loop that carries a value, and a team that does more than share a loop.

// CHECK-LABEL: func.func @refused
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: omp.parallel
// CHECK: scf.for
// CHECK-NEXT: omp.parallel
// CHECK-NEXT: omp.wsloop nowait
// CHECK: scf.for
// CHECK-NEXT: omp.parallel num_threads(%arg1
// CHECK: omp.parallel num_threads(%arg2
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: omp.parallel
// CHECK: scf.for
// CHECK-NEXT: omp.parallel
// CHECK-NEXT: "test.before"
func.func @refused(%m: memref<8xf32>, %n: i32, %k: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  scf.for %s = %c0 to %c8 step %c1 {
    memref.store %f, %m[%s] : memref<8xf32>
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  scf.for %s = %c0 to %c8 step %c1 {
    omp.parallel num_threads(%n : i32) {
      omp.wsloop nowait {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  scf.for %s = %c0 to %c8 step %c1 {
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
    omp.parallel num_threads(%k : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  %sum = scf.for %s = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (index) {
    omp.parallel num_threads(%n : i32) {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
    %next = arith.addi %acc, %c1 : index
    scf.yield %next : index
  }
  scf.for %s = %c0 to %c8 step %c1 {
    omp.parallel num_threads(%n : i32) {
      "test.before"() : () -> ()
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          "test.work"(%s, %j) : (index, index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}
