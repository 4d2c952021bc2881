#!/usr/bin/env python3
"""Runs a command under an address-space limit and reports its peak RSS.

Usage: run_limited.py [--as-mb N] [--rss-file F] -- COMMAND...
The command's stdout and stderr pass through; its exit code is returned (a
signal N as 128+N). With --rss-file, the command's peak resident set size in
KiB (getrusage of the child) is written to F.
"""
import argparse
import resource
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--as-mb", type=int, default=0)
    ap.add_argument("--rss-file")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command

    def limit():
        if a.as_mb:
            n = a.as_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (n, n))

    rc = subprocess.call(cmd, preexec_fn=limit)
    if a.rss_file:
        with open(a.rss_file, "w") as f:
            f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main())
