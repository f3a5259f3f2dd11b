#!/usr/bin/env python3
"""gpu.py - the driver of gpu.sh (environment: MIB, NPATS, ROUNDS, SCHEDULERS, OUT, HETFARM,
WORK; WORK/probe.json when gpu-probe ran).

For each pattern count and scheduler: `hetfarm run` on the real engine with the CPU and every
GPU ([devices] cpu = all, cuda = all), counts mode, the text pinned, verify of 1 MiB sampled
per round. From results.json, over rounds >= 1:
  - kernel_GBps per GPU: text bytes / summed kernel time of its bundles (text on the GPU);
  - end_to_end_GBps per GPU: text bytes / summed bundle wall time (host memory to counts);
  - per round: efficiency (ideal / makespan) and every device's share; the mean efficiency
    from round 2 on, and the CPU's mean share.
The pinned host->device limit is the best h2d GB/s of gpu-probe's largest buffer; the target is
end_to_end >= 0.8 x that limit, and HASS efficiency >= 0.95 from round 2 (issue 4).
"""
import json
import shutil
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import machine  # noqa: E402

env = os.environ
WORK, HETFARM = env["WORK"], env["HETFARM"]
HERE = os.path.dirname(os.path.abspath(__file__))
text = os.path.join(WORK, "text.txt")


def h2d_limit():
    try:
        with open(os.path.join(WORK, "probe.json")) as f:
            p = json.load(f)
    except (OSError, ValueError):
        return None
    best = []
    for g in p.get("gpus", []):
        copies = g.get("copy", [])
        if copies:
            best.append(max(copies, key=lambda c: c["bytes"])["h2d_gbs_best"])
    return min(best) if best else None


def run_one(pats, sched):
    ini = os.path.join(WORK, "gpu.ini")
    rounds = int(env["ROUNDS"])
    with open(ini, "w") as f:
        f.write(f"[run]\napp = strsearch\nrounds = {rounds}\nengine = real\nscheduler = {sched}\n"
                f"progress = no\n[load]\ntext = {text}\npatterns = {pats}\noutput = counts\n"
                f"out = {WORK}/out.txt\nchunk = 4MiB\npasses = {rounds}\nverify = 1MiB\n"
                f"pin = yes\n[devices]\ncpu = all\ncuda = all\n")
    res = os.path.join(WORK, "results.json")
    r = subprocess.run([HETFARM, "run", ini, "-o", res, "--profiles",
                        os.path.join(WORK, f"profiles-{sched}")], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"gpu.py: hetfarm failed:\n{r.stdout}\n{r.stderr}")
    if env.get("KEEP"):
        shutil.copy(res, os.path.join(env["KEEP"], f"strsearch-{sched}.json"))
    with open(res) as f:
        j = json.load(f)
    run = j["runs"][0] if "runs" in j else j
    devs = run["devices"]
    out = {"devices": [], "rounds": []}
    for i, d in enumerate(devs):
        ev = [e for e in run["events"] if e["device"] == i and e["round"] >= 1]
        work = sum(e["work"] for e in ev)
        kern = sum(e["kernel_s"] for e in ev)
        wall = sum(e["end_s"] - e["start_s"] for e in ev)
        # The device's rate while everyone runs (rounds >= 2): below its standalone
        # rate when the devices contend for host memory or PCIe.
        late = [rd["devices"][i] for rd in run["rounds"] if rd["round"] >= 2]
        busy = sum(x["busy_s"] for x in late)
        x = {"name": d["name"], "kind": d["kind"],
             "standalone_GBps": round(d["standalone_rate"] / 1e9, 2),
             "together_GBps": round(sum(x["work"] for x in late) / busy / 1e9, 2) if busy else None}
        if d["kind"] == "cuda":
            x["kernel_GBps"] = round(work / kern / 1e9, 2) if kern > 0 else None
            x["end_to_end_GBps"] = round(work / wall / 1e9, 2) if wall > 0 else None
        out["devices"].append(x)
    for rd in run["rounds"]:
        out["rounds"].append({"round": rd["round"], "makespan_s": rd["makespan_s"],
                              "efficiency": round(rd["efficiency"], 4),
                              "shares": {d["name"]: round(d["share"], 4) for d in rd["devices"]}})
    later = [rd for rd in run["rounds"] if rd["round"] >= 2]
    out["efficiency_mean_r2"] = round(statistics.mean(rd["efficiency"] for rd in later), 4) \
        if later else None
    cpu = [d["name"] for d in devs if d["kind"] == "cpu"]
    out["cpu_share_mean_r2"] = round(statistics.mean(
        sum(d["share"] for d in rd["devices"] if d["name"] in cpu) for rd in later), 4) \
        if later else None
    out["text_GBps_r2"] = round(statistics.median(
        os.path.getsize(text) / rd["makespan_s"] / 1e9 for rd in later), 2) if later else None
    return out


def main():
    npats = [int(x) for x in env["NPATS"].split()]
    pats_all = os.path.join(WORK, "patterns_all.txt")
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), text, env["MIB"], pats_all,
                    str(max(npats))], check=True)
    with open(pats_all) as f:
        words = f.read().split("\n")
    limit = h2d_limit()
    sets = []
    for n in npats:
        pats = os.path.join(WORK, f"patterns_{n}.txt")
        with open(pats, "w") as f:
            f.write("\n".join(words[:n]) + "\n")
        for sched in env["SCHEDULERS"].split():
            r = run_one(pats, sched)
            r.update({"patterns": n, "scheduler": sched})
            e2e = [d["end_to_end_GBps"] for d in r["devices"] if d.get("end_to_end_GBps")]
            if limit and e2e:
                r["end_to_end_vs_h2d_limit"] = round(min(e2e) / limit, 3)
                r["pass_end_to_end"] = min(e2e) >= 0.8 * limit
            if sched == "hass" and r["efficiency_mean_r2"] is not None:
                r["pass_efficiency"] = r["efficiency_mean_r2"] >= 0.95
            sets.append(r)
            print(json.dumps({k: r[k] for k in r if k != "rounds"}))
    machine.write_json_atomic(env["OUT"], {
        "bench": "strsearch_gpu", "machine": machine.describe(),
        "text_bytes": os.path.getsize(text), "h2d_limit_GBps": limit,
        "targets": "end_to_end >= 0.8 x pinned h2d limit; HASS efficiency >= 0.95 from round 2",
        "sets": sets})


if __name__ == "__main__":
    main()
