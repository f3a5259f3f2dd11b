#!/usr/bin/env python3
"""placement_summary.py - bench/graph/placement.sh's runs as one results JSON.

DESIGN
------
Reads OUT/runs.jsonl (placement_record.py's lines, and one outputs_equal line
per pair) and writes RESULT with the machine (bench/machine.py) and, per
(graph, app, devices), both placements side by side: halo (what an
owner-computes exchange would move, state elements), broadcast (every change
to every other device: what hetfarm's merge moves, placement or not), the
partition's ratio to range, the bytes that ratio saves at the app's element
size (bfs and cc 4 bytes, pagerank 8), the seconds those bytes take at
LINK_GBS (25 GB/s: a PCIe 4.0 x16 link's practical rate), next to the
seconds partitioning and relabelling cost, and both runs' makespan sums (on
this VM's CPU teams, or the sim's virtual seconds). Prints one line per
pair. Per-round halo counts are kept under each run, one line per run.
Written atomically; failed runs are kept with their error.

    bench/graph/placement_summary.py OUT RESULT
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import machine  # noqa: E402

LINK_GBS = 25.0
ELEM_BYTES = {"bfs": 4, "cc": 4, "pagerank": 8}


def write_compact(path, obj):
    """Writes obj as indented JSON with every list of numbers on one line (the
    per-round halos of a 14k-level BFS would otherwise take a line each), to a
    temporary file next to path, then renames it."""
    if "command" not in obj:
        obj = {"command": machine.command(), **obj}
    text = json.dumps(obj, indent=2)
    text = re.sub(r"\[\s*([-0-9.eE+, \nnul]*?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]"
                  if m.group(1).strip() else "[]", text)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def main():
    out, result = sys.argv[1], sys.argv[2]
    with open(os.path.join(out, "runs.jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    pairs = {}
    for r in lines:
        key = (r["graph"], r["app"], r["devices"])
        p = pairs.setdefault(key, {"graph": key[0], "app": key[1], "devices": key[2]})
        if "outputs_equal" in r:
            p["outputs_equal"] = r["outputs_equal"]
        else:
            p[r["placement"]] = r
    rows = []
    for key in sorted(pairs):
        p = pairs[key]
        rng, part = p.get("range", {}), p.get("partition", {})
        if rng.get("halo") is not None and part.get("halo") is not None:
            saved = (rng["halo"] - part["halo"]) * ELEM_BYTES[p["app"]]
            p["halo_ratio"] = part["halo"] / rng["halo"] if rng["halo"] else None
            p["bytes_saved"] = saved
            p["link_s_saved"] = saved / (LINK_GBS * 1e9)
            p["placement_s"] = part.get("placement_s")
            p["makespan_ratio"] = (part["makespan_sum_s"] / rng["makespan_sum_s"]
                                   if rng.get("makespan_sum_s") else None)
            print(f'{p["graph"]:5} {p["app"]:8} {p["devices"]:6} halo {rng["halo"]:>12.0f} -> '
                  f'{part["halo"]:>12.0f} (x{p["halo_ratio"] or 0:.3f}; broadcast '
                  f'{rng["broadcast"]:.3g})  saves {saved / 1e6:.3f} MB = '
                  f'{p["link_s_saved"] * 1e3:.3f} ms at {LINK_GBS:g} GB/s; partitioning '
                  f'{part["placement_s"]:.2f} s; makespans {rng["makespan_sum_s"]:.4g} -> '
                  f'{part["makespan_sum_s"]:.4g} s; outputs equal: {p.get("outputs_equal")}')
        else:
            print(f'{p["graph"]:5} {p["app"]:8} {p["devices"]:6} FAILED: '
                  f'{rng.get("error") or part.get("error") or "no figures"}')
        rows.append(p)
    for p in rows:
        for k in ("range", "partition"):
            p.get(k, {}).pop("round_changed", None)  # the totals keep it (broadcast)
    write_compact(result, {
        "bench": "graph_placement",
        "machine": machine.describe(),
        "link_gbs": LINK_GBS,
        "element_bytes": ELEM_BYTES,
        "what": "halo = state elements an owner-computes exchange would send (each changed vertex "
                "to every other device owning a neighbour; devices own contiguous id spans sized "
                "by their shares of the split rounds); broadcast = changed x (devices - 1), what "
                "hetfarm's merge sends whatever the placement (apps/graph/app/graph_traffic.c)",
        "pairs": rows,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
