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
    # The suite's environment (a sanitizer build sets ASAN_OPTIONS etc.).
    env = dict(os.environ)
    env.update(test.config.environment)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
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


class ModelLstmRun(lit.formats.TestFormat):
    """One test per exported model, e2e/<kind>/<model>: lstm-run compiles the
    ORIGINAL model for `device` and matches ONNX Runtime (cpu_run.py):
      cpu  - within 1e-4, with 1 and 2 threads and, for symbolic sizes,
             batches 2 and 5;
      cuda - the layers cuDNN runs through the cuDNN runtime (5e-3: TF32);
      gpu  - the layers as lstm-opt's generated GPU kernels (1e-4).
    Without the lit features in `needs` (a CUDA device, the runtime) a test
    is UNSUPPORTED, i.e. reported as skipped, never as passed. Models in
    `xfail` are known gaps (XPASS fails the suite)."""

    def __init__(self, kind, device, needs=(), xfail=()):
        self.kind, self.device, self.needs = kind, device, needs
        self.xfail = set(xfail)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        yield from model_tests(testSuite, path_in_suite, localConfig, self.kind)

    def execute(self, test, litConfig):
        missing = [f for f in self.needs if f not in test.config.available_features]
        if missing:
            return lit.Test.UNSUPPORTED, "needs " + ", ".join(missing)
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        args = ["--device", self.device]
        if self.device != "cpu":
            args += ["--threads", "1"]
        result = run_script(test, "cpu_run.py", args + [os.path.join(models, name)],
                            tool="lstm-run")
        if result is None:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        ok, out = result
        if name in self.xfail:
            return (lit.Test.XPASS if ok else lit.Test.XFAIL), out
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
