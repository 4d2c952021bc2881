#!/usr/bin/env python3
"""Writes small ONNX models of operators whole models use around their
recurrent layers, for ops.test (lstm-run against ONNX Runtime).

Usage: make_op_models.py OUTDIR
Deterministic (seeded weights); the models are written at test time, not
committed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_op_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, np.float32), name)


# LayerNormalization over the last axis (what a transformer or a CRNN head
# writes), with Scale and B; over the last two axes without B, a custom
# epsilon; and one feeding an LSTM-style gate (MatMul + Sigmoid).
save("layernorm_last", [
    helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1,
                     name="ln")],
    [f32("x", [2, 5, 8])], [f32("y", [2, 5, 8])],
    [const("s", rng.standard_normal(8)), const("b", rng.standard_normal(8))])
save("layernorm_axis1_nobias", [
    helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=1,
                     epsilon=1e-3, name="ln")],
    [f32("x", [3, 4, 6])], [f32("y", [3, 4, 6])],
    [const("s", rng.standard_normal((4, 6)))])
save("layernorm_dynamic_gate", [
    helper.make_node("LayerNormalization", ["x", "s", "b"], ["n"], name="ln"),
    helper.make_node("MatMul", ["n", "w"], ["p"], name="mm"),
    helper.make_node("Sigmoid", ["p"], ["y"], name="sig")],
    [f32("x", ["batch", 16])], [f32("y", ["batch", 4])],
    [const("s", rng.standard_normal(16)), const("b", rng.standard_normal(16)),
     const("w", rng.standard_normal((16, 4)))])

# ReverseSequence (what tf2onnx writes for a Keras backward layer): time-major
# with per-batch lengths, batch-major, and one reversing the step inputs of a
# recurrence-like chain (the lengths are a graph input).
i64 = TensorProto.INT64
save("reverse_sequence_time_major", [
    helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=1,
                     time_axis=0, name="rev")],
    [f32("x", [6, 4, 3])], [f32("y", [6, 4, 3])],
    [numpy_helper.from_array(np.array([6, 3, 1, 0], np.int64), "lens")])
save("reverse_sequence_batch_major", [
    helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0,
                     time_axis=1, name="rev")],
    [f32("x", [3, 5, 2, 2])], [f32("y", [3, 5, 2, 2])],
    [numpy_helper.from_array(np.array([5, 2, 4], np.int64), "lens")])
save("reverse_sequence_input_lens", [
    helper.make_node("ReverseSequence", ["x", "lens"], ["r"], name="rev"),
    helper.make_node("Tanh", ["r"], ["y"], name="tanh")],
    [f32("x", [7, 2, 5]), helper.make_tensor_value_info("lens", i64, [2])],
    [f32("y", [7, 2, 5])], [])

# MaxPool (a CRNN's feature extractor): 2-D 2x2 stride 2; 2-D with pads,
# dilations and ceil_mode (the last window reaches past the end padding);
# 1-D with SAME_UPPER.
save("maxpool_2x2", [
    helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                     strides=[2, 2], name="pool")],
    [f32("x", [1, 3, 8, 6])], [f32("y", [1, 3, 4, 3])], [])
save("maxpool_pads_ceil", [
    helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2],
                     strides=[2, 3], pads=[1, 0, 1, 1], dilations=[1, 2],
                     ceil_mode=1, name="pool")],
    [f32("x", [2, 2, 9, 10])], [f32("y", [2, 2, 5, 4])], [])
save("maxpool_1d_same", [
    helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                     auto_pad="SAME_UPPER", name="pool")],
    [f32("x", [2, 4, 11])], [f32("y", [2, 4, 6])], [])

# AveragePool: 2-D 2x2 stride 2; pads and ceil_mode, dividing by the
# positions inside the input (count_include_pad 0) and inside input and pads
# (1); 1-D with SAME_UPPER; dilations (opset 19).
save("avgpool_2x2", [
    helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                     strides=[2, 2], name="pool")],
    [f32("x", [1, 3, 8, 6])], [f32("y", [1, 3, 4, 3])], [])
save("avgpool_pads_ceil", [
    helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2],
                     strides=[2, 3], pads=[1, 0, 1, 1], ceil_mode=1, name="pool")],
    [f32("x", [2, 2, 9, 10])], [f32("y", [2, 2, 5, 4])], [])
save("avgpool_pads_include", [
    helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1,
                     name="pool")],
    [f32("x", [2, 2, 9, 10])], [f32("y", [2, 2, 5, 5])], [])
save("avgpool_1d_same", [
    helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                     auto_pad="SAME_UPPER", name="pool")],
    [f32("x", [2, 4, 11])], [f32("y", [2, 4, 6])], [])
save("avgpool_dilated", [
    helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                     dilations=[2, 1], pads=[1, 0, 0, 1], name="pool")],
    [f32("x", [1, 2, 7, 5])], [f32("y", [1, 2, 6, 5])], [], opset=19)

# GlobalAveragePool and GlobalMaxPool (a classifier head): 2-D and 1-D.
save("global_avgpool_2d", [
    helper.make_node("GlobalAveragePool", ["x"], ["y"], name="pool")],
    [f32("x", [2, 3, 5, 7])], [f32("y", [2, 3, 1, 1])], [])
save("global_maxpool_1d", [
    helper.make_node("GlobalMaxPool", ["x"], ["y"], name="pool")],
    [f32("x", [2, 4, 9])], [f32("y", [2, 4, 1])], [])

# InstanceNormalization (a vocoder's or a style network's): 4-D, and 3-D with
# a custom epsilon.
save("instancenorm_4d", [
    helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="in")],
    [f32("x", [2, 3, 5, 4])], [f32("y", [2, 3, 5, 4])],
    [const("s", rng.standard_normal(3)), const("b", rng.standard_normal(3))])
save("instancenorm_3d_eps", [
    helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                     epsilon=1e-3, name="in")],
    [f32("x", [2, 6, 7])], [f32("y", [2, 6, 7])],
    [const("s", rng.standard_normal(6)), const("b", rng.standard_normal(6))])

# BatchNormalization for inference: a CRNN's convolution stack (4-D) and a
# 1-D feature sequence (3-D), custom epsilon.
save("batchnorm_4d", [
    helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                     name="bn")],
    [f32("x", [2, 3, 5, 4])], [f32("y", [2, 3, 5, 4])],
    [const("s", rng.standard_normal(3)), const("b", rng.standard_normal(3)),
     const("m", rng.standard_normal(3)), const("v", rng.uniform(0.5, 2.0, 3))])
save("batchnorm_3d_eps", [
    helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                     epsilon=1e-3, name="bn")],
    [f32("x", [2, 6, 7])], [f32("y", [2, 6, 7])],
    [const("s", rng.standard_normal(6)), const("b", rng.standard_normal(6)),
     const("m", rng.standard_normal(6)), const("v", rng.uniform(0.01, 2.0, 6))])

# Range with constant bounds (positions for an attention or a Gather), int64
# and float32 (repeated addition, as ONNX Runtime computes it).
save("range_int", [
    helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
    helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT, name="cast"),
    helper.make_node("Add", ["x", "rf"], ["y"], name="add")],
    [f32("x", [2, 7])], [f32("y", [2, 7])],
    [numpy_helper.from_array(np.array(3, np.int64), "s"),
     numpy_helper.from_array(np.array(-11, np.int64), "l"),
     numpy_helper.from_array(np.array(-2, np.int64), "d")])
save("range_float", [
    helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
    helper.make_node("Mul", ["x", "r"], ["y"], name="mul")],
    [f32("x", [3, 13])], [f32("y", [3, 13])],
    [const("s", 0.1), const("l", 1.4), const("d", 0.1)])

# Activations and elementwise operators heads and feature extractors use
# (opset 20 for Gelu): one model per operator, x uniform in [-3, 3) by
# cpu_run.py's inputs scaled here through a Mul, so that every branch (both
# signs, past thresholds) is taken.
UNARY = [("Erf", {}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
         ("Softplus", {}), ("Softsign", {}), ("LeakyRelu", {"alpha": 0.1}),
         ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Celu", {"alpha": 1.5}),
         ("ThresholdedRelu", {"alpha": 0.5}), ("HardSwish", {}), ("Floor", {}),
         ("Ceil", {}), ("Round", {}), ("Reciprocal", {}), ("Sin", {}),
         ("Cos", {}), ("Sign", {})]
for op, attrs in UNARY:
    name = "unary_" + op.lower() + "".join("_" + k for k in attrs)
    save(name, [
        helper.make_node("Mul", ["x", "three"], ["s"], name="scale"),
        helper.make_node(op, ["s"], ["y"], name="op", **attrs)],
        [f32("x", ["batch", 7])], [f32("y", ["batch", 7])],
        [const("three", 3.0)], opset=20)
save("prelu_channel", [
    helper.make_node("PRelu", ["x", "slope"], ["y"], name="op")],
    [f32("x", ["batch", 4, 5])], [f32("y", ["batch", 4, 5])],
    [const("slope", rng.standard_normal((4, 1)))])
save("max_min_broadcast", [
    helper.make_node("Max", ["x", "b", "c"], ["m"], name="max"),
    helper.make_node("Min", ["m", "b"], ["y"], name="min")],
    [f32("x", ["batch", 6])], [f32("y", ["batch", 6])],
    [const("b", rng.standard_normal(6) * 0.5), const("c", [[-0.25]])])
save("where_mask", [
    helper.make_node("Where", ["mask", "x", "fill"], ["y"], name="op")],
    [helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", 5]),
     f32("x", ["batch", 5])], [f32("y", ["batch", 5])],
    [const("fill", [-1.0])])

# Comparisons and logic feeding a Where (masks computed in the graph).
save("compare_logic_where", [
    helper.make_node("Greater", ["x", "lo"], ["gt"], name="gt"),
    helper.make_node("LessOrEqual", ["x", "hi"], ["le"], name="le"),
    helper.make_node("And", ["gt", "le"], ["band"], name="and"),
    helper.make_node("Equal", ["x", "x"], ["eq"], name="eq"),
    helper.make_node("Xor", ["band", "eq"], ["x1"], name="xor"),
    helper.make_node("Not", ["x1"], ["in_band"], name="not"),
    helper.make_node("Less", ["x", "lo"], ["lt"], name="lt"),
    helper.make_node("GreaterOrEqual", ["x", "hi"], ["ge"], name="ge"),
    helper.make_node("Or", ["lt", "ge"], ["outside"], name="or"),
    helper.make_node("Where", ["in_band", "x", "zero"], ["a"], name="w1"),
    helper.make_node("Where", ["outside", "zero", "a"], ["y"], name="w2")],
    [f32("x", ["batch", 9])], [f32("y", ["batch", 9])],
    [const("lo", -0.3), const("hi", [0.4]), const("zero", 0.0)])

# Reductions and arg-extremes (a CTC head's greedy decoding: ArgMax over the
# classes; pooling over time: ReduceMax / ReduceSum).
save("reduce_sum_max_min_prod", [
    helper.make_node("ReduceSum", ["x", "ax1"], ["s"], keepdims=0, name="sum"),
    helper.make_node("ReduceMax", ["x"], ["mx"], axes=[2], keepdims=1, name="max"),
    helper.make_node("ReduceMin", ["x"], ["mn"], axes=[1, 2], keepdims=0, name="min"),
    helper.make_node("ReduceProd", ["x"], ["pr"], axes=[-1], keepdims=0, name="prod")],
    [f32("x", ["batch", 3, 4])],
    [f32("s", ["batch", 4]), f32("mx", ["batch", 3, 1]), f32("mn", ["batch"]),
     f32("pr", ["batch", 3])],
    [numpy_helper.from_array(np.array([1], np.int64), "ax1")], opset=17)
save("argmax_argmin", [
    helper.make_node("ArgMax", ["x"], ["am"], axis=-1, keepdims=0, name="amax"),
    helper.make_node("ArgMin", ["x"], ["an"], axis=1, keepdims=1, name="amin"),
    helper.make_node("Floor", ["x"], ["q"], name="floor"),
    helper.make_node("ArgMax", ["q"], ["al"], axis=2, select_last_index=1, name="alast")],
    [f32("x", ["batch", 5, 6])],
    [helper.make_tensor_value_info("am", TensorProto.INT64, ["batch", 5]),
     helper.make_tensor_value_info("an", TensorProto.INT64, ["batch", 1, 6]),
     helper.make_tensor_value_info("al", TensorProto.INT64, ["batch", 5, 1])],
    [], opset=17)

# Tile (repeats as a constant input) and CumSum along a constant axis, in
# each of its four modes (positions and running sums in feature pipelines).
save("tile_repeats", [
    helper.make_node("Tile", ["x", "reps"], ["y"], name="tile")],
    [f32("x", ["batch", 2, 3])], [f32("y", ["batch", 4, 3])],
    [numpy_helper.from_array(np.array([1, 2, 1], np.int64), "reps")])
save("cumsum_modes", [
    helper.make_node("CumSum", ["x", "ax"], ["a"], name="plain"),
    helper.make_node("CumSum", ["x", "ax"], ["b"], exclusive=1, name="excl"),
    helper.make_node("CumSum", ["x", "ax"], ["c"], reverse=1, name="rev"),
    helper.make_node("CumSum", ["x", "ax0"], ["d"], exclusive=1, reverse=1,
                     name="both")],
    [f32("x", ["batch", 7])],
    [f32("a", ["batch", 7]), f32("b", ["batch", 7]), f32("c", ["batch", 7]),
     f32("d", ["batch", 7])],
    [numpy_helper.from_array(np.array(1, np.int64), "ax"),
     numpy_helper.from_array(np.array(0, np.int32), "ax0")])


def ints(name, a):
    return numpy_helper.from_array(np.asarray(a, np.int64), name)


# GatherElements (a decoder's index_select / torch.gather): along axis 1 with
# negative indices, and along axis 0 with indices smaller than the data.
save("gather_elements_axis1", [
    helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1, name="ge")],
    [f32("x", [3, 4, 5])], [f32("y", [3, 2, 5])],
    [ints("i", rng.integers(-4, 4, (3, 2, 5)))])
save("gather_elements_axis0", [
    helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0, name="ge")],
    [f32("x", [4, 3])], [f32("y", [2, 2])],
    [ints("i", [[3, 0], [-1, 2]])])

# ScatterND: whole rows replaced (k = 1 of rank 3), single elements added with
# a repeated index (opset 16 reduction), and max (opset 18).
save("scatter_nd_rows", [
    helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc")],
    [f32("x", [4, 5, 3]), f32("u", [2, 5, 3])], [f32("y", [4, 5, 3])],
    [ints("i", [[2], [-4]])], opset=13)
save("scatter_nd_add_elements", [
    helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add",
                     name="sc")],
    [f32("x", [3, 4]), f32("u", [3])], [f32("y", [3, 4])],
    [ints("i", [[0, 1], [2, 3], [0, 1]])], opset=16)
save("scatter_nd_max_2d_index", [
    helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="max",
                     name="sc")],
    [f32("x", [2, 3, 4]), f32("u", [2, 2, 4])], [f32("y", [2, 3, 4])],
    [ints("i", [[[0, 1], [1, 2]], [[1, 0], [0, 2]]])], opset=18)

# ScatterElements (PyTorch's scatter_ / index_put along one axis): along
# axis 1 with negative indices, unique positions; reduction add (opset 16)
# with repeated indices; and opset 9's Scatter.
save("scatter_elements_axis1", [
    helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, name="se")],
    [f32("x", [3, 5]), f32("u", [3, 2])], [f32("y", [3, 5])],
    [ints("i", [[0, -1], [2, 3], [-5, 1]])], opset=13)
save("scatter_elements_add_repeated", [
    helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0,
                     reduction="add", name="se")],
    [f32("x", [4, 3]), f32("u", [3, 3])], [f32("y", [4, 3])],
    [ints("i", [[1, 1, 0], [1, 3, 0], [2, 1, 0]])], opset=16)
save("scatter_opset9", [
    helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=-1, name="sc")],
    [f32("x", [2, 4]), f32("u", [2, 2])], [f32("y", [2, 4])],
    [ints("i", [[3, 0], [1, 2]])], opset=9)

# Dropout at inference (the identity; a ratio input and an unused mask).
save("dropout_inference", [
    helper.make_node("Dropout", ["x", "ratio"], ["d", "mask"], name="do"),
    helper.make_node("Relu", ["d"], ["y"], name="relu")],
    [f32("x", [2, 6])], [f32("y", [2, 6])], [const("ratio", 0.3)], opset=13)

# A length computed from a TopK's result shape, k the input's own length
# (PyTorch's sort + numel + arange, as tashkeel models write it): Range's
# length is known when the model is compiled.
save("topk_range_length", [
    helper.make_node("Shape", ["x"], ["sx"], name="shape_x"),
    helper.make_node("Gather", ["sx", "zero"], ["n"], axis=0, name="len"),
    helper.make_node("TopK", ["x", "n"], ["vals", "idx"], axis=-1, name="topk"),
    helper.make_node("Shape", ["vals"], ["sv"], name="shape_vals"),
    helper.make_node("ReduceProd", ["sv"], ["numel"], keepdims=0, name="numel"),
    helper.make_node("Range", ["start", "numel", "one"], ["r"], name="range"),
    helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT, name="cast"),
    helper.make_node("Add", ["vals", "rf"], ["y"], name="add")],
    [f32("x", [6])], [f32("y", [6])],
    [ints("zero", [0]), numpy_helper.from_array(np.array(0, np.int64), "start"),
     numpy_helper.from_array(np.array(1, np.int64), "one")], opset=13)

# Einsum: a batched matmul, an implicit output, a diagonal, a transposing
# reduction, and a chain of three operands.
save("einsum_batched_matmul", [
    helper.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik",
                     name="es")],
    [f32("a", [2, 3, 4]), f32("b", [2, 4, 5])], [f32("y", [2, 3, 5])], [])
save("einsum_implicit", [
    helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij, jk", name="es")],
    [f32("a", [3, 4]), f32("b", [4, 2])], [f32("y", [3, 2])], [])
save("einsum_diagonal", [
    helper.make_node("Einsum", ["a"], ["y"], equation="ii->i", name="es")],
    [f32("a", [5, 5])], [f32("y", [5])], [])
save("einsum_transpose_sum", [
    helper.make_node("Einsum", ["a"], ["y"], equation="abc->ca", name="es")],
    [f32("a", [2, 3, 4])], [f32("y", [4, 2])], [])
save("einsum_three", [
    helper.make_node("Einsum", ["a", "b", "c"], ["y"], equation="ij,jk,kl->il",
                     name="es")],
    [f32("a", [2, 3]), f32("b", [3, 4]), f32("c", [4, 2])], [f32("y", [2, 2])], [])

# ConvTranspose (a vocoder's upsampler, a segmentation decoder): 1-D stride 4
# with pads and a bias; 2-D with 2 groups, dilation 2, output_padding; VALID
# without a bias.
save("conv_transpose_1d_stride", [
    helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[4],
                     pads=[2, 2], name="ct")],
    [f32("x", [2, 3, 7])], [f32("y", [2, 5, 28])],
    [const("w", rng.standard_normal((3, 5, 8))), const("b", rng.standard_normal(5))])
save("conv_transpose_2d_groups", [
    helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 3],
                     dilations=[2, 1], group=2, output_padding=[1, 2],
                     pads=[1, 0, 0, 1], name="ct")],
    [f32("x", [1, 4, 3, 4])], [f32("y", [1, 6, 9, 13])],
    [const("w", rng.standard_normal((4, 3, 3, 3))), const("b", rng.standard_normal(6))])
save("conv_transpose_valid_nobias", [
    helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="VALID",
                     strides=[2], name="ct")],
    [f32("x", [1, 2, 5])], [f32("y", [1, 3, 12])],
    [const("w", rng.standard_normal((2, 3, 4)))])

# Resize (a detector's FPN, a CRNN's feature-map resampling): nearest with
# integer scales (half_pixel, round_prefer_floor), nearest asymmetric floor at
# 1.5x (what opset 10 and TF write), bilinear from sizes (half_pixel), with
# align_corners, pytorch_half_pixel down to one row, and opset 10's form.
save("resize_nearest_scales", [
    helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", name="rs")],
    [f32("x", [1, 2, 3, 4])], [f32("y", [1, 2, 6, 8])],
    [const("s", [1, 1, 2, 2])], opset=13)
save("resize_nearest_asymmetric", [
    helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest",
                     coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor", name="rs")],
    [f32("x", [2, 3, 4, 5])], [f32("y", [2, 3, 6, 7])],
    [const("s", [1, 1, 1.5, 1.5])], opset=13)
save("resize_linear_sizes", [
    helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear",
                     name="rs")],
    [f32("x", [1, 3, 5, 4])], [f32("y", [1, 3, 8, 9])],
    [ints("z", [1, 3, 8, 9])], opset=13)
save("resize_linear_align_corners", [
    helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear",
                     coordinate_transformation_mode="align_corners", name="rs")],
    [f32("x", [1, 2, 4, 4])], [f32("y", [1, 2, 7, 6])],
    [const("s", [1, 1, 1.75, 1.5])], opset=13)
save("resize_linear_pytorch_half_pixel", [
    helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear",
                     coordinate_transformation_mode="pytorch_half_pixel",
                     name="rs")],
    [f32("x", [1, 2, 6, 5])], [f32("y", [1, 2, 1, 3])],
    [ints("z", [1, 2, 1, 3])], opset=13)
save("resize_opset10", [
    helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest", name="rs")],
    [f32("x", [1, 1, 3, 3])], [f32("y", [1, 1, 6, 4])],
    [const("s", [1, 1, 2, 1.5])], opset=10)

# TopK (a beam search's or a classifier's): the largest 3 along the last axis
# of values with ties (Floor(2x): equal values come by index), and the
# smallest 2 along axis 0.
save("topk_largest_ties", [
    helper.make_node("Mul", ["x", "two"], ["x2"], name="mul"),
    helper.make_node("Floor", ["x2"], ["s"], name="floor"),
    helper.make_node("TopK", ["s", "k"], ["v", "i"], axis=-1, name="tk")],
    [f32("x", [2, 3, 7])],
    [f32("v", [2, 3, 3]), helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3, 3])],
    [ints("k", [3]), const("two", 2.0)])
save("topk_smallest_axis0", [
    helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0, name="tk")],
    [f32("x", [5, 4])],
    [f32("v", [2, 4]), helper.make_tensor_value_info("i", TensorProto.INT64, [2, 4])],
    [ints("k", [2])], opset=11)

# Quantized pieces of a model through onnxruntime.quantization's
# quantize_dynamic: DequantizeLinear (an int8 input per tensor; uint8
# weights per axis, as a quantized embedding or Conv weight), and
# uint8 graph outputs: a class index cast to uint8 (piper's tashkeel hands
# its predictions out so) and a scaled magnitude cast to uint8 (in range);
# QuantizeLinear's and DynamicQuantizeLinear's uint8 results as outputs.
save("cast_uint8_outputs", [
    helper.make_node("ArgMax", ["x"], ["a"], axis=-1, keepdims=0, name="argmax"),
    helper.make_node("Cast", ["a"], ["y"], to=TensorProto.UINT8, name="cast_index"),
    helper.make_node("Abs", ["x"], ["ax"], name="abs"),
    helper.make_node("Mul", ["ax", "hundred"], ["m"], name="scale"),
    helper.make_node("Cast", ["m"], ["f"], to=TensorProto.UINT8, name="cast_float")],
    [f32("x", [2, 3, 7])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3]),
     helper.make_tensor_value_info("f", TensorProto.UINT8, [2, 3, 7])],
    [const("hundred", 100.0)], opset=13)
save("quantize_uint8_output", [
    helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
    [f32("x", [2, 5])], [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 5])],
    [const("s", 0.02), numpy_helper.from_array(np.array(128, np.uint8), "z")], opset=13)
save("dynamic_quantize_outputs", [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], name="dql")],
    [f32("x", [3, 4])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [3, 4]), f32("s", []),
     helper.make_tensor_value_info("z", TensorProto.UINT8, [])], [], opset=13)

# DynamicQuantizeLinear feeding MatMulInteger (int8 weights with one zero
# point per column; uint8 weights with a scalar one) then Cast and the
# scales' product, as a quantized Linear layer. Integers: bit for bit.
save("dequantize_linear", [
    helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq"),
    helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["y2"], axis=1, name="dqw")],
    [helper.make_tensor_value_info("x", TensorProto.INT8, [3, 4])],
    [f32("y", [3, 4]), f32("y2", [2, 3, 4])],
    [const("s", 0.05), numpy_helper.from_array(np.array(-3, np.int8), "z"),
     numpy_helper.from_array(rng.integers(0, 256, (2, 3, 4)).astype(np.uint8), "w"),
     const("sw", [0.1, 0.2, 0.3]),
     numpy_helper.from_array(np.array([1, 128, 255], np.uint8), "zw")], opset=13)
save("dynamic_quantize_matmul", [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"], name="dql"),
    helper.make_node("MatMulInteger", ["q", "w", "qz", "wz"], ["y"], name="mmi"),
    helper.make_node("MatMulInteger", ["q", "u", "qz", "uz"], ["acc"], name="mmu"),
    helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT, name="cast"),
    helper.make_node("Mul", ["qs", "us"], ["scale"], name="ms"),
    helper.make_node("Mul", ["accf", "scale"], ["y2"], name="mul")],
    [f32("x", [2, 5, 8])],
    [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 5, 6]), f32("y2", [2, 5, 6])],
    [numpy_helper.from_array(rng.integers(-128, 128, (8, 6)).astype(np.int8), "w"),
     numpy_helper.from_array(np.array([1, -2, 3, 0, 5, -128], np.int8), "wz"),
     numpy_helper.from_array(rng.integers(0, 256, (8, 6)).astype(np.uint8), "u"),
     numpy_helper.from_array(np.array(131, np.uint8), "uz"), const("us", 0.02)], opset=13)

# ConvInteger as quantize_dynamic writes a Conv: the input through
# DynamicQuantizeLinear, int8 weights (Conv1d, pads); uint8 weights
# (grouped Conv2d, stride 2). Scalar weight zero points: ONNX Runtime
# refuses one per output channel, which the spec allows and lstm-run takes.
save("conv_integer", [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"], name="dql"),
    helper.make_node("ConvInteger", ["q", "w", "qz", "wz"], ["y"], pads=[1, 1], name="ci")],
    [f32("x", [1, 4, 10])], [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 6, 10])],
    [numpy_helper.from_array(rng.integers(-128, 128, (6, 4, 3)).astype(np.int8), "w"),
     numpy_helper.from_array(np.array(-7, np.int8), "wz")], opset=13)
save("conv_integer_group", [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"], name="dql"),
    helper.make_node("ConvInteger", ["q", "w", "qz", "wz"], ["y"], group=2, strides=[2, 2],
                     pads=[1, 1, 1, 1], name="ci")],
    [f32("x", [1, 4, 6, 6])], [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4, 3, 3])],
    [numpy_helper.from_array(rng.integers(0, 256, (4, 2, 3, 3)).astype(np.uint8), "w"),
     numpy_helper.from_array(np.array(128, np.uint8), "wz")], opset=13)

# QuantizeLinear as quantize_static writes it (the QDQ format): a Linear
# layer's activations through QuantizeLinear + DequantizeLinear (uint8, a
# scalar zero point), its weights int8 per output column (axis 1); and int8
# per axis 1 of a 3-D tensor.
save("qdq_linear", [
    helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q"),
    helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq"),
    helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1, name="dqw"),
    helper.make_node("MatMul", ["xd", "wd"], ["y"], name="mm"),
    helper.make_node("QuantizeLinear", ["x3", "s3", "z3"], ["q3"], axis=1, name="q3"),
    helper.make_node("DequantizeLinear", ["q3", "s3", "z3"], ["y3"], axis=1, name="dq3")],
    [f32("x", [4, 8]), f32("x3", [2, 3, 5])], [f32("y", [4, 6]), f32("y3", [2, 3, 5])],
    [const("xs", 0.01), numpy_helper.from_array(np.array(128, np.uint8), "xz"),
     numpy_helper.from_array(rng.integers(-127, 128, (8, 6)).astype(np.int8), "w"),
     const("ws", rng.uniform(0.001, 0.01, 6)),
     numpy_helper.from_array(np.zeros(6, np.int8), "wz"),
     const("s3", [0.004, 0.01, 0.02]),
     numpy_helper.from_array(np.array([-5, 0, 100], np.int8), "z3")], opset=13)

# Contractions big enough (over 2M multiply-adds) for the threads: a Conv1d
# 64 -> 64 (k 3, 256 positions) and a Linear layer's Gemm (transB = 1,
# [64, 256] x [256, 512]^T): with 2 threads their tile loops run in parallel.
save("conv1d_wide", [
    helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1], name="c")],
    [f32("x", [1, 64, 256])], [f32("y", [1, 64, 256])],
    [const("w", rng.standard_normal((64, 64, 3)) * 0.1), const("b", rng.standard_normal(64))])
save("gemm_linear_wide", [
    helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="g")],
    [f32("x", [64, 256])], [f32("y", [64, 512])],
    [const("w", rng.standard_normal((512, 256)) * 0.1), const("b", rng.standard_normal(512))])
