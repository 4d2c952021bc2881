// RUN: lstm-opt %s -split-input-file -cpu-approximate-math | FileCheck %s

// f32 tanh/exp/log (scalar or vector) become MLIR's polynomial
// approximations: arith and math.fma only, so a vector stays a vector and no
// libm call is left. f64 is not approximated (its accuracy would drop).

// CHECK-LABEL: func.func @f32_activations
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp {{.*}} : vector<16xf32>
// CHECK-NOT: math.log
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: %[[D:.*]] = math.exp %{{.*}} : f64
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[D]]
func.func @f32_activations(%x: vector<16xf32>, %s: f32) -> (vector<16xf32>, vector<16xf32>, f32, f64) {
  %t = math.tanh %x : vector<16xf32>
  %e = math.exp %x : vector<16xf32>
  %l = math.log %s : f32
  %d = arith.extf %s : f32 to f64
  %ed = math.exp %d : f64
  return %t, %e, %l, %ed : vector<16xf32>, vector<16xf32>, f32, f64
}

// -----

// Nothing to approximate: the function is unchanged.
// CHECK-LABEL: func.func @no_math
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @no_math(%a: f32) -> f32 {
  %b = arith.addf %a, %a : f32
  return %b : f32
}
