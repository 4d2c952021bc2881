"""lit test formats of the lstm-opt suite (imported by lit.local.cfg files)."""
import os
import subprocess

import lit.formats
import lit.Test
import lit.TestRunner


class ModelRoundTrip(lit.formats.TestFormat):
    def __init__(self, extra_models):
        self.extra_models = extra_models

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if path_in_suite != ("e2e",):
            return
        models = os.path.join(testSuite.getSourcePath(path_in_suite), "models")
        for name in sorted(os.listdir(models)):
            if name.endswith(".onnx"):
                yield lit.Test.Test(testSuite, path_in_suite + ("models", name),
                                    localConfig)
        for name in self.extra_models:
            yield lit.Test.Test(testSuite, path_in_suite + (os.path.basename(name),),
                                localConfig)

    def execute(self, test, litConfig):
        if "onnxruntime" not in test.config.available_features:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        model = test.getSourcePath()
        if not os.path.exists(model):
            model = os.path.join(test.config.lstm_opt_src_root, "examples",
                                 os.path.basename(model))
        _, tmp = lit.TestRunner.getTempPaths(test)
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        cmd = [test.config.python_executable,
               os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "roundtrip.py"),
               "--lstm-opt", os.path.join(test.config.lstm_opt_tools_dir, "lstm-opt"),
               "--workdir", tmp + ".d", model]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        out = proc.stdout + proc.stderr
        return (lit.Test.PASS if proc.returncode == 0 else lit.Test.FAIL), out




class ModelFusion(lit.formats.TestFormat):
    """One test per exported model: the default pipeline must fuse it as the
    manifest says (fusion.py). Models in `xfail` are known gaps: they are
    expected to fail, and passing one (XPASS) fails the suite so the list is
    kept honest."""

    def __init__(self, xfail):
        self.xfail = set(xfail)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if path_in_suite != ("e2e",):
            return
        models = os.path.join(testSuite.getSourcePath(path_in_suite), "models")
        for name in sorted(os.listdir(models)):
            if name.endswith(".onnx"):
                yield lit.Test.Test(testSuite, path_in_suite + ("fusion", name),
                                    localConfig)

    def execute(self, test, litConfig):
        if "onnxruntime" not in test.config.available_features:
            return lit.Test.UNSUPPORTED, "needs onnx + onnxruntime"
        name = os.path.basename(test.getSourcePath())
        models = os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "models")
        _, tmp = lit.TestRunner.getTempPaths(test)
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        cmd = [test.config.python_executable,
               os.path.join(test.config.lstm_opt_src_root, "test", "e2e", "fusion.py"),
               "--lstm-opt", os.path.join(test.config.lstm_opt_tools_dir, "lstm-opt"),
               "--manifest", os.path.join(models, "manifest.json"),
               "--workdir", tmp + ".d", os.path.join(models, name)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        out = proc.stdout + proc.stderr
        ok = proc.returncode == 0
        if name in self.xfail:
            return (lit.Test.XPASS if ok else lit.Test.XFAIL), out
        return (lit.Test.PASS if ok else lit.Test.FAIL), out


class Both(lit.formats.TestFormat):
    """Runs several formats' tests from one directory."""

    def __init__(self, *formats):
        self.formats = formats

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for f in self.formats:
            for t in f.getTestsInDirectory(testSuite, path_in_suite, litConfig,
                                           localConfig):
                t.lstm_opt_format = self.formats.index(f)
                yield t

    def execute(self, test, litConfig):
        kind = test.path_in_suite[1] if len(test.path_in_suite) > 1 else ""
        fmt = self.formats[1] if kind == "fusion" else self.formats[0]
        return fmt.execute(test, litConfig)
