#!/usr/bin/env python3
"""test_rounds_cap.py - what `hetfarm run` does when [run] rounds stops a
graph app before its end, and that the graph apps run to their end without it.

DESIGN
------
Every graph app (bfs, sssp, cc, mst, partition, pagerank) runs build/hetfarm
on a small generated graph (a 24x24 road-like grid, weighted where the app
wants weights) on two CPU teams, three times:
  - with no [run] rounds: exit 0, the `out` file written, results.json
    "stopped": "finished", no line about rounds on stderr;
  - with `--rounds 1`: exactly one stderr line naming the app and
    "[run] rounds = 1", results.json "stopped": "rounds" with what was left;
    for the apps whose unfinished output would be wrong, exit 3
    (HF_EXIT_UNFINISHED) and no `out` file (a file left by an earlier run is
    removed first, so the check is not fooled); for pagerank exit 0, the
    ranks written, "converged": false and "warning" in the line;
  - with --rounds equal to the rounds the first run took: the app ends
    exactly at the cap, which must count as its end (exit 0, output written).
Last, noop (rounds are repetitions, no end of its own) with --rounds 1: exit
0, nothing about rounds on stderr, no "stopped" in results.json.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETFARM = os.path.join(ROOT, os.environ.get("HF_BUILD", "build"), "hetfarm")

GRID = "generate = grid\nrows = 24\ncols = 24\nseed = 3\n"
APPS = {
    # app: extra [load] lines, whether an unfinished output is still written
    "bfs": ("", False),
    "sssp": ("weighted = yes\n", False),
    "cc": ("", False),
    "mst": ("weighted = yes\n", False),
    "partition": ("parts = 4\nimbalance = 0.05\n", False),
    "pagerank": ("tol = 1e-9\n", True),
}

failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append("%s: %s" % (name, detail))


def run(tmp, app, load, rounds):
    """Runs app; returns (rc, stderr, results dict or None, whether out exists)."""
    ini = os.path.join(tmp, app + ".ini")
    out = os.path.join(tmp, app + ".out")
    res = os.path.join(tmp, app + ".json")
    for f in (out, res):
        if os.path.exists(f):
            os.unlink(f)
    with open(out, "w") as f:  # an earlier run's output must not pass for this one's
        f.write("stale\n")
    os.unlink(out)
    with open(ini, "w") as f:
        f.write("[run]\napp = %s\nscheduler = greedy\n" % app)
        f.write("[load]\n%s%sout = %s\ncache_dir =\n" % (GRID, load, out))
        f.write("[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n")
    cmd = [HETFARM, "run", ini, "-o", res]
    if rounds:
        cmd += ["--rounds", str(rounds)]
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300)
    doc = None
    if os.path.exists(res):
        with open(res) as f:
            doc = json.load(f)
    return p.returncode, p.stderr, doc, os.path.exists(out)


def round_lines(stderr):
    return [l for l in stderr.splitlines() if "[run] rounds" in l]


def main():
    if not os.access(HETFARM, os.X_OK):
        print("%s missing: run make build first" % HETFARM)
        return 1
    with tempfile.TemporaryDirectory(prefix="hf_rounds.") as tmp:
        for app, (load, approx) in APPS.items():
            rc, err, doc, wrote = run(tmp, app, load, 0)
            expect(app + " to the end: exit 0", rc == 0, "rc=%d %s" % (rc, err[-400:]))
            if rc != 0:
                continue
            r = doc["runs"][0]
            need = len(r["rounds"])
            expect(app + " to the end: output", wrote)
            expect(app + " to the end: stopped", r.get("stopped") == "finished", r.get("stopped"))
            expect(app + " to the end: quiet", not round_lines(err), err)
            expect(app + " needs more than one round", need > 1, need)

            rc, err, doc, wrote = run(tmp, app, load, 1)
            lines = round_lines(err)
            expect(app + " rounds=1: one line", len(lines) == 1, err)
            line = lines[0] if lines else ""
            expect(app + " rounds=1: names the app", line.startswith("hetfarm: %s: " % app), line)
            expect(app + " rounds=1: names the cap", "[run] rounds = 1 " in line, line)
            expect(app + " rounds=1: says what was left", "left: " in line, line)
            expect(app + " rounds=1: exit", rc == (0 if approx else 3), "rc=%d %s" % (rc, err))
            expect(app + " rounds=1: output", wrote == approx, "written=%s" % wrote)
            r = doc["runs"][0] if doc else {}
            expect(app + " rounds=1: results.json", doc is not None)
            expect(app + " rounds=1: stopped", r.get("stopped") == "rounds", r.get("stopped"))
            expect(app + " rounds=1: left", bool(r.get("left")), r.get("left"))
            expect(app + " rounds=1: one round", len(r.get("rounds", [])) == 1)
            expect(app + " rounds=1: converged", r.get("converged") is False, r.get("converged"))
            expect(app + " rounds=1: output kind",
                   r.get("output") == ("approximate" if approx else "none"), r.get("output"))
            if approx:
                expect(app + " rounds=1: a warning", "warning" in line, line)

            rc, err, doc, wrote = run(tmp, app, load, need)
            expect(app + " rounds=%d (its need): exit 0" % need, rc == 0, err[-400:])
            expect(app + " rounds=%d: output" % need, wrote)
            expect(app + " rounds=%d: quiet" % need, not round_lines(err), err)
            if doc:
                expect(app + " rounds=%d: stopped" % need,
                       doc["runs"][0].get("stopped") == "finished", doc["runs"][0].get("stopped"))

        ini = os.path.join(tmp, "noop.ini")
        res = os.path.join(tmp, "noop.json")
        with open(ini, "w") as f:
            f.write("[run]\napp = noop\nscheduler = greedy\n[load]\nchunks = 64\n"
                    "[devices]\ncpu = 1\ncuda = none\n")
        p = subprocess.run([HETFARM, "run", ini, "-o", res, "--rounds", "1"], cwd=tmp,
                           capture_output=True, text=True, timeout=300)
        expect("noop rounds=1: exit 0", p.returncode == 0, p.stderr)
        expect("noop rounds=1: quiet", not round_lines(p.stderr), p.stderr)
        if p.returncode == 0:
            with open(res) as f:
                r = json.load(f)["runs"][0]
            expect("noop: no stopped", "stopped" not in r and "converged" not in r, r.keys())
    for f in failures:
        print("FAIL", f)
    if failures:
        return 1
    print("%d apps: capped runs say so, uncapped runs reach their end" % len(APPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
