"""python -m lstm_opt IN.onnx OUT.onnx [--check] [--report] [--passes a,b]"""
import argparse
import json
import sys

import onnx

from . import LstmOptError, check, optimize


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lstm_opt",
                                 description="Fuse unrolled recurrent cells in an ONNX model.")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--check", action="store_true",
                    help="compare both models in ONNX Runtime on random inputs")
    ap.add_argument("--report", action="store_true", help="print the JSON report")
    ap.add_argument("--passes", help="comma-separated passes instead of the default pipeline")
    ap.add_argument("--html", metavar="PAGE.html",
                    help="also write an HTML report with before/after pictures")
    a = ap.parse_args(argv)
    try:
        fused, rep = optimize(a.input, passes=a.passes.split(",") if a.passes else None,
                              return_report=True)
    except LstmOptError as e:
        print(e, file=sys.stderr)
        return 1
    onnx.save(fused, a.output)
    print(f"{a.input}: {rep['nodes_before']} nodes -> {rep['nodes_after']}")
    for layer in rep.get("layers", []):
        print(f"  {layer['cell']} layer, {layer['steps']} steps, {layer['direction']}: "
              f"{layer['nodes_before']} nodes, {layer['gemms_before']} GEMMs fused")
    for r in rep.get("refused", []):
        print(f"  not fused: {r['node']}: {r['reason']}")
    if a.report:
        print(json.dumps(rep, indent=2))
    if a.html:
        from .html import html_report
        html_report(a.input, a.html,
                    passes=a.passes.split(",") if a.passes else None)
        print(f"wrote {a.html}")
    if a.check:
        result = check(a.input, fused)
        print(result)
        if not result.ok:
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
