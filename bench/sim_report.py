"""sim_report.py - turns sim_efficiency.sh's raw results into bench/results/sim_efficiency.json.

    python3 bench/sim_report.py --out OUT \
        --load NAME=CONFIG:COMPARE_JSON[,qilin:FRACTION=RUN_JSON][,seed:SEED=RUN_JSON]... ...

For every load and every scheduler it keeps, per round: makespan_s, ideal_s, efficiency and each
device's share (and the scheduler's planned shares for the next round when results.json has
them). It then finds the round from which the shares stop moving and checks HASS's targets:

  - efficiency >= 0.95 in every round from round 2 on (rounds are numbered from 0; round 0 is
    HASS's profiling round);
  - ratios stable by round 3. HASS's ratios are its planned shares (results.json's per-round
    `plan`, the split for the next round); they are stable from the first round r whose plan
    differs from the previous plan by less than 1% (relative; shares under 0.1% compared
    absolutely) and after which no plan moves again: the definition of hetfarm's own
    comparison table (framework/report/results.c), so both report the same round. A run without
    plans falls back to the measured shares.

The measured shares (what each device really ran, stolen chunks included) are reported too,
with `measured_stable_round` (no share moved by 1 percentage point or more) and
`measured_stable_round_relative` (1% relative): they move by whole chunks (1/256 of a matmul
load), so they are informative but carry no target.

Standard library only.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

EFF_TARGET, EFF_FROM_ROUND = 0.95, 2
STABLE_BY_ROUND, STABLE_ABS, STABLE_REL = 3, 0.01, 0.01


def die(msg):
    print(f"sim_report: {msg}", file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


def runs_of(doc):
    return doc.get("runs", []) if isinstance(doc, dict) else doc


def devices_of(rnd):
    return rnd.get("devices") or rnd.get("dev") or []


def stable_round(series, moved):
    """series: [(round, shares)] in order. The first round from which no later entry moved
    against its predecessor (moved(prev, cur) is False), or None when the last one still moved
    or there are fewer than 2 entries."""
    if len(series) < 2:
        return None
    r = None
    for (_, prev), (rnd, cur) in zip(series, series[1:]):
        if moved(prev, cur):
            r = None
        elif r is None:
            r = rnd
    return r


def moved_abs(a, b):
    return any(abs(x - y) >= STABLE_ABS for x, y in zip(a, b))


def moved_rel(a, b):
    """hetfarm's plans_close(): 1% of the previous share, shares under 0.1% compared as 0.1%."""
    return any(abs(y - x) >= STABLE_REL * max(abs(x), 1e-3) for x, y in zip(a, b))


def summarize_run(run):
    """Per-round figures of one run and its stability and efficiency summaries."""
    rounds, shares, plans = [], [], []
    names = [d.get("name", f"dev{i}") for i, d in enumerate(devices_of(run["rounds"][0]))]
    for rnd in run["rounds"]:
        sh = [float(d.get("share", 0.0)) for d in devices_of(rnd)]
        row = {"round": rnd.get("round", len(rounds)), "makespan_s": rnd["makespan_s"],
               "ideal_s": rnd["ideal_s"], "efficiency": rnd["efficiency"],
               "shares": {n: round(s, 5) for n, s in zip(names, sh)}}
        plan = rnd.get("plan")
        if isinstance(plan, list) and plan:
            row["plan_next"] = {n: round(float(p), 5) for n, p in zip(names, plan)}
            plans.append((row["round"], [float(p) for p in plan]))
        rounds.append(row)
        shares.append(sh)
    effs = [r["efficiency"] for r in rounds]
    late = effs[EFF_FROM_ROUND:]
    measured = [(r["round"], sh) for r, sh in zip(rounds, shares)]
    out = {
        "devices": names,
        "rounds": rounds,
        "mean_efficiency": round(sum(effs) / len(effs), 5),
        "min_efficiency_from_round2": round(min(late), 5) if late else None,
        "measured_stable_round": stable_round(measured, moved_abs),
        "measured_stable_round_relative": stable_round(measured, moved_rel),
    }
    if len(plans) >= 2:
        out["stable_round"] = stable_round(plans, moved_rel)
        out["stable_round_of"] = "plan"
    else:
        out["stable_round"] = stable_round(measured, moved_rel)
        out["stable_round_of"] = "measured shares"
    return out


def hass_targets(s):
    eff = s["min_efficiency_from_round2"]
    st = s["stable_round"]
    t = {
        "efficiency_from_round2": {"target": f">= {EFF_TARGET} in every round >= {EFF_FROM_ROUND}",
                                   "min": eff, "pass": eff is not None and eff >= EFF_TARGET},
        "shares_stable": {"target": f"ratios ({s['stable_round_of']}) move < {STABLE_REL:.0%} "
                                    f"from round <= {STABLE_BY_ROUND} on",
                          "stable_round": st, "pass": st is not None and st <= STABLE_BY_ROUND},
    }
    t["pass"] = t["efficiency_from_round2"]["pass"] and t["shares_stable"]["pass"]
    return t


