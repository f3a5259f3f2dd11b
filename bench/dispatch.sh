#!/usr/bin/env bash
# dispatch.sh - hetfarm's cost per chunk next to StarPU 1.3's cost per empty task.
#
# Builds bench/starpu_noop.c and hetfarm, then, in one run and interleaved repetition by
# repetition (so drift on a shared machine hits every contender alike):
#   - hetfarm's noop app on the real engine with W CPU workers (cpu = W, cpu_teams = W: each
#     worker is its own CPU device, as each StarPU CPU worker is), once per scheduler (greedy
#     and hass), R rounds of T chunks each;
#   - StarPU eager and ws with the same W CPU workers, one warm-up batch then R-1 timed
#     batches of T empty tasks.
# Steady-state cost per chunk: hetfarm = sum of the makespans of rounds 1..R-1 / chunks run in
# them (round 0 is HASS's profiling round and the cold start: it is reported apart, as is the
# figure over all rounds); StarPU = mean of its timed batches / T. The median over the REPS
# repetitions goes to bench/results/<machine>/dispatch.json with the machine it ran on.
#
# Environment knobs: TASKS (200000), WORKERS (CPU workers on both sides; default: the cores
# this process may use), REPS (5), ROUNDS (6), SCHEDULERS ("greedy hass"), HF_SET (extra
# section.key=value settings for hetfarm's config, e.g. "devices.cpu_teams=2"), HF_BUILD
# (hetfarm's build dir, default build), HF_NO_BUILD (1: use $HF_BUILD/hetfarm without running
# make), OUT (bench/results/<machine>/dispatch.json, bench/machine.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
BENCH_KNOBS="TASKS WORKERS REPS ROUNDS SCHEDULERS HF_BUILD OUT HF_SET HF_NO_BUILD" bench_record bench/dispatch.sh "$@"

TASKS=${TASKS:-200000}
cores=$(nproc)
WORKERS=${WORKERS:-$cores}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-6}
SCHEDULERS=${SCHEDULERS:-"greedy hass"}
HF_BUILD=${HF_BUILD:-build}
OUT=${OUT:-$(bench_out dispatch)}
HETFARM=$HF_BUILD/hetfarm
STARPU_NOOP=build/bench/starpu_noop

if [ "$ROUNDS" -lt 2 ]; then
    echo "dispatch.sh: ROUNDS must be >= 2 (round 0 is reported apart)" >&2
    exit 2
fi

echo "== building bench/starpu_noop and hetfarm"
mkdir -p build/bench
# shellcheck disable=SC2046  # pkg-config's flags must split into words
cc -O2 -std=c11 -Wall -Wextra -Werror -o "$STARPU_NOOP" bench/starpu_noop.c \
    $(pkg-config --cflags --libs starpu-1.3)
# HF_NO_BUILD=1 uses an existing $HETFARM as it is (e.g. a build made with other flags).
[ "${HF_NO_BUILD:-0}" = 1 ] || make --no-print-directory BUILD="$HF_BUILD" "$HETFARM" >/dev/null
[ -x "$HETFARM" ] || { echo "dispatch.sh: $HETFARM was not built" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A private copy of the bench config with this measurement's scheduler, size and workers.
make_config() { # scheduler -> path
    local cfg=$tmp/noop-$1.ini
    # shellcheck disable=SC2086  # HF_SET is a list of section.key=value words
    python3 bench/ini_set.py bench/configs/noop-dispatch.ini "$cfg" run.scheduler="$1" \
        run.rounds="$ROUNDS" load.chunks="$TASKS" devices.cpu="$WORKERS" \
        devices.cpu_teams="$WORKERS" run.progress=no ${HF_SET:-}
    echo "$cfg"
}

for s in $SCHEDULERS; do make_config "$s" >/dev/null; done
for rep in $(seq 1 "$REPS"); do
    echo "== repetition $rep/$REPS ($TASKS chunks x $ROUNDS rounds, $WORKERS workers)"
    for s in $SCHEDULERS; do
        if ! "$HETFARM" run "$tmp/noop-$s.ini" -o "$tmp/hf-$s-$rep.json" \
            --profiles "$tmp/profiles" >"$tmp/hf-$s-$rep.log" 2>&1; then
            echo "dispatch.sh: hetfarm run ($s) failed:" >&2
            tail -n 20 "$tmp/hf-$s-$rep.log" >&2
            exit 1
        fi
        echo "   hetfarm $s done"
    done
    for p in eager ws; do
        "$STARPU_NOOP" --policy "$p" --workers "$WORKERS" --tasks "$TASKS" --reps $((ROUNDS - 1)) \
            >"$tmp/sp-$p-$rep.json"
        us=$(sed -n 's/.*"us_per_task": \([0-9.]*\).*/\1/p' "$tmp/sp-$p-$rep.json")
        echo "   starpu $p: $us us/task"
    done
done

mkdir -p "$(dirname "$OUT")"
python3 bench/dispatch_report.py --dir "$tmp" --reps "$REPS" --tasks "$TASKS" \
    --workers "$WORKERS" --rounds "$ROUNDS" --schedulers "$SCHEDULERS" --out "$OUT" \
    --starpu-version "$(pkg-config --modversion starpu-1.3)" --hf-set "${HF_SET:-}"
