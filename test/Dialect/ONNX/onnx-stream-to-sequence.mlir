// RUN: lstm-opt %s --onnx-stream-to-sequence="chunks=4 state=h=hn form=loop" | FileCheck %s
// RUN: lstm-opt %s --onnx-stream-to-sequence="chunks=4 state=auto form=loop" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: lstm-opt %s --onnx-stream-to-sequence="chunks=4 state=h=hn" 2>/dev/null | FileCheck %s --check-prefix=BATCH
// RUN: lstm-opt %s --onnx-stream-to-sequence="chunks=4 state=h=hn" 2>&1 >/dev/null | FileCheck %s --check-prefix=BATCH-REMARK

// A model called once per chunk with its state h passed in and hn out: the
// chunk input x and the output out gain a leading axis of 4; the body runs
// in a Loop of 4 iterations whose carried value is the state and whose scan
// output stacks out; initializers stay outside; x's chunk is
// Gather(x, iteration).
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[X:.*]]: tensor<4x1x1x2xf32> {onnx.name = "x"}, %[[H:.*]]: tensor<1x1x3xf32> {onnx.name = "h"})
// CHECK-SAME: -> (tensor<4x1x1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"})
// CHECK: %[[W:.*]] = onnx.initializer "W"
// CHECK: %[[N:.*]] = onnx.Constant() {value = dense<4> : tensor<i64>}
// CHECK: %[[T:.*]] = onnx.Constant() {value = dense<true> : tensor<i1>}
// CHECK: %[[L:.*]]:2 = onnx.node "Loop"(%[[N]], %[[T]], %[[H]]) graphs {
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[S:.*]]: tensor<1x1x3xf32>):
// CHECK:   %[[XI:.*]] = onnx.Gather(%[[X]], %[[I]]) : (tensor<4x1x1x2xf32>, tensor<i64>) -> tensor<1x1x2xf32>
// CHECK:   %{{.*}}, %[[HN:.*]] = onnx.RNN(%[[XI]], %[[W]], %{{.*}}, %{{.*}}, %{{.*}}, %[[S]])
// CHECK:   %[[OUT:.*]] = onnx.Relu
// CHECK:   onnx.yield %[[C]], %[[HN]], %[[OUT]] : tensor<i1>, tensor<1x1x3xf32>, tensor<1x1x1x3xf32> {input_names = ["stream_iteration", "stream_condition", "h_carried"], name = "stream_body", output_names = ["stream_condition_next", "hn_next", "out_chunk"]}
// CHECK: } {graph_attrs = ["body"]} : (tensor<i64>, tensor<i1>, tensor<1x1x3xf32>) -> (tensor<1x1x3xf32>, tensor<4x1x1x1x3xf32>)
// CHECK: return %[[L]]#1, %[[L]]#0

// The default form (auto): the chunks batched. x's chunks [4, T=1, b=1, 2]
// are merged along x's batch axis (1) and reordered time-major into one
// sequence of 4 steps; the RNN runs over it from h; its Y comes back per
// chunk along the batch axis, Relu runs once over all chunks, and out is
// stacked again; hn is the RNN's final state.
// BATCH-REMARK: remark: onnx-stream-to-sequence: the 4 chunks batched: 1 ops run once over all chunks, 1 recurrent layer over all their steps
// BATCH-LABEL: func.func @g(
// BATCH-SAME: %[[X:.*]]: tensor<4x1x1x2xf32> {onnx.name = "x"}, %[[H:.*]]: tensor<1x1x3xf32> {onnx.name = "h"})
// BATCH-SAME: -> (tensor<4x1x1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"})
// BATCH: %[[XT:.*]] = onnx.Transpose(%[[X]]) {perm = array<i64: 1, 0, 2, 3>} : (tensor<4x1x1x2xf32>) -> tensor<1x4x1x2xf32>
// BATCH: %[[XM:.*]] = onnx.Reshape(%[[XT]], %{{.*}}) : (tensor<1x4x1x2xf32>, tensor<3xi64>) -> tensor<1x4x2xf32>
// BATCH: %[[SEQ:.*]] = onnx.Reshape(%[[XM]], %{{.*}}) : (tensor<1x4x2xf32>, tensor<3xi64>) -> tensor<4x1x2xf32>
// BATCH: %[[Y:.*]], %[[HN:.*]] = onnx.RNN(%[[SEQ]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[H]]) {{.*}} -> (tensor<4x1x1x3xf32>, tensor<1x1x3xf32>)
// BATCH: onnx.Relu(%{{.*}}) {{.*}} : (tensor<1x1x4x3xf32>) -> tensor<1x1x4x3xf32>
// BATCH: %[[OUT:.*]] = onnx.Transpose(%{{.*}}) {perm = array<i64: 2, 0, 1, 3, 4>} : (tensor<1x1x4x1x3xf32>) -> tensor<4x1x1x1x3xf32>
// BATCH: return %[[OUT]], %[[HN]]
// BATCH-NOT: Loop

// auto: h reaches the RNN's initial state, hn comes from its final state.
// AUTO: remark: onnx-stream-to-sequence: state pairs h=hn
// AUTO: onnx.node "Loop"
func.func @g(%arg0: tensor<1x1x2xf32> {onnx.name = "x"}, %arg1: tensor<1x1x3xf32> {onnx.name = "h"}) -> (tensor<1x1x1x3xf32> {onnx.name = "out"}, tensor<1x1x3xf32> {onnx.name = "hn"}) {
  %0 = onnx.none
  %1 = onnx.initializer "W" dense<0.5> : tensor<1x3x2xf32>
  %2 = onnx.initializer "R" dense<0.25> : tensor<1x3x3xf32>
  %Y, %Y_h = onnx.RNN(%arg0, %1, %2, %0, %0, %arg1) {hidden_size = 3 : i64, onnx.names = ["y", "hn"]} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x3xf32>, none, none, tensor<1x1x3xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x3xf32>)
  %3 = onnx.Relu(%Y) {onnx.names = ["out"]} : (tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  return %3, %Y_h : tensor<1x1x1x3xf32>, tensor<1x1x3xf32>
}
