#!/usr/bin/env python3
"""Reports the innermost loops of the generated kernels in an x86-64 or AArch64
assembly file written by `lstm-opt --target=cpu -o k.s` (LLVM's verbose
assembly).

For every function whose name starts with __lstm_opt_ (a layer's kernel), each
innermost loop (a block LLVM marks "This Inner Loop Header") that contains
FMAs (or dot-product instructions) is checked for register spills and reloads ("NN-byte Spill",
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
    # Basic blocks (".LBB2_7:" or "# %bb.8:") and the innermost loop each
    # belongs to, from LLVM's verbose comments: a loop's header says
    # "=>This Inner Loop Header" (or "=>This Loop Header"), its other blocks
    # "in Loop: Header=BB2_7". A loop's body is every block whose innermost
    # loop it is, wherever the layout put them (rotated loops have their
    # latch before the header).
    fn = None
    kernels = set()
    blocks = []  # [function, innermost loop or None, is inner header, lines]
    for line in lines:
        m = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if m and not m.group(1).startswith(".L"):
            fn = m.group(1)
            blocks.append([fn, None, False, []])
            continue
        b = re.match(r"^(\.L(BB\w+)|(#|//) %bb\.\d+):", line)
        if b:
            blocks.append([fn, None, False, []])
        if not blocks:
            continue
        blk = blocks[-1]
        header = re.search(r"=>\s*This (Inner )?Loop Header", line)
        if header and blk[1] is None:
            label = next((re.match(r"^\.L(BB\w+):", l) for l in [line] + blk[3]
                          if re.match(r"^\.L(BB\w+):", l)), None)
            if label:
                blk[1] = (fn, label.group(1))
                blk[2] = bool(header.group(1))
        member = re.search(r"in Loop: Header=(BB\w+)", line)
        if member and blk[1] is None:
            blk[1] = (fn, member.group(1))
        blk[3].append(line)
    inner = {b[1] for b in blocks if b[2]}
    loops = []  # (function, [lines of the loop body])
    for key in sorted(inner):
        if not key[0] or not key[0].startswith("__lstm_opt_"):
            continue
        kernels.add(key[0])
        loops.append((key[0], [l for b in blocks if b[1] == key for l in b[3]]))
    # FMA loops; without FMA (SSE) the multiply-adds are mulps + addps.
    fma = [(f, b) for f, b in loops
           if any(re.search(r"\b(vfmadd\w*|vdpbf16ps|vpdpbusd|v?pmaddwd|mulps|fmla|sdot|bfdot|smull|sadalp)\b", l) for l in b)]
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
