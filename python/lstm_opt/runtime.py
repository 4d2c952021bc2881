"""Run a model that lstm-opt compiled (`lstm-opt m.onnx --target=cpu -o m.so`)
from Python, with numpy alone: no compiler, LLVM or MLIR in the process.

    from lstm_opt.runtime import Model
    m = Model("m.so")                    # Model("m.so", threads=4)
    print(m.inputs)                      # [TensorInfo(name='x', dtype='float32', shape=(5, 3, 5)), ...]
    outs = m.run({"x": x})               # {'y': array(...), ...}
    m.close()

A model compiled with state pairs (`lstm-opt ... --state=auto` or
`--state state=stateN`) also streams: the state stays in a stream object and
leaves the calls.

    s = Model("vad.so").stream()
    p = s.run({"input": chunk})["output"]          # state carried inside
    ps = s.run_chunks({"input": chunks})["output"] # N chunks, one call
    s.state                                        # {'state': array(...)}
    s.reset()                                      # back to zeros

The library's ABI (docs/RuntimeABI.md): `lstm_opt_model_signature`, a JSON
string naming every input and output with its dtype and shape, and
`lstm_opt_model_packed(void **descs)`, which takes one MLIR memref descriptor
per input, then per output. Inputs are checked against the signature (names,
dtypes, shapes) before the call, with errors as clear as lstm-run's.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import json
import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Mapping, Tuple

import numpy as np

__all__ = ["Model", "Stream", "TensorInfo", "RuntimeError_"]

_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
    "uint8": np.uint8,
    "bool": np.bool_,
}


class RuntimeError_(RuntimeError):
    """A compiled model could not be loaded, or was given the wrong inputs."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: Tuple[int, ...]


@functools.lru_cache(maxsize=None)
def _descriptor_type(rank: int):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"Memref{rank}d", (ctypes.Structure,), {"_fields_": fields})


def _descriptor(array: np.ndarray):
    rank = array.ndim
    d = _descriptor_type(rank)()
    ptr = array.ctypes.data
    d.allocated = ptr
    d.aligned = ptr
    d.offset = 0
    if rank:
        stride = 1
        strides = []
        for n in reversed(array.shape):
            strides.append(stride)
            stride *= n
        for i, (n, s) in enumerate(zip(array.shape, reversed(strides))):
            d.sizes[i] = n
            d.strides[i] = s
    return d


# The file each loaded path held when this process loaded it: (device,
# inode). The dynamic loader hands back the library already loaded under a
# path, so a library rebuilt at the same path (lstm-opt renames a new file
# over it) would run the old code.
_loaded_files: Dict[str, tuple] = {}
_aliases = itertools.count()


def _load_library(path: str) -> ctypes.CDLL:
    """Loads the library at `path`; a file rebuilt since this process loaded
    that path is loaded under a hard link of its own in the same folder
    (its $ORIGIN, and so its bundled runtime libraries, unchanged), removed
    once loaded."""
    path = os.path.abspath(path)
    st = os.stat(path)
    ident = (st.st_dev, st.st_ino)
    known = _loaded_files.get(path)
    if known is None or known == ident:
        lib = ctypes.CDLL(path)
        _loaded_files[path] = ident
        return lib
    folder, base = os.path.split(path)
    alias = os.path.join(folder, f".{base}.{os.getpid()}.{next(_aliases)}.so")
    try:
        os.link(path, alias)
    except OSError as e:
        raise RuntimeError_(
            f"{path}: rebuilt since this process loaded it, and a fresh copy "
            f"cannot be loaded (no hard link in its folder: {e.strerror}); "
            "write the new build to another path, or restart the process") from None
    try:
        return ctypes.CDLL(alias)
    finally:
        os.unlink(alias)


