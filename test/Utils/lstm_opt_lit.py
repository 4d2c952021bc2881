"""lit test formats of the lstm-opt suite (imported by lit.local.cfg files)."""
import os
import subprocess

import lit.formats
import lit.Test
import lit.TestRunner


def model_tests(testSuite, path_in_suite, localConfig, kind):
    """One test per model in e2e/models, named e2e/<kind>/<model>."""
    if path_in_suite != ("e2e",):
        return
    models = os.path.join(testSuite.getSourcePath(path_in_suite), "models")
    for name in sorted(os.listdir(models)):
        if name.endswith(".onnx"):
            yield lit.Test.Test(testSuite, path_in_suite + (kind, name), localConfig)


def run_script(test, script, args, tool="lstm-opt"):
    """Runs test/e2e/<script> with the tool and a scratch folder; lit result."""
    if "onnxruntime" not in test.config.available_features:
        return None
    _, tmp = lit.TestRunner.getTempPaths(test)
    os.makedirs(os.path.dirname(tmp), exist_ok=True)
    cmd = [test.config.python_executable,
           os.path.join(test.config.lstm_opt_src_root, "test", "e2e", script),
           "--" + tool, os.path.join(test.config.lstm_opt_tools_dir, tool),
           "--workdir", tmp + ".d"] + args
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode == 0, proc.stdout + proc.stderr


class ModelRoundTrip(lit.formats.TestFormat):
    def __init__(self, extra_models):
        self.extra_models = extra_models

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, "models")
        if path_in_suite != ("e2e",):
            return
        for name in self.extra_models:
            yield lit.Test.Test(testSuite, path_in_suite + (os.path.basename(name),),
                                localConfig)

    def execute(self, test, litConfig):
        model = test.getSourcePath()
        if not os.path.exists(model):
            model = os.path.join(test.config.lstm_opt_src_root, "examples",
                                 os.path.basename(model))
        result = run_script(test, "roundtrip.py", [model])
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class ModelFusion(lit.formats.TestFormat):
    """One test per exported model: the default pipeline must fuse it as the
    manifest says (fusion.py). Models in `xfail` are known gaps: they are
    expected to fail, and passing one (XPASS) fails the suite so the list is
    kept honest."""

    def __init__(self, xfail):
        self.xfail = set(xfail)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, "fusion")

    def execute(self, test, litConfig):
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        result = run_script(test, "fusion.py",
                            ["--manifest", os.path.join(models, "manifest.json"),
                             os.path.join(models, name)])
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        if name in self.xfail:
            return (lit.Test.XPASS if ok else lit.Test.XFAIL), out
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class ModelCPU(lit.formats.TestFormat):
    """One test per exported model: lstm-run compiles the original model for
    this CPU and matches ONNX Runtime within 1e-4 (cpu_run.py), with 1 and 2
    threads and, for symbolic sizes, batches 2 and 5."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, "cpu")

    def execute(self, test, litConfig):
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        result = run_script(test, "cpu_run.py", [os.path.join(models, name)],
                            tool="lstm-run")
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class ModelCUDA(lit.formats.TestFormat):
    """One test per exported model: lstm-run --device=cuda (the layers cuDNN
    runs on the GPU, the rest on the CPU) matches ONNX Runtime. Without a CUDA
    device (or without the cuDNN runtime in the build) each is UNSUPPORTED,
    i.e. reported as skipped, never as passed."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, "cuda")

    def execute(self, test, litConfig):
        if "cuda-device" not in test.config.available_features:
            return lit.Test.UNSUPPORTED, "needs a CUDA device (and the cuDNN runtime)"
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        result = run_script(test, "cpu_run.py",
                            ["--device", "cuda", "--threads", "1",
                             os.path.join(models, name)], tool="lstm-run")
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class ModelGPU(lit.formats.TestFormat):
    """One test per exported model: lstm-run --device=gpu (the recurrent
    layers as lstm-opt's generated GPU kernels through libLstmOptGPURuntime,
    the rest on the CPU) matches ONNX Runtime. Without a CUDA device (or
    without the GPU runtime in the build) each is UNSUPPORTED, i.e. reported
    as skipped, never as passed."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, "gpu")

    def execute(self, test, litConfig):
        features = test.config.available_features
        if "cuda-device" not in features or "gpu-runtime" not in features:
            return lit.Test.UNSUPPORTED, "needs a CUDA device (and the GPU runtime)"
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        result = run_script(test, "cpu_run.py",
                            ["--device", "gpu", "--threads", "1",
                             os.path.join(models, name)], tool="lstm-run")
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class Both(lit.formats.TestFormat):
    """Runs several formats' tests from one directory (each test remembers
    the format that found it)."""

    def __init__(self, *formats):
        self.formats = formats

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for f in self.formats:
            for t in f.getTestsInDirectory(testSuite, path_in_suite, litConfig,
                                           localConfig):
                t.lstm_opt_format = self.formats.index(f)
                yield t

    def execute(self, test, litConfig):
        return self.formats[test.lstm_opt_format].execute(test, litConfig)
