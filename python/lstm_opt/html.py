"""An HTML page of what lstm-opt did to a model: the counts before and
after, each fused layer drawn before (its original nodes) and after (the
nodes that replace it), and where the time went. Pictures are made with
Graphviz (`dot`, from Debian's graphviz package) and embedded as SVG."""
from __future__ import annotations

import html
import os
import shutil
import subprocess
from typing import Dict, Iterable, List, Optional

import onnx

from . import ModelLike, optimize

_STYLE = """
body { font-family: -apple-system, "DejaVu Sans", Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
.changed { background: #fff7d6; }
.pair { display: flex; gap: 2em; align-items: flex-start; }
.pair > div { border: 1px solid #ddd; padding: 0.5em; flex: 1 1 0; min-width: 0; }
.pair svg { width: 100%; height: auto; }
.note { color: #666; font-size: 0.9em; }
.bar { fill: #4a7bd0; } .label { font-size: 12px; }
.refused { color: #8a4b00; }
"""


def _dot_svg(dot_source: str) -> str:
    """SVG of a Graphviz graph, or a note when `dot` is missing."""
    dot = shutil.which("dot")
    if not dot:
        return "<p><i>Graphviz (dot) is not installed: no picture.</i></p>"
    proc = subprocess.run([dot, "-Tsvg"], input=dot_source, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return f"<pre>{html.escape(proc.stderr)}</pre>"
    svg = proc.stdout
    return svg[svg.find("<svg"):]


def _graph_dot(nodes: List[onnx.NodeProto], title: str, max_nodes: int = 400) -> str:
    """Graphviz source for `nodes`: one box per node (its op type), edges
    through the values they share; values coming from outside are small
    ellipses."""
    nodes = nodes[:max_nodes]
    lines = ["digraph G {", "  rankdir=TB; node [fontname=\"DejaVu Sans\" fontsize=10];",
             ]
    produced = {}
    for i, n in enumerate(nodes):
        color = {"LSTM": "#9fd39f", "GRU": "#9fd39f", "RNN": "#9fd39f",
                 "MatMul": "#f5c6a5", "Gemm": "#f5c6a5"}.get(n.op_type, "#dfe8f7")
        lines.append(f"  n{i} [shape=box style=filled fillcolor=\"{color}\" "
                     f"label=\"{html.escape(n.op_type)}\" tooltip=\"{html.escape(n.name)}\"];")
        for out in n.output:
            if out:
                produced[out] = i
    externals = {}
    for i, n in enumerate(nodes):
        for inp in n.input:
            if not inp:
                continue
            if inp in produced:
                lines.append(f"  n{produced[inp]} -> n{i};")
            else:
                if inp not in externals:
                    externals[inp] = f"e{len(externals)}"
                    short = inp if len(inp) <= 18 else inp[:8] + "…" + inp[-8:]
                    lines.append(f"  {externals[inp]} [shape=ellipse fontsize=8 "
                                 f"label=\"{html.escape(short)}\"];")
                lines.append(f"  {externals[inp]} -> n{i} [color=\"#999999\"];")
    lines.append("}")
    return "\n".join(lines)


def _counts_table(before: Dict[str, int], after: Dict[str, int]) -> str:
    rows = ["<table><tr><th>op</th><th>before</th><th>after</th></tr>"]
    for op in sorted(set(before) | set(after)):
        b, a = before.get(op, 0), after.get(op, 0)
        cls = ' class="changed"' if a != b else ""
        rows.append(f"<tr{cls}><td>{html.escape(op)}</td><td>{b}</td><td>{a}</td></tr>")
    rows.append(f"<tr><th>total</th><th>{sum(before.values())}</th>"
                f"<th>{sum(after.values())}</th></tr></table>")
    return "\n".join(rows)


def _timing_svg(phases: List[Dict]) -> str:
    top = [p for p in phases if not p["name"].startswith("pass ")]
    passes = [p for p in phases if p["name"].startswith("pass ")]
    items = top + passes
    if not items:
        return ""
    width, row = 560, 22
    scale = max(p["ms"] for p in items) or 1.0
    out = [f'<svg width="{width + 260}" height="{row * len(items) + 10}" '
           'xmlns="http://www.w3.org/2000/svg">']
    for i, p in enumerate(items):
        y = 5 + i * row
        w = max(1.0, width * p["ms"] / scale)
        out.append(f'<text class="label" x="0" y="{y + 14}">{html.escape(p["name"])}</text>')
        out.append(f'<rect class="bar" x="200" y="{y}" width="{w:.1f}" height="{row - 6}"/>')
        out.append(f'<text class="label" x="{205 + w:.1f}" y="{y + 14}">{p["ms"]:.2f} ms</text>')
    out.append("</svg>")
    return "\n".join(out)


def html_report(model: ModelLike, out_path: str, *,
                passes: Optional[Iterable[str]] = None) -> Dict:
    """Optimises `model`, writes the HTML page to `out_path`, returns the
    report dict."""
    original = model if isinstance(model, onnx.ModelProto) else onnx.load(os.fspath(model))
    fused, rep = optimize(original, passes=list(passes) if passes is not None else None,
                          return_report=True)
    title = os.path.basename(os.fspath(model)) if not isinstance(model, onnx.ModelProto) \
        else (original.graph.name or "model")
    parts = [f"<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
             f"<title>lstm-opt: {html.escape(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>lstm-opt report: {html.escape(title)}</h1>",
             f"<p><b>{rep['nodes_before']}</b> nodes before, <b>{rep['nodes_after']}</b> after; "
             f"{len(rep.get('layers', []))} fused layer(s), "
             f"{len(rep.get('refused', []))} refusal(s).</p>",
             "<h2>Operators</h2>", _counts_table(rep["ops_before"], rep["ops_after"])]
    by_name = {n.name: n for n in original.graph.node}
    for k, layer in enumerate(rep.get("layers", [])):
        src = [by_name[n] for n in layer.get("source_nodes", []) if n in by_name]
        # The source nodes come step by step: draw the first two steps.
        steps = max(1, layer["steps"])
        shown = src if steps <= 2 else src[:2 * (len(src) // steps)]
        note = ("" if len(shown) == len(src) else
                f"<p class=\"note\">the first 2 of {steps} steps "
                f"({len(shown)} of {len(src)} nodes)</p>")
        prefix = layer["node"] + "_fused"
        after = [n for n in fused.graph.node if n.name.startswith(prefix)]
        parts.append(
            f"<h2>Layer {k + 1}: {layer['cell']}, {layer['steps']} steps, "
            f"{layer['direction']}, hidden {layer['hidden']}</h2>"
            f"<p>{layer['nodes_before']} nodes &rarr; 1 {layer['cell']} + "
            f"{layer['glue_nodes']} glue; {layer['gemms_before']} GEMMs &rarr; "
            f"{layer['input_gemms']} input GEMM + {layer['recurrent_gemms']} recurrent "
            f"(first node: <code>{html.escape(layer['node'])}</code>).</p>"
            "<div class=\"pair\">"
            f"<div><b>before</b>{note}{_dot_svg(_graph_dot(shown, 'before'))}</div>"
            f"<div><b>after</b>{_dot_svg(_graph_dot(after, 'after'))}</div></div>")
    if rep.get("refused"):
        parts.append("<h2>Left alone</h2><ul>")
        for r in rep["refused"]:
            parts.append(f"<li class=\"refused\"><code>{html.escape(r['node'])}</code>: "
                         f"{html.escape(r['reason'])}</li>")
        parts.append("</ul>")
    parts.append("<h2>Time</h2>" + _timing_svg(rep.get("phases", [])))
    parts.append("</body></html>")
    with open(out_path, "w") as f:
        f.write("\n".join(parts))
    return rep