def parse_load_arg(arg):
    """NAME=CONFIG:COMPARE_JSON[,KIND:LABEL=RUN_JSON...] -> (name, config, compare,
    [(kind, label, json)]); KIND is qilin (a training fraction) or seed (HASS at a seed)."""
    head, *extra = arg.split(",")
    name, rest = head.split("=", 1)
    config, compare = rest.split(":", 1)
    out = []
    for e in extra:
        kl, path = e.split("=", 1)
        kind, label = kl.split(":", 1)
        out.append((kind, label, path))
    return name, config, compare, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--load", action="append", required=True)
    a = ap.parse_args()

    loads, table = {}, []
    for arg in a.load:
        name, config, compare, extra = parse_load_arg(arg)
        entry = {"config": config, "schedulers": {}, "qilin_trained": {}}
        seeds = {}
        for run in runs_of(load_json(compare)):
            if not run.get("rounds"):
                die(f"{compare}: run {run.get('scheduler')} has no rounds")
            entry["schedulers"][run["scheduler"]] = summarize_run(run)
        for kind, label, path in extra:
            runs = runs_of(load_json(path))
            if not runs or not runs[0].get("rounds"):
                die(f"{path}: no run with rounds")
            if kind == "qilin":
                entry["qilin_trained"][label] = summarize_run(runs[0])
            else:
                seeds[label] = hass_targets(summarize_run(runs[0]))
        if "hass" in entry["schedulers"]:
            entry["hass_targets"] = hass_targets(entry["schedulers"]["hass"])
        if seeds:
            # The same targets at other seeds: a pass must not hang on one jitter draw.
            entry["hass_seed_sweep"] = {
                "seeds": {k: {"min_efficiency_from_round2": v["efficiency_from_round2"]["min"],
                              "stable_round": v["shares_stable"]["stable_round"],
                              "pass": v["pass"]} for k, v in seeds.items()},
                "pass_all": all(v["pass"] for v in seeds.values()),
            }
        loads[name] = entry
        for label, s in list(entry["schedulers"].items()) + [
                (f"qilin@{k}", v) for k, v in entry["qilin_trained"].items()]:
            table.append((name, label, s))

    verdicts = [e["hass_targets"]["pass"] for e in loads.values() if "hass_targets" in e]
    sweeps = [e["hass_seed_sweep"]["pass_all"] for e in loads.values() if "hass_seed_sweep" in e]
    result = {
        "bench": "sim_efficiency",
        "machine": machine.describe(),
        "note": "sim engine: virtual time on MODELLED devices (see each config); the machine "
                "fields say where the simulation ran, not what was modelled",
        "targets": {"hass_efficiency": f">= {EFF_TARGET} from round {EFF_FROM_ROUND}",
                    "hass_shares_stable_by_round": STABLE_BY_ROUND},
        "loads": loads,
        "verdict": "PASS" if verdicts and all(verdicts) else "FAIL",
        "verdict_seed_sweep": ("PASS" if all(sweeps) else "FAIL") if sweeps else None,
    }
    machine.write_json_atomic(a.out, result)

    print(f"{'load':<8}{'scheduler':<14}{'eff r0':>8}{'eff r1':>8}{'min r2+':>9}{'mean':>8}"
          f"{'stable@':>9}{'meas@':>7}")
    for name, label, s in table:
        e = [r["efficiency"] for r in s["rounds"]]
        f = lambda x: f"{x:.3f}" if x is not None else "-"  # noqa: E731
        print(f"{name:<8}{label:<14}{f(e[0]):>8}{f(e[1] if len(e) > 1 else None):>8}"
              f"{f(s['min_efficiency_from_round2']):>9}{f(s['mean_efficiency']):>8}"
              f"{str(s['stable_round']):>9}{str(s['measured_stable_round']):>7}")
    for name, e in loads.items():
        if "hass_targets" in e:
            t = e["hass_targets"]
            print(f"{name}: HASS efficiency from round 2 "
                  f"{'PASS' if t['efficiency_from_round2']['pass'] else 'FAIL'} "
                  f"(min {t['efficiency_from_round2']['min']}), shares stable at round "
                  f"{t['shares_stable']['stable_round']} "
                  f"{'PASS' if t['shares_stable']['pass'] else 'FAIL'}")
        if "hass_seed_sweep" in e:
            sw = e["hass_seed_sweep"]
            print(f"{name}: HASS at seeds " + ", ".join(
                f"{k}: min eff {v['min_efficiency_from_round2']}, stable@{v['stable_round']}"
                for k, v in sw["seeds"].items()) + f" -> {'PASS' if sw['pass_all'] else 'FAIL'}")
    print(f"verdict (configs' seed) {result['verdict']}, "
          f"at the other seeds {result['verdict_seed_sweep']}; wrote {a.out}")


if __name__ == "__main__":
    main()
