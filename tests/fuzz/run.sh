#!/usr/bin/env bash
# run.sh SECONDS HARNESS... - runs each libFuzzer harness for SECONDS (make fuzz).
#
# A harness build/fuzz/fuzz/fuzz_NAME fuzzes a working corpus build/fuzz/corpus/fuzz_NAME,
# seeded from its regression inputs (tests/fuzz/corpus/fuzz_NAME/) and from the files and
# directories on the "seeds:" line at the top of tests/fuzz/fuzz_NAME.c. A crash leaves its
# input in build/fuzz/crashes/fuzz_NAME/: fix the bug, then copy the input into
# tests/fuzz/corpus/fuzz_NAME/ so that every `make test` replays it. Exits non-zero if any
# harness crashed. With SECONDS = 0 each harness only replays its regression inputs and seeds.
# FUZZ_JOBS (default 1) harnesses run at once; FUZZ_LOG_DIR keeps each one's log.
set -u
cd "$(dirname "$0")/../.."
secs=$1
shift
logdir=${FUZZ_LOG_DIR:-build/fuzz/logs}
mkdir -p "$logdir"
one() {
    bin=$1
    name=$(basename "$bin")
    work=build/fuzz/corpus/$name
    crashes=build/fuzz/crashes/$name
    mkdir -p "$work" "$crashes" "tests/fuzz/corpus/$name"
    seeds=$(sed -n 's/^ \* seeds: //p' "tests/fuzz/$name.c" | head -n1)
    for s in $seeds "tests/fuzz/corpus/$name"; do
        if [ -d "$s" ]; then find "$s" -maxdepth 1 -type f -exec cp -f {} "$work/" \; ;
        elif [ -f "$s" ]; then cp -f "$s" "$work/"; fi
    done
    log=$logdir/$name.log
    if [ "$secs" = 0 ]; then
        "$bin" -runs=0 "$work" >"$log" 2>&1
    else
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$crashes/" "$work" >"$log" 2>&1
    fi
    rc=$?
    stats=$(grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' ')
    cov=$(grep -E '^#[0-9]+' "$log" | tail -n1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [^ ]+).*/\1/')
    if [ $rc = 0 ]; then echo "$name: ok $stats $cov"
    else echo "$name: CRASHED (exit $rc), see $log and $crashes/"; tail -n 30 "$log"; fi
    return $rc
}
fail=0
jobs=${FUZZ_JOBS:-1}
pids=()
for bin in "$@"; do
    one "$bin" & pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
