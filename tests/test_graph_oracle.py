#!/usr/bin/env python3
"""test_graph_oracle.py - the graph apps' output files checked against networkx.

DESIGN
------
An oracle that shares no code with hetfarm: `build/hetfarm run` runs bfs,
sssp, cc and pagerank on 4elt.graph (METIS, from tests/data/)
and on a small random weighted edge list written here (with self-loops,
duplicate arcs and isolated ids, as the loaders document), both symmetrised
and, for the apps defined on directed graphs, with symmetrise = no. Every
line of every output file is compared with what networkx computes on the
same graph, built here from the file with the loaders' documented rules
(self-loops dropped, duplicates merged keeping the minimum weight,
unweighted edges of weight 1): BFS depths (-1 unreached), Dijkstra distances
(inf unreached, 1e-5 relative), component labels (the smallest id of the
component) and PageRank (both run to a tight tolerance, 1e-5 relative).

Exits 77 (skipped) when networkx is not installed: the Debian package is
python3-networkx.
"""
import math
import os
import random
import subprocess
import sys
import tempfile

try:
    import networkx as nx
except ImportError:
    print("networkx not installed")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETFARM = os.path.join(ROOT, os.environ.get("HF_BUILD", "build"), "hetfarm")
# The repository's copy of METIS's 4elt mesh (tests/data/README.md).
FOURELT = os.path.join(ROOT, "tests", "data", "4elt.graph")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def read_metis(path):
    """A METIS file as an undirected networkx graph, ids 1-based as in the file."""
    with open(path) as f:
        lines = [l for l in f if not l.startswith("%")]
    n = int(lines[0].split()[0])
    g = nx.Graph()
    g.add_nodes_from(range(1, n + 1))
    for u, line in enumerate(lines[1:n + 1], start=1):
        for v in line.split():
            if int(v) != u:
                g.add_edge(u, int(v), weight=1.0)
    return g, 1


def write_edgelist(path, seed):
    """A random weighted edge list with self-loops, duplicates and isolated ids."""
    rnd = random.Random(seed)
    n = 400
    arcs = []
    for _ in range(1200):
        u, v = rnd.randrange(n - 5), rnd.randrange(n - 5)
        arcs.append((u, v, rnd.randint(1, 50)))
    arcs += [(3, 3, 1), (10, 11, 9), (10, 11, 2), (11, 10, 7), (n - 1, 0, 5)]
    with open(path, "w") as f:
        f.write("# oracle test graph\n")
        for u, v, w in arcs:
            f.write("%d %d %d\n" % (u, v, w))
    return arcs, n


def edgelist_graph(arcs, n, directed):
    """The graph the loader builds: no self-loops, duplicates keep the minimum weight."""
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    for u, v, w in arcs:
        if u == v:
            continue
        if g.has_edge(u, v):
            g[u][v]["weight"] = min(g[u][v]["weight"], float(w))
        else:
            g.add_edge(u, v, weight=float(w))
    return g


def run(app, load_lines, tmp, tag):
    """Runs app and returns its output as {id: value string}."""
    out = os.path.join(tmp, "%s-%s.tsv" % (app, tag))
    ini = os.path.join(tmp, "%s-%s.ini" % (app, tag))
    with open(ini, "w") as f:
        f.write("[run]\napp = %s\nscheduler = greedy\nrounds = 100000\n" % app)
        f.write("[load]\n%s\nout = %s\ncache_dir = %s\n" % (load_lines, out, tmp))
        if app == "pagerank":
            f.write("tol = 1e-12\nmax_iters = 1000\n")
        f.write("[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n")
    p = subprocess.run([HETFARM, "run", ini, "--profiles", os.path.join(tmp, "profiles"),
                        "-o", os.path.join(tmp, "results.json")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail("%s on %s: hetfarm exited %d:\n%s" % (app, tag, p.returncode, p.stdout[-2000:]))
        return None
    vals = {}
    with open(out) as f:
        for line in f:
            i, v = line.rstrip("\n").split("\t")
            vals[int(i)] = v
    return vals


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b) + 1e-12


def check(app, tag, g, base, src, vals):
    """Compares every line with networkx on g (nodes numbered as in the file)."""
    if vals is None:
        return
    nodes = sorted(g.nodes())
    if sorted(vals) != nodes:
        fail("%s on %s: output ids differ from the graph's" % (app, tag))
        return
    bad = 0
    if app == "bfs":
        ref = nx.single_source_shortest_path_length(g, src)
        want = {v: str(ref.get(v, -1)) for v in nodes}
        bad = [v for v in nodes if vals[v] != want[v]]
    elif app == "sssp":
        ref = nx.single_source_dijkstra_path_length(g, src, weight="weight")
        for v in nodes:
            if v not in ref:
                ok = vals[v] == "inf"
            else:
                ok = vals[v] != "inf" and close(float(vals[v]), ref[v], 1e-5)
            if not ok:
                bad = (bad or []) + [v]
    elif app == "cc":
        want = {}
        for comp in nx.connected_components(g):
            m = min(comp)
            for v in comp:
                want[v] = str(m)
        bad = [v for v in nodes if vals[v] != want[v]]
    else:
        tol = 1e-10 / len(nodes)  # networkx stops when the L1 change < N * tol
        try:
            ref = nx.pagerank(g, alpha=0.85, tol=tol, max_iter=10000, weight=None)
        except ImportError:  # networkx without numpy/scipy: its pure-Python version
            from networkx.algorithms.link_analysis import pagerank_alg
            ref = pagerank_alg._pagerank_python(g, alpha=0.85, tol=tol, max_iter=10000,
                                                weight=None)
        bad = [v for v in nodes if not close(float(vals[v]), ref[v], 1e-5)]
    if bad:
        v = bad[0]
        fail("%s on %s: %d vertices differ from networkx, e.g. %d: %s" %
             (app, tag, len(bad), v, vals[v]))
    else:
        print("ok   %s on %s (%d vertices)" % (app, tag, len(nodes)))


def main():
    if not os.access(HETFARM, os.X_OK):
        print("%s missing: run make build first" % HETFARM)
        return 1
    with tempfile.TemporaryDirectory(prefix="hf_oracle.") as tmp:
        if not os.path.exists(FOURELT):
            print("%s missing: the repository is incomplete" % FOURELT)
            return 1
        g, base = read_metis(FOURELT)
        cases = [("4elt", "graph = %s" % FOURELT, g, g, 1)]
        path = os.path.join(tmp, "edges.txt")
        arcs, n = write_edgelist(path, 7)
        und = edgelist_graph(arcs, n, False)
        cases.append(("edgelist", "graph = %s" % path, und, und, 0))
        dig = edgelist_graph(arcs, n, True)
        for tag, load, g, _, base in cases:
            src = max(g.nodes(), key=lambda v: (g.degree(v), -v))
            for app in ("bfs", "sssp", "cc", "pagerank"):
                lines = load + ("\nsource = %d" % src if app in ("bfs", "sssp") else "")
                check(app, tag, g, base, src, run(app, lines, tmp, tag))
        src = max(dig.nodes(), key=lambda v: (dig.out_degree(v), -v))
        for app in ("bfs", "sssp", "pagerank"):
            lines = "graph = %s\nsymmetrise = no" % path
            if app != "pagerank":
                lines += "\nsource = %d" % src
            check(app, "directed edgelist", dig, 0, src, run(app, lines, tmp, "directed"))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all outputs agree with networkx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
