"""The compiler that the wheel carries: lstm-opt and lstm-run built by
scikit-build-core into lstm_opt/_native/{bin,lib} (see pyproject.toml), and
the console scripts that run them."""
import os
import sys
from pathlib import Path
from typing import Optional

_ROOT = Path(__file__).resolve().parent / "_native"


def bundled(tool: str) -> Optional[str]:
    """The path of a tool inside the installed package, or None (a source
    checkout, or an install without the native part)."""
    path = _ROOT / "bin" / tool
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def _exec(tool: str) -> None:
    path = bundled(tool)
    if path is None:
        sys.stderr.write(f"{tool}: not part of this installation of lstm_opt "
                         "(install the package with pip to build it)\n")
        sys.exit(1)
    os.execv(path, [tool] + sys.argv[1:])


def lstm_opt_main() -> None:
    _exec("lstm-opt")


def lstm_run_main() -> None:
    _exec("lstm-run")
