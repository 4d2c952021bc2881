"""Shared helpers for the fixture generators (stdlib only, works with any Python 3).

Each generator owns the manifest entries whose "generator" field equals its script
name; update_manifest() replaces exactly those entries and keeps all others, so the
generators can be run in any order.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")

# Fields filled in later by check_fixtures.py --update-manifest; preserved across
# regeneration so that running one generator does not wipe them for the others.
_DERIVED = ("node_count", "op_counts", "size_bytes")


def layer(kind, steps, hidden, input, direction="forward", **extra):
    d = {"kind": kind, "steps": steps, "direction": direction, "hidden": hidden, "input": input}
    d.update(extra)
    return d


def update_manifest(generator, entries):
    old = []
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            old = json.load(f)
    prev = {e["file"]: e for e in old}
    for e in entries:
        p = prev.get(e["file"])
        if p is not None:
            for k in _DERIVED:
                if k in p and k not in e:
                    e[k] = p[k]
    kept = [e for e in old if e.get("generator") != generator]
    merged = sorted(kept + list(entries), key=lambda e: e["file"])
    with open(MANIFEST, "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    return merged
