#!/usr/bin/env python3
"""test_devset_replay.py - bench/devset_replay.py and bench/devset_replay.c on a made-up run.

DESIGN
------
A results.json of two devices (a CPU at 1e8 units/s, a GPU at 1e9 standalone) and four rounds
is written here: round 0 ran both devices and spent 2 ms past their bundles, rounds 1-3 ran
the GPU alone in 1 ms. The replay must print one line per round with the set that ran, the
set the choice makes from the rounds before (the pair at round 0, whose split wins while nothing
is measured; the GPU alone from round 1, the pair's 2 ms past its split measured), and the
closing count; with -v, each device alone and the full set priced under each round line, the
full set's part at round 1 being what round 0 measured.
A rounds file with a device line cut short is refused with a message naming the file and the
device, and exit 1; no file, exit 2.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
PY = os.path.join(ROOT, "bench", "devset_replay.py")
BIN = os.path.join(ROOT, os.environ.get("HF_BUILD", "build"), "devset_replay")
failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append(name + (": " + detail if detail else ""))


def device(name, work, busy):
    return {"name": name, "work": work, "busy_s": busy, "bundles": 1 if work else 0}


def made_up_run():
    devs = [{"name": "cpu", "is_gpu": False, "standalone_rate": 1e8},
            {"name": "gpu", "is_gpu": True, "standalone_rate": 1e9}]
    rounds = [{"round": 0, "load_work": 1e6, "load_units": 100, "makespan_s": 2.9e-3,
               "devices": [device("cpu", 0.09e6, 0.9e-3), device("gpu", 0.91e6, 0.9e-3)],
               "device_set": {"used": ["cpu", "gpu"]}}]
    for k in (1, 2, 3):
        rounds.append({"round": k, "load_work": 1e6, "load_units": 100, "makespan_s": 1e-3,
                       "devices": [device("cpu", 0, 0), device("gpu", 1e6, 1e-3)],
                       "device_set": {"used": ["gpu"]}})
    return {"runs": [{"devices": devs, "rounds": rounds}]}


def main():
    if not os.path.exists(BIN):
        print("no %s: `make tests` builds it" % BIN)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        res = os.path.join(tmp, "results.json")
        with open(res, "w") as f:
            json.dump(made_up_run(), f)
        rounds = os.path.join(tmp, "rounds.txt")
        with open(rounds, "w") as f:
            p = subprocess.run([sys.executable, PY, res], stdout=f, text=True)
        expect("devset_replay.py exit", p.returncode == 0)
        with open(rounds) as f:
            lines = f.read().splitlines()
        expect("rounds file: header and 4 rounds", len(lines) == 5, repr(lines))
        expect("header", lines and lines[0].split() == ["2", "cpu", "0", "100000000", "gpu", "1",
                                                        "1000000000"], lines[0] if lines else "")

        out = subprocess.run([BIN, rounds], capture_output=True, text=True)
        expect("replay exit", out.returncode == 0, out.stderr)
        text = out.stdout.splitlines()
        expect("one line a round and the count", len(text) == 5, out.stdout)
        if len(text) == 5:
            expect("round 0: the pair ran and is chosen (nothing measured: the split wins)",
                   "ran cpu+gpu" in text[0] and "chooses cpu+gpu" in text[0], text[0])
            for k in (1, 2, 3):
                expect("round %d: the GPU alone chosen" % k, "chooses gpu " in text[k], text[k])
            expect("count", text[4].startswith("4 of 4 rounds"), text[4])

        out = subprocess.run([BIN, "-v", rounds], capture_output=True, text=True)
        text = out.stdout.splitlines()
        expect("-v: three prices under each round", len(text) == 4 * 4 + 1, out.stdout)
        if len(text) == 17:
            full = text[4 + 3].split()
            expect("-v: the full set at round 1", full[0] == "cpu+gpu", text[7])
            part = float(full[-1].rstrip(")"))
            expect("-v: its part is round 0's 2 ms past the bundles", abs(part - 2.0) < 1e-6,
                   text[7])

        with open(rounds, "w") as f:
            f.write("2 cpu 0 1e8 gpu\n")
        out = subprocess.run([BIN, rounds], capture_output=True, text=True)
        expect("bad rounds file: exit 1", out.returncode == 1, str(out.returncode))
        expect("bad rounds file: names file and device",
               rounds in out.stderr and "device 1" in out.stderr, out.stderr)
        out = subprocess.run([BIN], capture_output=True, text=True)
        expect("no file: exit 2 with usage", out.returncode == 2 and "usage" in out.stderr,
               out.stderr)
    for f in failures:
        print("FAIL " + f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