class Model:
    """A compiled model (.so) loaded into this process."""

    @classmethod
    def compile(cls, model, out_path: str | os.PathLike, *, precision: str | None = None,
                threads: int | None = None, **kwargs) -> "Model":
        """Compiles an ONNX model (a path or a ModelProto) with
        `lstm_opt.compile` (lstm-opt --target=cpu; needs the lstm-opt tool)
        into `out_path` and loads it. `precision`: "f32", "bf16" or "int8"
        (None: the model's own), optionally followed by single layers',
        e.g. "int8,/rnn/LSTM_1=f32"."""
        from . import compile as _compile
        _compile(model, out_path, precision=precision, threads=threads, **kwargs)
        return cls(out_path, threads=threads)

    def __init__(self, path: str | os.PathLike, threads: int | None = None):
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise RuntimeError_(f"{path}: no such compiled model")
        try:
            self._lib = _load_library(path)
        except OSError as e:
            raise RuntimeError_(f"{path}: cannot load: {e}") from None
        try:
            sig = ctypes.c_char.in_dll(self._lib, "lstm_opt_model_signature")
            raw = ctypes.cast(ctypes.addressof(sig), ctypes.c_char_p).value
            self._run = self._lib.lstm_opt_model_packed
        except (ValueError, AttributeError):
            raise RuntimeError_(f"{path}: not a model compiled by lstm-opt "
                                "(no lstm_opt_model_signature)") from None
        # Refuse code this CPU cannot run (instead of SIGILL in the call).
        try:
            check = self._lib.lstm_opt_model_cpu_check
        except AttributeError:
            check = None
        if check is not None:
            check.restype = ctypes.c_char_p
            missing = check()
            if missing:
                raise RuntimeError_(f"{path}: {missing.decode()}")
        try:
            doc = json.loads(raw.decode())
            self.inputs: List[TensorInfo] = [
                TensorInfo(t["name"], t["dtype"], tuple(t["shape"])) for t in doc["inputs"]]
            # Inputs compiled in (lstm-opt --bind): only these values work.
            self.bound: Dict[str, np.ndarray] = {
                t["name"]: np.array(t["bound"], dtype=np.int64).reshape(t["shape"])
                for t in doc["inputs"] if "bound" in t}
            self.outputs: List[TensorInfo] = [
                TensorInfo(t["name"], t["dtype"], tuple(t["shape"])) for t in doc["outputs"]]
            # (input name, output name) of each state pair (lstm-opt --state).
            self.state_pairs: List[Tuple[str, str]] = [
                (p["input"], p["output"]) for p in doc.get("state", [])]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError_(f"{path}: unreadable signature: {e}") from None
        for t in self.inputs + self.outputs:
            if t.dtype not in _DTYPES:
                raise RuntimeError_(f"{path}: tensor '{t.name}' has unsupported dtype {t.dtype}")
        self._run.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self._run.restype = None
        self.path = path
        self._lock = threading.Lock()
        try:
            self._set_threads = self._lib.lstm_opt_model_set_threads
            self._get_threads = self._lib.lstm_opt_model_threads
        except AttributeError:  # compiled before the thread setting existed
            self._set_threads = self._get_threads = None
        else:
            self._set_threads.argtypes = [ctypes.c_int32]
            self._set_threads.restype = ctypes.c_int32
            self._get_threads.argtypes = []
            self._get_threads.restype = ctypes.c_int32
        if threads is not None:
            self.threads = threads

    @property
    def threads(self) -> int:
        """Threads the model's parallel loops run on: the `--threads` it was
        compiled with until set. A model without parallel loops (compiled
        with --threads 1, or whose layers are all small) takes any setting
        and stays at 1, which this then reads."""
        if self._lib is None:
            raise RuntimeError_(f"{self.path}: the model was closed")
        return int(self._get_threads()) if self._get_threads else 1

    @threads.setter
    def threads(self, n: int) -> None:
        if self._lib is None:
            raise RuntimeError_(f"{self.path}: the model was closed")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise RuntimeError_(f"{self.path}: threads must be a positive integer, not {n!r}")
        if self._set_threads is None:
            if n != 1:
                raise RuntimeError_(f"{self.path}: this library has no thread setting "
                                    "(compiled by an older lstm-opt); recompile it")
            return
        self._set_threads(min(n, 2**31 - 1))

    def run(self, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """Runs the model once; returns its outputs by name."""
        if self._lib is None:
            raise RuntimeError_(f"{self.path}: the model was closed")
        known = {t.name for t in self.inputs}
        unknown = sorted(set(inputs) - known)
        if unknown:
            raise RuntimeError_(f"{self.path}: the model has no input named "
                                f"'{unknown[0]}' (inputs: {', '.join(sorted(known))})")
        arrays = []
        for t in self.inputs:
            if t.name not in inputs:
                raise RuntimeError_(f"{self.path}: input '{t.name}' is missing")
            a = np.asarray(inputs[t.name])
            if a.dtype != np.dtype(_DTYPES[t.dtype]):
                raise RuntimeError_(f"{self.path}: input '{t.name}' has dtype {a.dtype}, "
                                    f"the model takes {t.dtype}")
            if tuple(a.shape) != t.shape:
                raise RuntimeError_(f"{self.path}: input '{t.name}' has shape "
                                    f"{list(a.shape)}, the model was compiled for "
                                    f"{list(t.shape)}")
            if t.name in self.bound and not np.array_equal(a, self.bound[t.name]):
                raise RuntimeError_(f"{self.path}: input '{t.name}' is {a.tolist()}, the model "
                                    f"was compiled for {self.bound[t.name].tolist()} "
                                    f"(lstm-opt --bind)")
            arrays.append(np.ascontiguousarray(a))
        outs = [np.empty(t.shape, dtype=_DTYPES[t.dtype]) for t in self.outputs]
        descs = [_descriptor(a) for a in arrays + outs]
        ptrs = (ctypes.c_void_p * len(descs))(*[ctypes.addressof(d) for d in descs])
        with self._lock:  # reentrant per the ABI, but outputs are ours
            self._run(ptrs)
        return {t.name: o for t, o in zip(self.outputs, outs)}

    def stream(self) -> "Stream":
        """A new stream of this model (compiled with state pairs): its own
        state, starting at zeros. Streams run concurrently from threads."""
        if self._lib is None:
            raise RuntimeError_(f"{self.path}: the model was closed")
        if not self.state_pairs:
            raise RuntimeError_(f"{self.path}: the model has no state; compile it with "
                                "lstm-opt --state=auto (or --state IN=OUT)")
        return Stream(self)

    def close(self) -> None:
        """Drops this process's reference to the library."""
        self._lib = None
        self._run = None
        self._set_threads = self._get_threads = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Stream:
    """One stream of a stateful compiled model (Model.stream()): the state
    inputs and outputs (lstm-opt --state) and the bound inputs (--bind) are
    the stream's, not arguments of `run`. The C calls run without the GIL."""

    def __init__(self, model: Model):
        lib = model._lib
        self.model = model
        self._lib = lib
        for name, res, args in (
                ("lstm_opt_stream_create", ctypes.c_void_p, []),
                ("lstm_opt_stream_destroy", None, [ctypes.c_void_p]),
                ("lstm_opt_stream_reset", None, [ctypes.c_void_p]),
                ("lstm_opt_stream_get_state", ctypes.c_int32,
                 [ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]),
                ("lstm_opt_stream_set_state", ctypes.c_int32,
                 [ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]),
                ("lstm_opt_stream_run", None,
                 [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
                ("lstm_opt_stream_run_chunks", None,
                 [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p])):
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise RuntimeError_(f"{model.path}: no {name} (compiled by an older "
                                    "lstm-opt); recompile it") from None
            fn.restype = res
            fn.argtypes = args
            setattr(self, "_" + name[len("lstm_opt_stream_"):], fn)
        state_in = {a for a, _ in model.state_pairs}
        state_out = {b for _, b in model.state_pairs}
        by_name = {t.name: t for t in model.inputs}
        self.states: List[TensorInfo] = [by_name[a] for a, _ in model.state_pairs]
        self.inputs: List[TensorInfo] = [t for t in model.inputs
                                         if t.name not in state_in and t.name not in model.bound]
        self.outputs: List[TensorInfo] = [t for t in model.outputs if t.name not in state_out]
        self._in = (ctypes.c_void_p * max(1, len(self.inputs)))()
        self._out = (ctypes.c_void_p * max(1, len(self.outputs)))()
        self._handle = self._create()
        if not self._handle:
            raise RuntimeError_(f"{model.path}: cannot create a stream (out of memory)")

    def _check(self, inputs: Mapping[str, np.ndarray], lead: Tuple[int, ...]):
        path = self.model.path
        known = {t.name for t in self.inputs}
        for name in inputs:
            if name not in known:
                why = " (the stream's state)" if any(name == a for a, _ in self.model.state_pairs) \
                    else " (bound: lstm-opt --bind)" if name in self.model.bound else ""
                raise RuntimeError_(f"{path}: the stream takes no input named '{name}'{why}")
        arrays = []
        for t in self.inputs:
            if t.name not in inputs:
                raise RuntimeError_(f"{path}: input '{t.name}' is missing")
            a = inputs[t.name]
            if not isinstance(a, np.ndarray):
                a = np.asarray(a)
            if a.dtype != _DTYPES[t.dtype]:
                raise RuntimeError_(f"{path}: input '{t.name}' has dtype {a.dtype}, "
                                    f"the model takes {t.dtype}")
            want = lead + t.shape
            if a.shape != want:
                raise RuntimeError_(f"{path}: input '{t.name}' has shape {list(a.shape)}, "
                                    f"the stream takes {list(want)}")
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            arrays.append(a)
        return arrays

    def run(self, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """One call: the inputs without the state; returns the outputs
        without the state. The state carries to the next call."""
        if not self._handle:
            raise RuntimeError_(f"{self.model.path}: the stream was closed")
        arrays = self._check(inputs, ())
        outs = [np.empty(t.shape, dtype=_DTYPES[t.dtype]) for t in self.outputs]
        for i, a in enumerate(arrays):
            self._in[i] = a.ctypes.data
        for i, o in enumerate(outs):
            self._out[i] = o.ctypes.data
        self._run(self._handle, self._in, self._out)
        return {t.name: o for t, o in zip(self.outputs, outs)}

    def run_chunks(self, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """N successive calls in one: each input with a leading axis of N
        chunks; returns each output stacked the same way, as N calls of
        `run` would."""
        if not self._handle:
            raise RuntimeError_(f"{self.model.path}: the stream was closed")
        if not self.inputs:
            raise RuntimeError_(f"{self.model.path}: the stream has no inputs to chunk")
        first = np.asarray(inputs.get(self.inputs[0].name, np.empty(0)))
        n = first.shape[0] if first.ndim > len(self.inputs[0].shape) else -1
        if n < 0:
            raise RuntimeError_(f"{self.model.path}: run_chunks takes inputs with a leading "
                                f"chunk axis: '{self.inputs[0].name}' of shape "
                                f"[N, {', '.join(map(str, self.inputs[0].shape))}]")
        arrays = self._check(inputs, (n,))
        outs = [np.empty((n,) + t.shape, dtype=_DTYPES[t.dtype]) for t in self.outputs]
        ins = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
        outp = (ctypes.c_void_p * max(1, len(outs)))(*[o.ctypes.data for o in outs])
        self._run_chunks(self._handle, n, ins, outp)
        return {t.name: o for t, o in zip(self.outputs, outs)}

    def reset(self) -> None:
        """The state back to zeros."""
        if not self._handle:
            raise RuntimeError_(f"{self.model.path}: the stream was closed")
        self._reset(self._handle)

    @property
    def state(self) -> Dict[str, np.ndarray]:
        """A copy of the state, by state input name."""
        if not self._handle:
            raise RuntimeError_(f"{self.model.path}: the stream was closed")
        out = {}
        for k, t in enumerate(self.states):
            a = np.empty(t.shape, dtype=_DTYPES[t.dtype])
            self._get_state(self._handle, k, a.ctypes.data)
            out[t.name] = a
        return out

    @state.setter
    def state(self, values: Mapping[str, np.ndarray]) -> None:
        if not self._handle:
            raise RuntimeError_(f"{self.model.path}: the stream was closed")
        names = {t.name: k for k, t in enumerate(self.states)}
        for name, v in values.items():
            if name not in names:
                raise RuntimeError_(f"{self.model.path}: the stream has no state named "
                                    f"'{name}' (states: {', '.join(names)})")
            t = self.states[names[name]]
            a = np.asarray(v)
            # As run() takes inputs: of the state's own dtype, never
            # converted silently.
            if a.dtype != _DTYPES[t.dtype]:
                raise RuntimeError_(f"{self.model.path}: state '{name}' has dtype {a.dtype}, "
                                    f"the stream holds {t.dtype}")
            a = np.ascontiguousarray(a)
            if a.shape != t.shape:
                raise RuntimeError_(f"{self.model.path}: state '{name}' has shape "
                                    f"{list(t.shape)}, not {list(a.shape)}")
            self._set_state(self._handle, names[name], a.ctypes.data)

    def close(self) -> None:
        if getattr(self, "_handle", None):
            self._destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
