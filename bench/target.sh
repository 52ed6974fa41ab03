# bench/target.sh: sourced by the bench scripts. Each target is printed where it
# is measured and, when bench/run.sh set BENCH_TARGETS, kept there as one
# tab-separated row (name, ours, peer, unit, ratio, bound, met) for the table
# summarize.py prints at the end of `make bench`.

# bench_target NAME OURS PEER UNIT BOUND: the ratio OURS/PEER must be at most BOUND.
bench_target() {
    _bench_row "$1" "$2" "$3" "$4" "$(awk -v o="$2" -v p="$3" 'BEGIN { if (p > 0) printf "%.3f", o / p; else print "-" }')" "<= $5" \
        "$(awk -v o="$2" -v p="$3" -v b="$5" 'BEGIN { print (p > 0 && o / p <= b) ? "met" : "MISSED" }')"
}

# bench_target_at_least NAME OURS PEER UNIT BOUND: the ratio OURS/PEER must be at least BOUND.
bench_target_at_least() {
    _bench_row "$1" "$2" "$3" "$4" "$(awk -v o="$2" -v p="$3" 'BEGIN { if (p > 0) printf "%.3f", o / p; else print "-" }')" ">= $5" \
        "$(awk -v o="$2" -v p="$3" -v b="$5" 'BEGIN { print (p > 0 && o / p >= b) ? "met" : "MISSED" }')"
}

# bench_bound NAME OURS UNIT BOUND: an absolute bound (no peer): OURS at most BOUND.
bench_bound() {
    _bench_row "$1" "$2" "-" "$3" "-" "<= $4 $3" "$(awk -v o="$2" -v b="$4" 'BEGIN { print (o <= b) ? "met" : "MISSED" }')"
}

# bench_bound_beside NAME OURS REFERENCE UNIT BOUND: an absolute bound, OURS at most
# BOUND, with a reference figure measured in the same run in the peer column (no ratio).
bench_bound_beside() {
    _bench_row "$1" "$2" "$3" "$4" "-" "<= $5 $4" "$(awk -v o="$2" -v b="$5" 'BEGIN { print (o <= b) ? "met" : "MISSED" }')"
}

_bench_row() { # name ours peer unit ratio bound met
    printf 'target: %s: ours %s %s, peer %s, ratio %s (target %s): %s\n' "$1" "$2" "$4" "$3" "$5" "$6" "$7"
    if [[ -n ${BENCH_TARGETS:-} ]]; then printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$BENCH_TARGETS"; fi
}
