#!/usr/bin/env python3
"""Reports the innermost loops of the generated kernels in an x86-64 or AArch64
assembly file written by `lstm-opt --target=cpu -o k.s` (LLVM's verbose
assembly).

For every function whose name starts with __lstm_opt_ (a layer's kernel), each
innermost loop (a block LLVM marks "This Inner Loop Header") that contains
FMAs is checked for register spills and reloads ("NN-byte Spill",
"Reload" comments on a vector register: x86 xmm/ymm/zmm, AArch64 q/v): the
GEMM loops' register tile must fit the target's registers.
Prints one summary line, e.g.

  kernels 1, FMA loops 4, with vector spills 0, registers ymm

and exits 1 if any FMA loop spills a vector register.
"""
import re
import sys


def main(path):
    lines = open(path).read().splitlines()
    fn = None
    kernels = set()
    loops = []  # (function, [lines of the loop body])
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if m and not m.group(1).startswith(".L"):
            fn = m.group(1)
        header = re.match(r"^(\.LBB\w+):.*", line)
        if fn and fn.startswith("__lstm_opt_") and header and i + 2 < len(lines) and \
                any("This Inner Loop Header" in lines[j] for j in range(i, min(i + 3, len(lines)))):
            kernels.add(fn)
            label = header.group(1)
            body = []
            j = i + 1
            # The loop's back branch: x86 jCC, AArch64 b.CC / cbz / cbnz / tbz / tbnz.
            back = re.compile(r"\b(j\w+|b\.\w+|b|cbn?z|tbn?z)\s+(\S+,\s*)*" + re.escape(label) + r"\b")
            while j < len(lines) and not back.search(lines[j]):
                body.append(lines[j])
                j += 1
            loops.append((fn, body))
            i = j
        i += 1
    # FMA loops; without FMA (SSE) the multiply-adds are mulps + addps.
    fma = [(f, b) for f, b in loops
           if any(re.search(r"\b(vfmadd\w*|vdpbf16ps|mulps|fmla)\b", l) for l in b)]
    vector = r"(%[xyz]mm\d+|\b[qv]\d+\b)"
    spilling = [(f, b) for f, b in fma
                if any(re.search(r"(Spill|Reload)", l) and re.search(vector, l) for l in b)]
    regs = sorted({r for _, b in fma for l in b
                   for r in re.findall(r"%([xyz]mm)\d+", l) +
                   ["v" for _ in re.findall(r"\bv\d+\.4s\b", l)]})
    print("kernels %d, FMA loops %d, with vector spills %d, registers %s"
          % (len(kernels), len(fma), len(spilling), ",".join(regs) or "none"))
    for f, b in spilling:
        print("spilling loop in %s:" % f)
        print("\n".join("  " + l for l in b if "Spill" in l or "Reload" in l))
    return 1 if spilling else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
