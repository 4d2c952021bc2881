"""Tests of the Python package (run by the lit suite, test/Python)."""
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

import lstm_opt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "lstmcell_unrolled.onnx"
MODELS = ROOT / "test" / "e2e" / "models"


def op_types(model):
    return [n.op_type for n in model.graph.node]


def test_optimize_path_fuses_the_example():
    fused = lstm_opt.optimize(EXAMPLE)
    assert op_types(fused).count("LSTM") == 1
    assert "Sigmoid" not in op_types(fused)
    onnx.checker.check_model(fused, full_check=True)


def test_optimize_accepts_a_model_proto_and_returns_the_report():
    fused, rep = lstm_opt.optimize(onnx.load(MODELS / "torch_grucell_loop.onnx"),
                                   return_report=True)
    assert op_types(fused).count("GRU") == 1
    assert rep["layers"][0]["cell"] == "GRU"
    assert rep["layers"][0]["steps"] == 7


def test_report_lists_layers_and_timings():
    rep = lstm_opt.report(EXAMPLE)
    assert rep["nodes_before"] == 289 and rep["nodes_after"] == 6
    assert [p["name"] for p in rep["phases"]][0] == "import"


def test_pure_round_trip_with_explicit_passes():
    same = lstm_opt.optimize(EXAMPLE, passes=[])
    assert len(same.graph.node) == 289


def test_check_agrees_on_fused_and_catches_a_different_model():
    fused = lstm_opt.optimize(EXAMPLE)
    result = lstm_opt.check(EXAMPLE, fused)
    assert result.ok, str(result)
    assert max(result.max_abs_error.values()) <= 1e-6
    # A wrong weight must be caught.
    broken = onnx.load(EXAMPLE)
    w = broken.graph.initializer[0]
    arr = onnx.numpy_helper.to_array(w).copy()
    arr.flat[0] += 1.0
    w.CopyFrom(onnx.numpy_helper.from_array(arr, w.name))
    assert not lstm_opt.check(EXAMPLE, broken).ok


