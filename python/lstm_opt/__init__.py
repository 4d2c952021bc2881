"""lstm_opt: fuse unrolled LSTM/GRU/RNN cells in ONNX models.

A thin, dependable layer over the `lstm-opt` tool: every call writes the
model to a temporary folder, runs the tool, and reads its outputs back, so
the Python API behaves exactly like the command line (same passes, same
errors, same report).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

try:
    import onnx
except ImportError:  # a --no-deps install: lstm_opt.runtime still works
    onnx = None

__all__ = ["optimize", "report", "check", "html_report", "random_inputs", "CheckResult",
           "LstmOptError", "find_tool", "compile"]

ModelLike = Union[str, os.PathLike, "onnx.ModelProto"]


class LstmOptError(RuntimeError):
    """The tool refused the input or failed; the message is its stderr."""


def find_tool() -> str:
    """The lstm-opt executable: $LSTM_OPT, the one this package carries
    (pip install), the source tree's build, or PATH."""
    env = os.environ.get("LSTM_OPT")
    if env:
        return env
    from ._native import bundled
    found = bundled("lstm-opt")
    if found:
        return found
    here = Path(__file__).resolve().parents[2] / "build" / "bin" / "lstm-opt"
    if here.exists():
        return str(here)
    found = shutil.which("lstm-opt")
    if found:
        return found
    raise LstmOptError("cannot find lstm-opt: install the package with pip "
                       "(which builds it), set LSTM_OPT, or put it on PATH")


def _needs(module, name: str, what: str):
    """`module`, or a clear error naming the package to install."""
    if module is None:
        raise LstmOptError(f"{what} needs the {name} package, a dependency of "
                           f"lstm_opt that is not installed: pip install {name}")
    return module


def _materialize(model: ModelLike, folder: str) -> str:
    if onnx is not None and isinstance(model, onnx.ModelProto):
        path = os.path.join(folder, "input.onnx")
        onnx.save(model, path)
        return path
    path = os.fspath(model)
    if not os.path.exists(path):
        raise LstmOptError(f"{path}: no such file")
    return path


def _run(model: ModelLike, passes: Optional[Sequence[str]], want_model: bool):
    with tempfile.TemporaryDirectory(prefix="lstm_opt-") as tmp:
        src = _materialize(model, tmp)
        out = os.path.join(tmp, "output.onnx")
        rep = os.path.join(tmp, "report.json")
        cmd = [find_tool(), src, "-o", out, "--report=json", "--report-file", rep]
        if passes is not None:
            cmd.append("--pass-pipeline=builtin.module(%s)" % ",".join(passes))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LstmOptError(proc.stderr.strip() or
                               f"lstm-opt exited with {proc.returncode}")
        with open(rep) as f:
            result = json.load(f)
        fused = (_needs(onnx, "onnx", "lstm_opt.optimize").load(out)
                 if want_model else None)
        return fused, result


def compile(model: ModelLike, out_path: Union[str, os.PathLike], *,  # noqa: A001
            precision: Optional[str] = None, threads: Optional[int] = None,
            target_cpu: Optional[str] = None,
            input_shapes: Optional[Dict[str, Sequence[int]]] = None,
            state: Optional[str] = None,
            gemm_chunk_steps: Optional[int] = None,
            batch_tile: Optional[int] = None,
            extra_args: Sequence[str] = ()) -> Dict:
    """Compiles `model` for the CPU (`lstm-opt --target=cpu`) into the shared
    library `out_path` (a `.so`; its C header is written beside it) and
    returns the report dict. `precision`: "f32", "bf16" or "int8" (None: the
    model's own: f32, and int8 for layers the model quantizes), optionally
    followed by single layers' precisions, "int8,/rnn/LSTM_1=f32" (the ONNX
    node a layer's remark names);
    `threads`: the library's initial thread count; `target_cpu`: an LLVM CPU
    name (default: this machine); `input_shapes`: sizes for symbolic
    dimensions, {name: [d0, d1, ...]}; `state`: the model's state pairs,
    "auto" or "IN=OUT[,IN=OUT...]" (lstm-opt --state), for
    `Model(out_path).stream()`; `gemm_chunk_steps`: steps per chunk of the
    kernels' hoisted input GEMM (0: chosen from its size; N >= the steps:
    one GEMM); `batch_tile`: rows per register tile of the kernels' GEMMs
    (1..8; default: as many as the target's registers hold). Load the result with
    `lstm_opt.runtime.Model(out_path)`. Nothing is written on failure."""
    out_path = os.fspath(out_path)
    with tempfile.TemporaryDirectory(prefix="lstm_opt-") as tmp:
        src = _materialize(model, tmp)
        rep = os.path.join(tmp, "report.json")
        cmd = [find_tool(), src, "--target=cpu", "-o", out_path, "--report=json",
               "--report-file", rep]
        if precision is not None:
            cmd.append("--precision=" + precision)
        if threads is not None:
            cmd += ["--threads", str(int(threads))]
        if target_cpu:
            cmd.append("--target-cpu=" + target_cpu)
        if state:
            cmd.append("--state=" + state)
        for flag, value in (("--gemm-chunk-steps", gemm_chunk_steps),
                            ("--batch-tile", batch_tile)):
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise LstmOptError(f"{flag.lstrip('-').replace('-', '_')} must be an "
                                       f"integer, not {value!r}")
                cmd.append(f"{flag}={value}")
        for name, dims in (input_shapes or {}).items():
            cmd.append("--input-shape=%s=%s" % (name, "x".join(str(int(d)) for d in dims)))
        cmd += list(extra_args)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LstmOptError(proc.stderr.strip() or
                               f"lstm-opt exited with {proc.returncode}")
        with open(rep) as f:
            return json.load(f)


