# bench/common.sh - sourced by the shell benches (from the repository root): where a result
# goes and the command that produced it (bench/machine.py says how both are chosen).
#
#   . bench/common.sh
#   bench_record bench/dispatch.sh "$@"     # before the script applies its defaults
#   OUT=${OUT:-$(bench_out dispatch)}

# Exports HF_BENCH_COMMAND (unless set already): the knobs of $BENCH_KNOBS that are set in the
# environment, then the script and its arguments, so that a result says how to reproduce it.
bench_record() {
    [ -n "${HF_BENCH_COMMAND:-}" ] && return 0
    local cmd="" v
    for v in ${BENCH_KNOBS:-}; do
        if [ -n "${!v+x}" ]; then cmd+="$v=$(printf '%q' "${!v}") "; fi
    done
    cmd+=$(printf '%q ' "$@")
    export HF_BENCH_COMMAND="${cmd% }"
}

# Prints bench/results/<machine kind>/NAME.json.
bench_out() {
    python3 bench/machine.py path "$1"
}
