#!/usr/bin/env python3
"""The resources of the generated GPU kernels, as docs/GPUKernels.md lists
them: every model below compiled with `lstm-opt --target=gpu -o k.ptx` for
sm_80 and sm_90, assembled by `ptxas -v`; one markdown row per kernel
(registers, static and dynamic shared memory, spills).

    .venv/bin/python scripts/gpu_kernel_table.py [--lstm-opt build/bin/lstm-opt]
        [--ptxas /usr/local/cuda/bin/ptxas]

Dynamic shared memory is the launch's size (the one-block persistent kernel
keeping a recurrent matrix past 48 KiB); ptxas does not see it, so it is
read from the host code (`lstm-opt -o m.mlir`).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def models(work):
    """(label, onnx path, extra lstm-opt flags)."""
    import onnx
    import make_unrolled_lstm
    e2e = os.path.join(ROOT, "test", "e2e", "models")
    out = [("torch_nn_lstm (LSTM T5 B3 I5 H7)", os.path.join(e2e, "torch_nn_lstm.onnx"),
            ["--input-shape=x=5x3x5", "--input-shape=h0=1x3x7", "--input-shape=c0=1x3x7"]),
           ("torch_nn_lstm, step design", os.path.join(e2e, "torch_nn_lstm.onnx"),
            ["--gpu-design=step", "--input-shape=x=5x3x5", "--input-shape=h0=1x3x7",
             "--input-shape=c0=1x3x7"]),
           ("torch_nn_gru_2layer", os.path.join(e2e, "torch_nn_gru_2layer.onnx"), []),
           ("torch_nn_rnn (RNN T3 B3 I2 H7)", os.path.join(e2e, "torch_nn_rnn.onnx"), [])]
    for label, (T, B, I, H), flags in [
            ("LSTM T4 B1 I64 H64 (persistent, one block)", (4, 1, 64, 64), []),
            ("LSTM T4 B1 I64 H64 (one block, weights in shared memory)", (4, 1, 64, 64),
             ["--gpu-weights=shared"]),
            ("LSTM T4 B1 I128 H256 (persistent, one block per SM)", (4, 1, 128, 256), []),
            ("LSTM T4 B4 I128 H1024 (persistent, one block per SM)", (4, 4, 128, 1024), []),
            ("LSTM T4 B4 I128 H1024 (one block per SM, weights in shared memory)",
             (4, 4, 128, 1024), ["--gpu-weights=shared"]),
            ("LSTM T4 B64 I128 H256 (step)", (4, 64, 128, 256), ["--gpu-design=step"]),
            ("LSTM T4 B64 I128 H256 (persistent, forced)", (4, 64, 128, 256), []),
            ("LSTM T4 B4 I64 H64 (bf16, tensor cores, one block)", (4, 4, 64, 64),
             ["--precision=bf16"]),
            ("LSTM T4 B4 I128 H1024 (bf16, tensor cores, one block per SM)",
             (4, 4, 128, 1024), ["--precision=bf16"])]:
        path = os.path.join(work, "lstm_%d_%d_%d_%d.onnx" % (T, B, I, H))
        onnx.save(make_unrolled_lstm.build(T, H, I, B), path)
        out.append((label, path, flags))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lstm-opt", default=os.path.join(ROOT, "build", "bin", "lstm-opt"))
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gpu-kernels-")
    print("| model | kernel | chip | registers | shared memory (bytes) | spill stores/loads |")
    print("|---|---|---|---:|---:|---|")
    for label, path, flags in models(work):
        for chip in ["sm_80", "sm_90"]:
            # On sm_80 (108 SMs: 10 units a block) LSTM B4 H1024 fits neither
            # persistent design: the step kernel runs it.
            if "H1024" in label and chip == "sm_80":
                continue
            ptx = os.path.join(work, "k.ptx")
            # The generated kernels, not the layers sm_90's table gives cuDNN.
            if not any(f.startswith("--gpu-design") for f in flags):
                flags = flags + ["--gpu-design=persistent"]
            base = [args.lstm_opt, path, "--target=gpu", "--gpu-chip=" + chip] + flags
            subprocess.run(base + ["-o", ptx], check=True, capture_output=True)
            host = subprocess.run(base + ["-o", "-"], check=True, capture_output=True,
                                  text=True).stdout
            # SSA names repeat across functions: look a launch's size up in
            # its own function.
            dynamic = {}
            for fn in host.split("llvm.func "):
                consts = dict(re.findall(r"(%\w+) = llvm.mlir.constant\((\d+) : i32\)", fn))
                dynamic.update({m.group(1): int(consts[m.group(2)]) for m in re.finditer(
                    r"@__lstm_opt_kernels::@(\w+) [^\n]*?dynamic_shared_memory_size (%\w+)", fn)
                    if m.group(2) in consts})
            log = subprocess.run([args.ptxas, "-arch=" + chip, "-v", ptx, "-o", os.devnull],
                                 check=True, capture_output=True, text=True).stderr
            for m in re.finditer(
                    r"Compiling entry function '(\w+)'.*?(\d+) bytes spill stores, (\d+) bytes "
                    r"spill loads\s+ptxas info\s+: Used (\d+) registers(?:, used \d+ barriers)?"
                    r"(?:, (\d+) bytes smem)?", log, re.S):
                name, st, ld, regs, smem = m.groups()
                smem = int(smem or 0)
                shared = str(smem)
                if name in dynamic:
                    shared = "%d dynamic" % dynamic[name]
                kernel = name.rsplit("_", 1)[1]
                if kernel in ("rz", "n"):
                    kernel = "step_" + kernel
                print("| %s | %s | %s | %s | %s | %s/%s |" % (label, kernel, chip, regs, shared,
                                                           st, ld))


if __name__ == "__main__":
    main()
