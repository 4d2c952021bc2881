#!/usr/bin/env python3
"""Hostile variants of dq_lstm_fwd_uint8_tensor.onnx for
dynamic-quantize-lstm.test: a DynamicQuantizeLSTM has no ONNX verifier, so
the importer must check the shapes itself.

Usage: make_bad_dynquant.py IN.onnx OUTDIR
  * bad_r.onnx: R [1, 8, 64] instead of [1, 16, 64] (H = 16);
  * bad_scale.onnx: W's scale with 3 values for one direction;
  * bad_dir.onnx: direction "sideways".
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def variant(name, edit):
    m = onnx.load(src)
    edit(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def set_init(m, name, array):
    for i, t in enumerate(m.graph.initializer):
        if t.name == name:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(array, name))
            return
    raise KeyError(name)


def init(m, name):
    return next(numpy_helper.to_array(t) for t in m.graph.initializer if t.name == name)


variant("bad_r", lambda m: set_init(m, "R_quantized", init(m, "R_quantized")[:, :8, :]))
variant("bad_scale", lambda m: set_init(m, "W_scale", np.ones(3, np.float32)))


def sideways(m):
    node = m.graph.node[0]
    for a in node.attribute:
        if a.name == "direction":
            a.CopyFrom(helper.make_attribute("direction", "sideways"))


variant("bad_dir", sideways)
