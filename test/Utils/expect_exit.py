#!/usr/bin/env python3
"""Runs a command and succeeds only if it exits with the given code.

Usage: expect_exit.py CODE COMMAND [ARGS...]
Unlike `not`, this pins the exact code (lstm-opt promises 1 for bad input)
and fails on a crash (a negative return code, i.e. a signal).
stdout and stderr are passed through so FileCheck can read them.
"""
import subprocess
import sys

want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != want:
    sys.stderr.write(f"expect_exit: '{' '.join(sys.argv[2:])}' exited with "
                     f"{proc.returncode}, expected {want}\n")
    sys.exit(1)
