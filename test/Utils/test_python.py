"""Which Python the lstm-opt test suite runs, and whether the end-to-end
suite can run with it (imported by test/lit.cfg.py; test/Tools/
test-python.test runs it as a script).

The choice is made each time lit starts, never cached by CMake: a build
folder configured before the project's .venv existed (scripts/quickstart.sh
first, scripts/test.sh after) must test with .venv once it is there.
"""
import os
import subprocess

# The modules the end-to-end tests import.
E2E_MODULES = ("numpy", "onnx", "onnxruntime")
# Set to 1 to let a run go on with the end-to-end tests UNSUPPORTED.
ALLOW_ENV = "LSTM_OPT_ALLOW_NO_E2E"


def choose(src_root, configured="", fallback="", environ=os.environ):
    """(python, why): $LSTM_OPT_PYTHON, then -DLSTM_OPT_TEST_PYTHON, then
    <src_root>/.venv/bin/python when it exists, then `fallback`."""
    if environ.get("LSTM_OPT_PYTHON"):
        return environ["LSTM_OPT_PYTHON"], "$LSTM_OPT_PYTHON"
    if configured:
        return configured, "-DLSTM_OPT_TEST_PYTHON"
    venv = os.path.join(src_root, ".venv", "bin", "python")
    if os.access(venv, os.X_OK):
        return venv, "the project's .venv"
    return fallback or "python3", "python3 on PATH when configured"


def missing_modules(python):
    """The E2E_MODULES that `python` cannot import (all of them if it does
    not run)."""
    code = ("import importlib.util, sys\n"
            "print(' '.join(m for m in sys.argv[1:] "
            "if importlib.util.find_spec(m) is None))")
    try:
        out = subprocess.run([python, "-c", code, *E2E_MODULES],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return list(E2E_MODULES)
    if out.returncode != 0:
        return list(E2E_MODULES)
    return out.stdout.split()


def e2e_problem(python, why, environ=os.environ):
    """None when the end-to-end suite can run with `python`; otherwise
    (fatal, message): fatal unless $LSTM_OPT_ALLOW_NO_E2E is 1."""
    missing = missing_modules(python)
    if not missing:
        return None
    msg = ("%s (%s) cannot import %s: the end-to-end tests cannot run. Run "
           "scripts/setup.sh (it makes .venv), or set %s=1 to run the rest "
           "with them UNSUPPORTED" % (python, why, ", ".join(missing), ALLOW_ENV))
    return environ.get(ALLOW_ENV) != "1", msg


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--src-root", required=True)
    ap.add_argument("--configured", default="")
    ap.add_argument("--fallback", default="")
    a = ap.parse_args()
    python, why = choose(a.src_root, a.configured, a.fallback)
    print("python: %s (%s)" % (python, why))
    problem = e2e_problem(python, why)
    if problem is None:
        print("e2e: available")
    else:
        print("e2e: %s: %s" % ("fatal" if problem[0] else "unsupported", problem[1]))
