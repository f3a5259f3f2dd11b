#!/usr/bin/env python3
"""partition_check.py - an independent check of a k-way graph partition.

DESIGN
------
Shares no code with hetfarm, METIS or Scotch: it reads a METIS `.graph` file
(header `n m [fmt [ncon]]`, fmt digits = vertex sizes, vertex weights, edge
weights; `%` comment lines; 1-based neighbours) and a partition file in
gpmetis's format (one 0-based part id per line, line i for vertex i), and
recomputes what a partitioner claims: the edge cut (every undirected edge
once, by its weight; each edge is listed at both ends, so the cut is half the
sum over adjacency entries whose ends differ in part) and the max imbalance
(the heaviest part's vertex weight over total / k, the worst constraint when
ncon > 1; 1.0 when every weight is zero). The graph is checked as it is read
(neighbour ids in range, 2m adjacency entries, the weights the fmt promises),
and so is the partition (exactly n lines, integers in 0..k-1). Any malformed
input, or a max imbalance above 1 + `--imbalance`, exits 1 with a message
naming file and line; success prints one line of JSON.

    tests/partition_check.py GRAPH PARTFILE [--parts K] [--imbalance 0.03]
"""
import argparse
import json
import sys


class Bad(Exception):
    pass


def _lines(path):
    """Yields (line number, fields) for every non-comment line, blank lines too
    after the header (a vertex without neighbours is a blank line)."""
    with open(path) as f:
        for no, line in enumerate(f, 1):
            if line.startswith("%"):
                continue
            yield no, line.split()


def _ints(path, no, fields):
    try:
        return [int(x) for x in fields]
    except ValueError:
        raise Bad(f"{path}:{no}: not an integer in {' '.join(fields)[:60]!r}")


def read_graph(path):
    """Returns (n, adjacency lists of (neighbour 0-based, weight), vertex
    weights as lists of ncon ints)."""
    it = _lines(path)
    for no, fields in it:
        if fields:
            break
    else:
        raise Bad(f"{path}: no header line")
    head = _ints(path, no, fields)
    if len(head) < 2 or len(head) > 4:
        raise Bad(f"{path}:{no}: header must be 'n m [fmt [ncon]]'")
    n, m = head[0], head[1]
    fmt = f"{head[2]:03d}" if len(head) > 2 else "000"
    if len(fmt) != 3 or any(c not in "01" for c in fmt) or n < 0 or m < 0:
        raise Bad(f"{path}:{no}: bad header {' '.join(fields)}")
    has_size, has_vw, has_ew = (c == "1" for c in fmt)
    ncon = head[3] if len(head) > 3 else 1
    if ncon < 1 or (len(head) > 3 and not has_vw):
        raise Bad(f"{path}:{no}: ncon = {ncon} needs vertex weights in fmt")
    adj, vw, entries = [], [], 0
    for no, fields in it:
        if len(adj) == n:
            if fields:
                raise Bad(f"{path}:{no}: more than n = {n} vertex lines")
            continue
        vals = _ints(path, no, fields)
        head_len = (1 if has_size else 0) + (ncon if has_vw else 0)
        if len(vals) < head_len:
            raise Bad(f"{path}:{no}: vertex {len(adj) + 1} lacks its weights")
        w = vals[1 if has_size else 0:head_len] if has_vw else [1]
        if any(x < 0 for x in w):
            raise Bad(f"{path}:{no}: negative vertex weight")
        rest = vals[head_len:]
        step = 2 if has_ew else 1
        if len(rest) % step:
            raise Bad(f"{path}:{no}: neighbour without an edge weight")
        nbrs = []
        for i in range(0, len(rest), step):
            v = rest[i]
            if not 1 <= v <= n:
                raise Bad(f"{path}:{no}: neighbour {v} out of range 1..{n}")
            ew = rest[i + 1] if has_ew else 1
            if ew < 0:
                raise Bad(f"{path}:{no}: negative edge weight {ew}")
            nbrs.append((v - 1, ew))
        entries += len(nbrs)
        adj.append(nbrs)
        vw.append(w)
    while len(adj) < n:          # trailing blank lines may be missing
        adj.append([])
        vw.append([1] * (ncon if has_vw else 1))
    if entries != 2 * m:
        raise Bad(f"{path}: header says m = {m} edges, adjacency lists hold "
                  f"{entries} entries (expected 2m = {2 * m})")
    return n, adj, vw


def read_parts(path, n, k):
    parts = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            s = line.strip()
            try:
                p = int(s)
            except ValueError:
                raise Bad(f"{path}:{no}: {s[:40]!r} is not a part id")
            if p < 0 or (k is not None and p >= k):
                raise Bad(f"{path}:{no}: part {p} out of range 0..{k - 1 if k else '?'}")
            parts.append(p)
    if len(parts) != n:
        raise Bad(f"{path}: {len(parts)} lines, the graph has {n} vertices")
    return parts


def check(graph, partfile, k=None, imbalance=None):
    n, adj, vw = read_graph(graph)
    parts = read_parts(partfile, n, k)
    if k is None:
        k = max(parts) + 1 if parts else 1
    twice = 0
    for u, nbrs in enumerate(adj):
        pu = parts[u]
        for v, w in nbrs:
            if parts[v] != pu:
                twice += w
    ncon = len(vw[0]) if vw else 1
    ratios = []
    for c in range(ncon):
        load = [0] * k
        for u in range(n):
            load[parts[u]] += vw[u][c]
        total = sum(load)
        if total > 0:
            ratios.append(max(load) / (total / k))
    worst, used = max(ratios, default=1.0), set(parts)
    res = {"graph": graph, "parts": partfile, "n": n, "k": k,
           "edge_cut": twice // 2 if twice % 2 == 0 else twice / 2,
           "max_imbalance": round(worst, 6), "empty_parts": k - len(used)}
    if imbalance is not None and worst > 1 + imbalance + 1e-9:
        raise Bad(f"{partfile}: max imbalance {worst:.4f} exceeds the bound "
                  f"1 + {imbalance} = {1 + imbalance:.4f}")
    return res


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graph")
    ap.add_argument("partition")
    ap.add_argument("--parts", "-k", type=int, help="number of parts (default: max id + 1)")
    ap.add_argument("--imbalance", type=float, help="allowed imbalance, e.g. 0.03")
    a = ap.parse_args(argv)
    if a.parts is not None and a.parts < 1:
        print("partition_check: --parts must be >= 1", file=sys.stderr)
        return 2
    try:
        res = check(a.graph, a.partition, a.parts, a.imbalance)
    except (Bad, OSError) as e:
        print(f"partition_check: {e}", file=sys.stderr)
        return 1
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