def optimize(model: ModelLike, *, passes: Optional[Sequence[str]] = None,
             return_report: bool = False):
    """Runs lstm-opt's default pipeline (or the named `passes`) and returns
    the optimised model (and the report dict if `return_report`)."""
    fused, rep = _run(model, passes, want_model=True)
    return (fused, rep) if return_report else fused


def report(model: ModelLike, *, passes: Optional[Sequence[str]] = None) -> Dict:
    """The --report=json record of optimising `model`: op counts before and
    after, the fused layers, the refused nodes with their reasons, timings."""
    return _run(model, passes, want_model=False)[1]


@dataclasses.dataclass
class CheckResult:
    """Largest differences between two models' outputs, per output name."""
    max_abs_error: Dict[str, float]
    max_rel_error: Dict[str, float]
    rtol: float
    atol: float

    @property
    def ok(self) -> bool:
        return all(self.max_abs_error[k] <= self.atol + self.rtol * self._scale[k]
                   for k in self.max_abs_error)

    _scale: Dict[str, float] = dataclasses.field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        lines = [f"{'ok' if self.ok else 'MISMATCH'} (rtol {self.rtol}, atol {self.atol})"]
        for k in self.max_abs_error:
            lines.append(f"  {k}: max abs {self.max_abs_error[k]:.3g}, "
                         f"max rel {self.max_rel_error[k]:.3g}")
        return "\n".join(lines)


def random_inputs(model: "onnx.ModelProto", rng, dynamic_dim: int = 2):
    """Feeds for the graph inputs: standard-normal floats, 0/1 integers and
    booleans, shaped after the inputs (symbolic dimensions = `dynamic_dim`)."""
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dynamic_dim
                 for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[inp.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[inp.name] = rng.integers(0, 2, shape).astype(dtype)
    return feeds


def check(original: ModelLike, optimized: ModelLike, *, trials: int = 2,
          rtol: float = 1e-5, atol: float = 1e-6, dynamic_dim: int = 2,
          seed: int = 0) -> CheckResult:
    """Runs both models in ONNX Runtime (CPU) on `trials` random inputs of the
    graph inputs' shapes (symbolic dims = `dynamic_dim`) and reports the
    largest absolute and relative errors per output."""
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    _needs(ort, "onnxruntime", "lstm_opt.check")
    _needs(onnx, "onnx", "lstm_opt.check")

    def load(m):
        return m if isinstance(m, onnx.ModelProto) else onnx.load(os.fspath(m))

    a, b = load(original), load(optimized)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sa = ort.InferenceSession(a.SerializeToString(), opts,
                              providers=["CPUExecutionProvider"])
    sb = ort.InferenceSession(b.SerializeToString(), opts,
                              providers=["CPUExecutionProvider"])
    names = [o.name for o in sa.get_outputs()]
    rng = np.random.default_rng(seed)
    abs_err = {n: 0.0 for n in names}
    rel_err = {n: 0.0 for n in names}
    scale = {n: 0.0 for n in names}
    for _ in range(trials):
        feeds = random_inputs(a, rng, dynamic_dim)
        ra = dict(zip(names, sa.run(names, feeds)))
        rb = dict(zip(names, sb.run(names, feeds)))
        for n in names:
            x, y = ra[n].astype(np.float64), rb[n].astype(np.float64)
            if x.shape != y.shape:
                abs_err[n] = rel_err[n] = float("inf")
                continue
            if x.size == 0:
                continue
            d = np.abs(x - y)
            abs_err[n] = max(abs_err[n], float(d.max()))
            rel_err[n] = max(rel_err[n], float((d / np.maximum(np.abs(x), 1e-12)).max()))
            scale[n] = max(scale[n], float(np.abs(x).max()))
    return CheckResult(abs_err, rel_err, rtol, atol, scale)


def html_report(model: ModelLike, out_path: str, **kwargs) -> Dict:
    """Writes an HTML page of the optimisation (counts, each fused layer
    before/after as Graphviz pictures, timings); see lstm_opt.html."""
    from .html import html_report as _html_report
    return _html_report(model, out_path, **kwargs)
