#!/usr/bin/env python3
"""The CPU kernels' input GEMM in chunks of steps gives the same bits.

Usage: gemm_chunks.py --lstm-run PATH [--workdir DIR]

Builds layers whose projections pass the automatic chunking's 32 KiB (T60,
B3, H96: chunks of 12 to 48 steps, whole register tiles; LSTM and GRU on an
OpenMP team at 2 threads), runs each
with `lstm-run` as chosen automatically and with `--gemm-chunk-steps=T` (one
GEMM over the sequence), at 1 and 2 threads and at every precision, and
requires the same bits; the f32 runs also within 1e-4 of ONNX Runtime.
The models cover directions, sequence_lens (rows reading their steps at
other times), GRU reset forms, RNN, peepholes and clip. Prints one line per
run and 'chunks: N passed, M failed'.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from cpu_variants import layer_model  # noqa: E402
from ortutil import max_rel_error, run_lstm_run, run_ort  # noqa: E402

T, B, H = 60, 3, 96
LAYERS = {
    "lstm_bidir_lens_peephole_clip": dict(kind="LSTM", direction="bidirectional", lens=True,
                                          peephole=True, clip=0.9),
    "lstm_reverse": dict(kind="LSTM", direction="reverse"),
    "gru_reset_before_reverse_lens": dict(kind="GRU", lbr=0, direction="reverse", lens=True),
    "gru_lbr_bidir": dict(kind="GRU", lbr=1, direction="bidirectional"),
    "rnn_bidir_lens": dict(kind="RNN", direction="bidirectional", lens=True),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--workdir")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="gemm-chunks-")
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for i, (name, spec) in enumerate(LAYERS.items()):
        path = os.path.join(work, name + ".onnx")
        feeds = layer_model(path, T=T, B=B, I=24, H=H, seed=100 + i, wscale=0.2, **spec)
        ref = run_ort(path, feeds)
        for precision in ("f32", "bf16", "int8"):
            for k in (1, 2):
                common = ["--threads", str(k), "--precision=" + precision]
                stem = os.path.join(work, f"{name}.{precision}.t{k}")
                auto, err = run_lstm_run(a.lstm_run, path, feeds, stem + ".auto", common)
                whole, err2 = run_lstm_run(a.lstm_run, path, feeds, stem + ".whole",
                                           common + [f"--gemm-chunk-steps={T}"])
                if auto is None or whole is None:
                    print(f"FAIL {name} {precision} threads={k}: {err}{err2}")
                    failed += 1
                    continue
                same = all(np.array_equal(auto[o], whole[o], equal_nan=True) for o in whole)
                note = ""
                ok = same
                if precision == "f32":
                    e = max_rel_error(auto, ref)
                    ok = ok and e <= 1e-4
                    note = f", max rel err {e:.2e} against ONNX Runtime"
                print(f"{'ok  ' if ok else 'FAIL'} {name} {precision} threads={k}: "
                      f"{'the same bits' if same else 'NOT the same bits'} in chunks "
                      f"as in one GEMM{note}")
                passed += ok
                failed += not ok
    print(f"chunks: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
