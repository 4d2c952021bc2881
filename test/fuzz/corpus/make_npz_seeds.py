#!/usr/bin/env python3
"""Writes the .npz seeds of lstm-opt-fuzz-npz (test/fuzz/corpus/npz): small
archives of the kinds lstm-run reads, stored and deflated, several dtypes."""
import os

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npz")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(3)
np.savez(os.path.join(out, "stored_f32_i64.npz"),
         x=rng.standard_normal((2, 3)).astype(np.float32), sr=np.array(16000, np.int64))
np.savez_compressed(os.path.join(out, "deflated_f32.npz"),
                    x=rng.standard_normal((4, 1, 5)).astype(np.float32))
np.savez(os.path.join(out, "mixed.npz"), b=np.array([True, False]),
         h=np.zeros((1, 2, 3), np.float16), d=np.arange(3, dtype=np.float64),
         e=np.zeros((0, 4), np.float32))