def test_bad_input_raises_with_the_tools_message(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(lstm_opt.LstmOptError, match="not a valid ONNX model"):
        lstm_opt.optimize(bad)
    with pytest.raises(lstm_opt.LstmOptError, match="no such file"):
        lstm_opt.optimize(tmp_path / "missing.onnx")


def test_cli(tmp_path):
    out = tmp_path / "fused.onnx"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.run([sys.executable, "-m", "lstm_opt", str(EXAMPLE), str(out),
                           "--check"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "289 nodes -> 6" in proc.stdout
    assert "LSTM layer, 16 steps, forward" in proc.stdout
    assert "ok (rtol" in proc.stdout
    assert op_types(onnx.load(out)).count("LSTM") == 1


def test_html_report(tmp_path):
    page = tmp_path / "report.html"
    rep = lstm_opt.html_report(MODELS / "torch_grucell_loop.onnx", str(page))
    text = page.read_text()
    assert rep["nodes_after"] < rep["nodes_before"]
    assert "Layer 1: GRU, 7 steps, forward, hidden 7" in text
    assert "the first 2 of 7 steps" in text
    # Graphviz pictures of before and after, and the timing chart.
    assert text.count("<svg") >= 3
    assert ">GRU<" in text  # the fused node in the 'after' picture
    assert "pass rnn-recognize-cells" in text


def _compile(tmp_path, model, *extra):
    out = tmp_path / "m.so"
    subprocess.run([lstm_opt.find_tool(), str(model), "--target=cpu", "-o", str(out), *extra],
                   check=True, capture_output=True)
    return out


def test_runtime_runs_a_compiled_model_like_onnxruntime(tmp_path):
    import numpy as np
    import onnxruntime as ort
    from lstm_opt.runtime import Model, TensorInfo

    src = MODELS / "torch_nn_lstm.onnx"
    with Model(_compile(tmp_path, src)) as m:
        assert m.inputs[0] == TensorInfo("x", "float32", (5, 3, 5))
        assert [t.name for t in m.outputs] == ["y", "h_n", "c_n"]
        rng = np.random.default_rng(0)
        feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in m.inputs}
        got = m.run(feeds)
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, ref in zip(["y", "h_n", "c_n"], want):
        assert np.allclose(got[name], ref, rtol=1e-4, atol=1e-5), name


def test_runtime_errors_name_the_problem(tmp_path):
    import numpy as np
    from lstm_opt.runtime import Model, RuntimeError_

    m = Model(_compile(tmp_path, MODELS / "torch_nn_lstm.onnx"))
    good = {t.name: np.zeros(t.shape, np.float32) for t in m.inputs}
    with pytest.raises(RuntimeError_, match="input 'x' has shape \\[4, 3, 5\\], the model was compiled for \\[5, 3, 5\\]"):
        m.run({**good, "x": np.zeros((4, 3, 5), np.float32)})
    with pytest.raises(RuntimeError_, match="input 'x' has dtype float64, the model takes float32"):
        m.run({**good, "x": np.zeros((5, 3, 5))})
    with pytest.raises(RuntimeError_, match="no input named 'z'"):
        m.run({**good, "z": np.zeros(1)})
    with pytest.raises(RuntimeError_, match="input 'h0' is missing"):
        m.run({"x": good["x"], "c0": good["c0"]})
    m.close()
    with pytest.raises(RuntimeError_, match="closed"):
        m.run(good)
    with pytest.raises(RuntimeError_, match="not a model compiled by lstm-opt|cannot load"):
        Model(ROOT / "README.md")


THREADS_CHECK = r"""
import os, sys
import numpy as np
from lstm_opt.runtime import Model, RuntimeError_

def workers():  # this process's threads; libomp adds its team's workers
    return len(os.listdir("/proc/self/task"))

m = Model(sys.argv[1], threads=1)
feeds = {t.name: np.random.default_rng(0).standard_normal(t.shape).astype(np.float32)
         for t in m.inputs}
base = workers()
one = m.run(feeds)
assert m.threads == 1 and workers() == base, (m.threads, workers(), base)
m.threads = 3
three = m.run(feeds)
assert m.threads == 3 and workers() == base + 2, (m.threads, workers(), base)
assert all(np.array_equal(one[k], three[k]) for k in one)
# A team is never larger than its loop: hidden 128 is 8 blocks of 16 lanes
# (AVX-512; 16 blocks of 8 on AVX2), so 32 threads make a team of 8 (16).
m.threads = 32
many = m.run(feeds)
team = int(sys.argv[2])
assert m.threads == 32 and workers() == base + team - 1, (workers(), base, team)
assert all(np.array_equal(one[k], many[k]) for k in one)
try:
    m.threads = 0
except RuntimeError_ as e:
    assert "positive integer" in str(e), e
else:
    raise AssertionError("threads = 0 accepted")
print("ok")
"""


def test_runtime_thread_count_is_settable(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import make_unrolled_lstm

    # Hidden 128, batch 2: one step's recurrent GEMM is large enough for the
    # compiler to split it across threads (compiled here with 2).
    src = tmp_path / "wide.onnx"
    onnx.save(make_unrolled_lstm.build(4, 128, 16, 2), src)
    lib = _compile(tmp_path, src, "--threads=2")
    # A fresh process: the thread count it shows is this model's alone.
    # The team size the kernels' vector width gives (from the compile remark).
    remark = subprocess.run([lstm_opt.find_tool(), str(src), "--target=cpu", "-o",
                             str(tmp_path / "probe.mlir")], capture_output=True, text=True).stderr
    lanes = int(remark.split("CPU kernel: ")[1].split("-lane")[0])
    out = subprocess.run([sys.executable, "-c", THREADS_CHECK, str(lib), str(128 // lanes)],
                         capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": "8"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    # A model without parallel loops takes the setting and stays at 1.
    from lstm_opt.runtime import Model
    with Model(_compile(tmp_path, MODELS / "torch_nn_lstm.onnx"), threads=4) as m:
        assert m.threads == 1


def test_compile_at_each_precision_runs_close_to_onnxruntime(tmp_path):
    import numpy as np
    import onnxruntime as ort
    from lstm_opt.runtime import Model

    src = MODELS / "torch_nn_lstm.onnx"
    rng = np.random.default_rng(1)
    feeds = None
    want = None
    for precision, tol in (("f32", 1e-5), ("bf16", 5e-2), ("int8", 1e-1)):
        out = tmp_path / f"m_{precision}.so"
        rep = lstm_opt.compile(src, out, precision=precision, threads=1)
        assert out.exists() and (tmp_path / f"m_{precision}.h").exists()
        kernels = [r["message"] for r in rep["remarks"] if "CPU kernel" in r["message"]]
        assert kernels and all(f"precision {precision}" in k for k in kernels), kernels
        with Model(out) as m:
            if feeds is None:
                feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in m.inputs}
                want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
            got = m.run(feeds)
        err = max(float(np.max(np.abs(got[n] - w))) for n, w in zip(["y", "h_n", "c_n"], want))
        assert err <= tol, (precision, err)
        if precision != "f32":
            assert err > 0, precision  # the precision was applied
    with pytest.raises(lstm_opt.LstmOptError, match="int4"):
        lstm_opt.compile(src, tmp_path / "bad.so", precision="int4")
    assert not (tmp_path / "bad.so").exists()
    with Model.compile(src, tmp_path / "again.so", precision="int8") as m:
        assert m.inputs[0].shape == (5, 3, 5)


def test_compile_options_reach_the_kernels(tmp_path):
    import numpy as np
    from lstm_opt.runtime import Model

    # Chunks of 2 steps compute the same sums as one GEMM: the same bits;
    # the remark says the chunks. Tiles of one row: the register tile the
    # remark names, the numbers within rounding.
    src = MODELS / "torch_nn_lstm.onnx"
    rep = lstm_opt.compile(src, tmp_path / "c.so", threads=1, gemm_chunk_steps=2)
    assert any("input GEMM in chunks of 2 steps" in r["message"] for r in rep["remarks"])
    lstm_opt.compile(src, tmp_path / "one.so", threads=1, gemm_chunk_steps=100)
    rep = lstm_opt.compile(src, tmp_path / "t.so", threads=1, batch_tile=1)
    assert any("up to 1 rows" in r["message"] for r in rep["remarks"]), rep["remarks"]
    rng = np.random.default_rng(2)
    with Model(tmp_path / "c.so") as a, Model(tmp_path / "one.so") as b, \
            Model(tmp_path / "t.so") as t:
        feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in a.inputs}
        got, want, tiled = a.run(feeds), b.run(feeds), t.run(feeds)
    assert all(np.array_equal(got[k], want[k]) for k in want)
    assert all(np.allclose(tiled[k], want[k], rtol=0, atol=1e-5) for k in want)
    with pytest.raises(lstm_opt.LstmOptError, match="gemm-chunk-steps takes 0 or more, not -1"):
        lstm_opt.compile(src, tmp_path / "bad.so", gemm_chunk_steps=-1)
    with pytest.raises(lstm_opt.LstmOptError, match="batch_tile must be an integer"):
        lstm_opt.compile(src, tmp_path / "bad.so", batch_tile="2")
    assert not (tmp_path / "bad.so").exists()


def test_a_library_rebuilt_at_the_same_path_runs_its_new_code(tmp_path):
    # The dynamic loader returns the library already loaded under a path: a
    # rebuild at that path, loaded in the same process, must not run the
    # first build's code (it did: int8 numbers from an f32 build).
    import numpy as np
    from lstm_opt.runtime import Model

    src = MODELS / "torch_nn_lstm.onnx"
    out = tmp_path / "same.so"
    rng = np.random.default_rng(2)
    results = {}
    kept = Model.compile(src, out, precision="f32", threads=1)
    feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in kept.inputs}
    results["f32"] = kept.run(feeds)["y"]
    for precision in ("int8", "f32"):
        with Model.compile(src, out, precision=precision, threads=1) as m:
            results[precision + "_again"] = m.run(feeds)["y"]
    assert not np.array_equal(results["f32"], results["int8_again"])
    assert np.array_equal(results["f32"], results["f32_again"])
    # The first build, still loaded, keeps running its own code; no alias
    # file is left in the folder.
    assert np.array_equal(kept.run(feeds)["y"], results["f32"])
    kept.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_compile_with_state_streams(tmp_path):
    import numpy as np
    from lstm_opt.runtime import Model

    src = MODELS / "torch_nn_lstm.onnx"
    rep = lstm_opt.compile(src, tmp_path / "s.so", state="auto", threads=1)
    assert any("state pairs (--state=auto): h0=h_n, c0=c_n" in r["message"]
               for r in rep["remarks"]), rep["remarks"]
    with Model.compile(src, tmp_path / "s2.so", state="h0=h_n,c0=c_n") as m:
        assert m.state_pairs == [("h0", "h_n"), ("c0", "c_n")]
        with m.stream() as s:
            x = np.random.default_rng(0).standard_normal((5, 3, 5)).astype(np.float32)
            a = s.run({"x": x})["y"]
            b = s.run({"x": x})["y"]
            assert not np.array_equal(a, b)  # the state moved on
            s.reset()
            assert np.array_equal(s.run({"x": x})["y"], a)
            # The state is set as inputs are given: its own dtype, never
            # converted silently.
            from lstm_opt.runtime import RuntimeError_
            with pytest.raises(RuntimeError_, match="state 'h0' has dtype float64, the stream holds float32"):
                s.state = {"h0": np.zeros(s.state["h0"].shape)}
    with pytest.raises(lstm_opt.LstmOptError, match="no input 'h9'"):
        lstm_opt.compile(src, tmp_path / "bad.so", state="h9=h_n")
