#!/usr/bin/env python3
"""Loads generated PTX on the CUDA device through libLstmOptGPURuntime.

Usage: load_ptx.py RUNTIME.so KERNELS.ptx

mgpuModuleLoadJIT (the driver JIT-compiles the PTX for this device), then
mgpuModuleGetFunction for every `.entry` of the file; prints
'loaded N kernels' and exits 0, or the runtime's error and exits 1.
"""
import ctypes
import re
import sys


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.lstm_opt_gpu_device_available.restype = ctypes.c_int
    lib.lstm_opt_gpu_last_error.restype = ctypes.c_char_p
    if not lib.lstm_opt_gpu_device_available():
        print("no device:", lib.lstm_opt_gpu_last_error().decode())
        return 1
    ptx = open(sys.argv[2], "rb").read() + b"\0"
    lib.mgpuModuleLoadJIT.restype = ctypes.c_void_p
    lib.mgpuModuleLoadJIT.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t]
    module = lib.mgpuModuleLoadJIT(ptx, 3, len(ptx))
    if not module:
        print("FAIL load:", lib.lstm_opt_gpu_last_error().decode())
        return 1
    lib.mgpuModuleGetFunction.restype = ctypes.c_void_p
    lib.mgpuModuleGetFunction.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    names = re.findall(rb"\.entry\s+(\w+)\(", ptx)
    for n in names:
        if not lib.mgpuModuleGetFunction(module, n):
            print("FAIL kernel", n.decode(), lib.lstm_opt_gpu_last_error().decode())
            return 1
    print(f"loaded {len(names)} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
