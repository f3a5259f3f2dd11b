#!/usr/bin/env python3
"""test_mpi_run.py - `mpirun -np 3 build/hetfarm ...`: a run across nodes.

DESIGN
------
Three ranks on this machine (--oversubscribe), each with a one-thread CPU
team: rank 0 runs the run with ranks 1 and 2 as node devices (node1, node2),
which run the spans they are handed with their own scheduler and send the
results back (framework/core/nodes.c). Checked, through the CLI as a user
runs it:

- conformance under 3 ranks: noop with every scheduler, every round verified
  on rank 0 after the nodes' per-unit counters landed there, so a unit run
  twice or never (on any rank) fails the run; per round the devices' chunk
  counts add up to the load, the nodes got work (under static always; the
  adaptive schedulers may leave a node whose hand-off costs more than it
  saves out, so for them: in some run), and each node's chunks are what its
  own devices (node1:cpu, node2:cpu) report, bundle by bundle in
  node_events too, and the report draws a lane for each of them;
- matmul n = 256 with every row checked against the reference on rank 0;
- the same noop load without mpirun: the same loads, round by round;
- a rank that hangs (`[faults] node_fails = 2:hang`) ends the job within the
  deadline with a message naming rank 2, and one that exits ends it too; no
  results file either way (an earlier one at the path is left as it was,
  and stderr says it is an earlier run's), and
  results.partial.json beside it holds the rounds that finished (none, or
  rounds 0 and 1 when the rank fails in round 2: `2:hang@2`, `1:exit@2`) and
  says which rank (null for the one that died: mpirun names it) and why; a
  good run then writes its results and leaves the partial file, saying so;
- the graph apps, whose state is shared data merged every round across the
  ranks (node devices pull and push like a GPU): bfs, sssp, pagerank, cc and
  mst on a generated grid and a small Kronecker graph, BFS and PageRank under
  every scheduler, each run verified on rank 0 (`verify = yes`) and its
  `[load] out` file equal to the same run's without mpirun (byte for byte,
  PageRank within 1e-9), the same loads round by round (BFS, PageRank), and
  the nodes given work (in PageRank under static, and in some run of every
  case; some node runs several spans of one round);
- strsearch, whose results are counts and match lists of sizes only the
  node knows: a text with a pattern planted across every chunk boundary
  (and so every segment boundary) and overlapping ones, searched in
  segments, twice, under every scheduler with every round verified on rank
  0; the matches file equals, byte for byte, the same run's without mpirun
  and an independent count here (each planted occurrence exactly once), the
  counts file too, and the nodes ran spans, several in one round;
- an app that cannot run across nodes (partition: neither results nor
  shared data) is refused clearly.

Skips (77) when the build has no MPI (build/hetfarm does not link libmpi) or
mpirun is missing.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETFARM = os.path.join(ROOT, os.environ.get("HF_BUILD", "build"), "hetfarm")
MPIRUN = os.environ.get("HF_MPIRUN", "mpirun --oversubscribe --allow-run-as-root").split()

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def have_mpi():
    if not shutil.which(MPIRUN[0]) or not os.path.exists(HETFARM):
        return False
    out = subprocess.run(["ldd", HETFARM], capture_output=True, text=True).stdout
    return "libmpi" in out


def ini(app, load, extra_run="", faults=""):
    return ("[run]\napp = %s\nrounds = 3\nprogress = no\n%s\n[load]\n%s\n"
            "[devices]\ncpu = 1\ncuda = none\n"
            "[compare]\nschedulers = hass, greedy, minmin, qilin, static\n%s"
            % (app, extra_run, load, faults))


def hetfarm(tmp, name, text, cmd="compare", ranks=3, timeout=240):
    cfg = os.path.join(tmp, name + ".ini")
    with open(cfg, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + ".json")
    argv = [HETFARM, cmd, cfg, "-o", out]
    if ranks:
        argv = MPIRUN + ["-np", str(ranks)] + argv
    p = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=timeout)
    return p, out


def load_runs(path):
    with open(path) as f:
        return json.load(f)["runs"]


def check_conformance(tmp):
    p, out = hetfarm(tmp, "noop", ini("noop", "chunks = 600\nspin_ns = 20000"))
    if p.returncode != 0:
        fail("noop across 3 ranks: exit %d\n%s" % (p.returncode, p.stderr[-3000:]))
        return None
    runs = load_runs(out)
    any_node_work = False
    if len(runs) != 5:
        fail("noop across 3 ranks: %d runs, expected 5" % len(runs))
    for run in runs:
        names = [d["name"] for d in run["devices"]]
        kinds = [d["kind"] for d in run["devices"]]
        if names != ["cpu", "node1", "node2"] or kinds != ["cpu", "node", "node"]:
            fail("%s: devices %s %s, expected cpu, node1, node2" % (run["scheduler"], names, kinds))
            continue
        inner = [d["name"] for d in run.get("node_devices", [])]
        if inner != ["node1:cpu", "node2:cpu"]:
            fail("%s: devices inside the nodes %s, expected node1:cpu, node2:cpu"
                 % (run["scheduler"], inner))
            continue
        node_work = 0
        for r in run["rounds"]:
            chunks = sum(d["chunks"] for d in r["devices"])
            if chunks != 600:
                fail("%s round %d: %d chunks ran, expected 600" % (run["scheduler"], r["round"],
                                                                    chunks))
            node_work += sum(d["work"] for d in r["devices"][1:])
            # A node's chunks are what its own devices ran, bundle by bundle
            # in node_events too.
            for k, node in enumerate(r["devices"][1:]):
                ran = r["node_devices"][k]["chunks"]
                if ran != node["chunks"]:
                    fail("%s round %d: %s ran %d chunks, its devices %d"
                         % (run["scheduler"], r["round"], node["name"], node["chunks"], ran))
                bundled = sum(e["count"] for e in run.get("node_events", [])
                              if e["round"] == r["round"] and e["device"] == k)
                if bundled != ran:
                    fail("%s round %d: node_events hold %d chunks of %s, which ran %d"
                         % (run["scheduler"], r["round"], bundled, inner[k], ran))
        # static's equal ratios always give the nodes work; the adaptive
        # schedulers may rightly leave a node out when its hand-off costs more
        # than it saves (3 ranks on a busy 2-core machine), so for them the
        # check is that some run used the nodes.
        if node_work <= 0 and run["scheduler"] == "static":
            fail("%s: the nodes got no work in any round" % run["scheduler"])
        any_node_work = any_node_work or node_work > 0
    if not any_node_work:
        fail("noop: the nodes got no work in any run")
    # The report (compare writes it beside the results) draws the devices
    # inside the nodes: a lane each in every run's Gantt chart.
    with open(os.path.join(tmp, "report.html")) as f:
        html = f.read()
    for name in ("node1:cpu", "node2:cpu"):
        lanes = len(re.findall(r'class="lanelabel inner"[^>]*>%s</text>' % name, html))
        if lanes != len(runs):
            fail("report.html: %d lanes of %s, expected one per run (%d)"
                 % (lanes, name, len(runs)))
    return runs


def check_one_process(tmp, runs):
    p, out = hetfarm(tmp, "noop1", ini("noop", "chunks = 600\nspin_ns = 20000"), ranks=0)
    if p.returncode != 0:
        fail("noop alone: exit %d\n%s" % (p.returncode, p.stderr[-2000:]))
        return
    alone = load_runs(out)
    for a, b in zip(alone, runs or []):
        # load_work is the sum of the chunks' learned costs: equal up to rounding.
        la = [(r["load_units"], round(r["load_work"], 6)) for r in a["rounds"]]
        lb = [(r["load_units"], round(r["load_work"], 6)) for r in b["rounds"]]
        if la != lb:
            fail("%s: loads alone %s differ from across nodes %s" % (a["scheduler"], la, lb))


def check_matmul(tmp):
    text = ini("matmul", "n = 256", extra_run="scheduler = hass")
    p, out = hetfarm(tmp, "matmul", text, cmd="run")
    if p.returncode != 0:
        fail("matmul across 3 ranks: exit %d\n%s" % (p.returncode, p.stderr[-3000:]))


EARLIER = '{"runs": "an earlier run\'s"}\n'


def check_partial(how, p, out, rank, rounds):
    """A failed run across nodes: no results file (an earlier one left as it
    was, and said to be an earlier run's), and what finished in
    results.partial.json beside it, which says why."""
    with open(out) as f:
        if f.read() != EARLIER:
            fail("node_fails = %s: %s is not the earlier run's any more" % (how, out))
    if "is an earlier run's results" not in p.stderr:
        fail("node_fails = %s: stderr does not say %s is an earlier run's:\n%s"
             % (how, out, p.stderr[-2000:]))
    partial = out[:-len(".json")] + ".partial.json"
    if not os.path.exists(partial):
        fail("node_fails = %s: no %s\n%s" % (how, partial, p.stderr[-2000:]))
        return
    with open(partial) as f:
        doc = json.load(f)
    failed = doc.get("failed", {})
    if failed.get("rank") != rank or failed.get("scheduler") != "static" or \
            failed.get("rounds_completed") != rounds or not failed.get("message"):
        fail("node_fails = %s: failed = %s, expected rank %s, static, %d rounds"
             % (how, failed, rank, rounds))
    if rank is None and failed.get("signal") != 15:
        fail("node_fails = %s: a rank that died ends rank 0 by SIGTERM, 'signal' = %s"
             % (how, failed.get("signal")))
    runs = doc.get("runs", [])
    if len(runs) != (1 if rounds else 0):
        fail("node_fails = %s: %d runs kept, expected %d" % (how, len(runs), 1 if rounds else 0))
        return
    for run in runs:
        kept = [r["round"] for r in run["rounds"]]
        if kept != list(range(rounds)):
            fail("node_fails = %s: rounds %s kept, expected 0..%d" % (how, kept, rounds - 1))
        for r in run["rounds"]:
            if sum(d["chunks"] for d in r["devices"]) != 600:
                fail("node_fails = %s: round %d of the partial file is not whole"
                     % (how, r["round"]))
        late = [e for e in run["events"] + run.get("node_events", []) if e["round"] >= rounds]
        if late or not run.get("node_events"):
            fail("node_fails = %s: %d bundles of unfinished rounds kept, %d inside the nodes"
                 % (how, len(late), len(run.get("node_events", []))))


def check_failures(tmp):
    # A rank that hangs or exits at its first span (in the standalone passes:
    # nothing finished), or in round 2 (rounds 0 and 1 finished). Under static
    # (equal ratios) every node has a span in every round.
    cases = (("2:hang", "rank 2 reported nothing within 2 s", 2, 0),
             ("1:exit", "", None, 0),
             ("2:hang@2", "rank 2 reported nothing within 2 s", 2, 2),
             ("1:exit@2", "", None, 2))
    for how, want, rank, rounds in cases:
        text = ini("noop", "chunks = 600\nspin_ns = 20000",
                   extra_run="node_timeout = 2\nscheduler = static",
                   faults="[faults]\nnode_fails = %s\n" % how)
        name = "fault-" + how.replace(":", "-").replace("@", "-")
        out = os.path.join(tmp, name + ".json")
        with open(out, "w") as f:
            f.write(EARLIER)
        p, out = hetfarm(tmp, name, text, cmd="run", timeout=120)
        if p.returncode == 0:
            fail("node_fails = %s: the job succeeded" % how)
        if want and want not in p.stderr:
            fail("node_fails = %s: no '%s' in:\n%s" % (how, want, p.stderr[-2000:]))
        check_partial(how, p, out, rank, rounds)
    # The same run without the fault: its results; the failure's partial
    # file beside them is left, and stderr says it is an earlier run's.
    text = ini("noop", "chunks = 600\nspin_ns = 20000",
               extra_run="node_timeout = 20\nscheduler = static")
    p, out = hetfarm(tmp, "fault-2-hang-2", text, cmd="run", timeout=120)
    partial = out[:-len(".json")] + ".partial.json"
    if p.returncode != 0 or not os.path.exists(out) or not os.path.exists(partial) or \
            "earlier failed run's partial results" not in p.stderr:
        fail("a run after a failed one: exit %d, %s %s, %s %s\n%s"
             % (p.returncode, out, os.path.exists(out), partial, os.path.exists(partial),
                p.stderr[-2000:]))
    text = ini("partition", "generate = grid\nrows = 16\ncols = 16", extra_run="scheduler = hass")
    p, out = hetfarm(tmp, "partition", text, cmd="run", timeout=120)
    if p.returncode == 0 or "cannot run across nodes" not in p.stderr:
        fail("partition across nodes: exit %d, expected a clear refusal:\n%s"
             % (p.returncode, p.stderr[-2000:]))


SS_CHUNK = 4096
SS_PATTERNS = [b"needle", b"hh", b"abcab", b"fed cba", b"ee e"]


def ss_corpus(tmp):
    """A 308 KiB text of a few letters (so that short patterns overlap, as
    "hh" does in "hhh") with "needle" planted across every chunk boundary;
    returns the paths and the planted offsets."""
    rng = random.Random(16)
    size = 77 * SS_CHUNK + 123
    text = bytearray(rng.choice(b"abcdefgh ") for _ in range(size))
    planted = []
    for k in range(1, size // SS_CHUNK + 1):
        at = k * SS_CHUNK - 3  # 3 bytes before the boundary, 3 after
        if at + len(b"needle") <= size:
            text[at:at + 6] = b"needle"
            planted.append(at)
    tpath, ppath = os.path.join(tmp, "corpus.txt"), os.path.join(tmp, "corpus.pat")
    with open(tpath, "wb") as f:
        f.write(text)
    with open(ppath, "wb") as f:
        f.write(b"\n".join(SS_PATTERNS) + b"\n")
    return tpath, ppath, bytes(text), planted


def ss_expected(text):
    """Every occurrence of every pattern, overlapping ones included, as the
    matches and counts files write them (strsearch.c, write_output)."""
    found = []
    for i, pat in enumerate(SS_PATTERNS):
        at = text.find(pat)
        while at >= 0:
            found.append((at, i))
            at = text.find(pat, at + 1)
    found.sort()
    matches = "".join("%d\t%d\n" % m for m in found).encode()
    counts = b"".join(b"%d\t%s\n" % (sum(1 for m in found if m[1] == i), p)
                      for i, p in enumerate(SS_PATTERNS))
    return matches, counts


def ss_ini(tpath, ppath, mode, out):
    """Segments of 64 KiB (5 of them, the last 14 chunks), each searched twice
    (rounds = 5 x 2), in chunks of 4 KiB; every round verified."""
    return ("[run]\napp = strsearch\nscheduler = hass\nrounds = 10\nprogress = no\n"
            "verify = yes\n[load]\ntext = %s\npatterns = %s\noutput = %s\nout = %s\n"
            "chunk = %d\nsegment = 64KiB\npasses = 2\n"
            "[devices]\ncpu = 1\ncuda = none\n[compare]\nschedulers = %s\n"
            % (tpath, ppath, mode, out, SS_CHUNK, ALL))


# Runs of the 3-rank strsearch comparison at most, until a node has run
# several spans in one round (see check_strsearch).
SS_ATTEMPTS = 3


def check_strsearch(tmp):
    tpath, ppath, text, planted = ss_corpus(tmp)
    want_matches, want_counts = ss_expected(text)
    for mode, cmd, want in (("matches", "compare", want_matches), ("counts", "run", want_counts)):
        alone = os.path.join(tmp, "ss-%s-1.out" % mode)
        if ss_run(tmp, tpath, ppath, mode, cmd, 0, alone) is None:
            return
        # Whether a node runs a second span in a round is timing: greedy hands
        # out one chunk per request, and on a busy machine rank 0's CPU may
        # take a round's other chunks before a node asks again. The case must
        # be run, so the 3-rank comparison is repeated (every check again)
        # until it was, SS_ATTEMPTS times at most.
        for _ in range(SS_ATTEMPTS if mode == "matches" else 1):
            several = check_strsearch_across(tmp, tpath, ppath, planted, mode, cmd, want, alone)
            if several is None or several >= 2:
                break
        if mode == "matches" and several is not None and several < 2:
            fail("strsearch: no node ran more than one span in a round (%d runs)" % SS_ATTEMPTS)


def ss_run(tmp, tpath, ppath, mode, cmd, ranks, out):
    """One strsearch run (ranks 0: without mpirun) writing `out`; its runs
    from results.json, or None (a failure said) when it failed."""
    p, res = hetfarm(tmp, "ss-%s-%d" % (mode, ranks), ss_ini(tpath, ppath, mode, out), cmd=cmd,
                     ranks=ranks, timeout=120)
    if p.returncode != 0:
        fail("strsearch %s with %d ranks: exit %d\n%s" % (mode, ranks or 1, p.returncode,
                                                          p.stderr[-3000:]))
        return None
    return load_runs(res)


def check_strsearch_across(tmp, tpath, ppath, planted, mode, cmd, want, alone_out):
    """One run across 3 ranks, checked against the run alone (alone_out) and
    the occurrences counted here; the most spans a node ran in one round, or
    None when the run failed."""
    across_out = os.path.join(tmp, "ss-%s-3.out" % mode)
    runs = ss_run(tmp, tpath, ppath, mode, cmd, 3, across_out)
    if runs is None:
        return None
    with open(alone_out, "rb") as a, open(across_out, "rb") as b:
        alone, across = a.read(), b.read()
    if across != alone:
        fail("strsearch %s: the output differs between 1 and 3 ranks" % mode)
    if across != want:
        fail("strsearch %s: the output across 3 ranks differs from the occurrences "
             "counted here" % mode)
    if mode == "matches":
        lines = across.decode().splitlines()
        for at in planted:
            if lines.count("%d\t0" % at) != 1:
                fail("strsearch: the needle across the chunk boundary at %d is listed "
                     "%d times" % (at, lines.count("%d\t0" % at)))
                break
    # Static gives the nodes work in every round and greedy in some (it hands
    # a node one request's chunks at a time). The model-based schedulers may
    # rightly keep a round on rank 0 when the nodes' latency looks too dear:
    # HASS alone (the `run` of counts) did so for every round on a loaded
    # machine, so only the output says whether they ran right.
    several = 0
    for run in runs:
        names = [d["name"] for d in run["devices"]]
        if names != ["cpu", "node1", "node2"]:
            fail("strsearch %s %s: devices %s" % (mode, run["scheduler"], names))
            continue
        node_chunks = [sum(d["chunks"] for d in r["devices"][1:]) for r in run["rounds"]]
        if ((run["scheduler"] == "greedy" and sum(node_chunks) == 0) or
                (run["scheduler"] == "static" and 0 in node_chunks)):
            fail("strsearch %s %s: chunks run by the nodes per round %s"
                 % (mode, run["scheduler"], node_chunks))
        several = max([several] + [d["bundles"] for r in run["rounds"]
                                   for d in r["devices"][1:]])
    return several


GRAPHS = {"grid": "generate = grid\nrows = 80\ncols = 80\n",
          "kron": "generate = kron\nscale = 11\nedge_factor = 8\n"}
ALL = "hass, greedy, minmin, qilin, static"
PAIR = "hass, greedy"


def graph_ini(app, graph, out, schedulers):
    """A graph app's run: chunks of 128 vertices, so that a round has many
    chunks and a node often runs several spans of one round."""
    source = "source = maxdegree\n" if app in ("bfs", "sssp") else ""
    return ("[run]\napp = %s\nscheduler = hass\nrounds = 100000\nprogress = no\n"
            "verify = yes\ngrain = 128\n[load]\n%s%sout = %s\n"
            "[devices]\ncpu = 1\ncuda = none\n[compare]\nschedulers = %s\n"
            % (app, GRAPHS[graph], source, out, schedulers))


def read_values(path):
    with open(path) as f:
        return [line.split("\t") for line in f.read().splitlines()]


def same_output(app, alone, across):
    """Byte for byte; PageRank's ranks within 1e-9 (sums over another
    team's order may differ in the last bits)."""
    with open(alone, "rb") as a, open(across, "rb") as b:
        if a.read() == b.read():
            return True
    if app != "pagerank":
        return False
    va, vb = read_values(alone), read_values(across)
    return len(va) == len(vb) and all(
        x[0] == y[0] and abs(float(x[1]) - float(y[1])) <= 1e-9 for x, y in zip(va, vb))


def check_graph_apps(tmp):
    # BFS and PageRank under every scheduler; the others under HASS and greedy
    # only (to keep the test short). HASS alone may rightly keep a small
    # round on rank 0's CPU when the nodes' latency looks too dear (on a busy
    # machine it did so for every round of cc on kron), while greedy hands an
    # idle node chunks whenever it asks before rank 0's CPU took them all, so
    # the pair sends the nodes work on one graph or the other (checked per
    # app, below).
    cases = [("bfs", "grid", ALL), ("bfs", "kron", ALL),
             ("pagerank", "grid", ALL), ("pagerank", "kron", ALL),
             ("sssp", "grid", PAIR), ("sssp", "kron", PAIR), ("cc", "grid", PAIR),
             ("cc", "kron", PAIR), ("mst", "grid", PAIR), ("mst", "kron", PAIR)]
    several = 0  # the most spans one node ran in one round
    node_chunks_of = {}  # per app: chunks the nodes ran over its graphs and runs
    for app, graph, schedulers in cases:
        what = "%s on %s (%s)" % (app, graph, schedulers)
        outs = [os.path.join(tmp, "%s-%s-%d.out" % (app, graph, r)) for r in (1, 3)]
        runs = []
        for ranks, out in zip((0, 3), outs):
            p, res = hetfarm(tmp, "%s-%s-%d" % (app, graph, ranks),
                             graph_ini(app, graph, out, schedulers), cmd="compare",
                             ranks=ranks, timeout=120)
            if p.returncode != 0:
                fail("%s with %d ranks: exit %d\n%s" % (what, ranks or 1, p.returncode,
                                                        p.stderr[-3000:]))
                break
            runs.append(load_runs(res))
        if len(runs) != 2:
            continue
        if not same_output(app, outs[0], outs[1]):
            fail("%s: [load] out differs between 1 and 3 ranks" % what)
        alone, across = runs
        if len(alone) != len(across) or len(across) != len(schedulers.split(",")):
            fail("%s: %d runs alone, %d across nodes" % (what, len(alone), len(across)))
        # BFS rounds on a grid are a chunk or two: a scheduler may rightly
        # keep them all on rank 0's CPU. Every round of PageRank is the whole
        # graph; every scheduler gives the nodes some of it.
        total = 0
        for a, b in zip(alone, across):
            names = [d["name"] for d in b["devices"]]
            if names != ["cpu", "node1", "node2"]:
                fail("%s %s: devices %s" % (what, b["scheduler"], names))
                continue
            node_chunks = sum(sum(d["chunks"] for d in r["devices"][1:]) for r in b["rounds"])
            total += node_chunks
            several = max([several] + [d["bundles"] for r in b["rounds"]
                                       for d in r["devices"][1:]])
            if node_chunks == 0 and app == "pagerank" and b["scheduler"] == "static":
                fail("%s %s: the nodes ran nothing" % (what, b["scheduler"]))
            if app in ("bfs", "pagerank"):
                la = [r["load_units"] for r in a["rounds"]]
                lb = [r["load_units"] for r in b["rounds"]]
                if la != lb:
                    fail("%s %s: loads alone %s, across nodes %s" % (what, b["scheduler"], la,
                                                                     lb))
        node_chunks_of[app] = node_chunks_of.get(app, 0) + total
    # Per app, not per graph: on a loaded machine rank 0's CPU took every
    # chunk of cc on kron's few short rounds before a node asked, under greedy
    # too; that the nodes ran right is what the outputs above check.
    for app, total in node_chunks_of.items():
        if total == 0:
            fail("%s: the nodes ran nothing on any graph" % app)
    # A node's changes go to rank 0 after every span and rank 0's union comes
    # back once a round: the case of several spans in one round must be run.
    if several < 2:
        fail("graph apps: no node ran more than one span in a round")


def main():
    if not have_mpi():
        print("no MPI in this build (or no mpirun)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        runs = check_conformance(tmp)
        check_one_process(tmp, runs)
        check_matmul(tmp)
        check_failures(tmp)
        check_strsearch(tmp)
        check_graph_apps(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
