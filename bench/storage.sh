#!/usr/bin/env bash
# Storage benchmarks (README "Storage benchmark"): the store alone, acknowledged donations over the socket with
# smartstack-load, and start-up to serving with 1,000,000 stored donations. Expects a release build.
set -euo pipefail
BUILD=${BUILD:-.build/release}
RUNS=${RUNS:-3}
DONATIONS=${DONATIONS:-1000000}
work=$(mktemp -d /tmp/smartstack-bench-XXXXXX)
daemon=""
cleanup() {
    if [ -n "$daemon" ]; then kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Not pinned: the daemon runs two busy threads (the event loop and the SQLite writer), and pinning it to one core
# of two makes them wait for each other (a lone call's p99 went from ~0.3 ms to ~3 ms pinned).
start_daemon() {  # $1: taskset prefix (may be empty)
    rm -rf "$work/d"
    mkdir -p "$work/d"
    $1 "$BUILD/smartstackd" --listen "$work/d/sock" --state "$work/d/state" >"$work/d/log" 2>&1 &
    daemon=$!
    for _ in $(seq 200); do [ -S "$work/d/sock" ] && return; sleep 0.05; done
    echo "smartstackd did not start: $(cat "$work/d/log")" >&2
    exit 1
}

stop_daemon() {
    kill -TERM "$daemon"
    wait "$daemon" || true
    daemon=""
}

echo "== the store alone (no socket)"
for run in $(seq "$RUNS"); do
    "$BUILD/smartstack-store-bench" store --seconds 3 --clients 50
    "$BUILD/smartstack-store-bench" batch --seconds 3 --clients 50
done
"$BUILD/smartstack-store-bench" store --seconds 3 --clients 1
"$BUILD/smartstack-store-bench" store --seconds 3 --clients 50 --durability power

echo "== acknowledged durable donations over the socket"
# Each configuration runs RUNS times against a fresh daemon; the median is printed after the runs.
socket_load() {  # $1: clients, $2: calls in flight per client
    local rates=()
    for run in $(seq "$RUNS"); do
        start_daemon ""
        line=$("$BUILD/smartstack-load" --socket "$work/d/sock" --clients "$1" --window "$2" --seconds 5)
        echo "$line"
        rates+=("$(echo "$line" | sed -E 's/.*: ([0-9]+) calls\/s.*/\1/')")
        stop_daemon
    done
    printf '%s\n' "${rates[@]}" | sort -n | awk -v c="$1" -v w="$2" \
        '{ v[NR] = $1 } END { printf "median of %d runs, %d clients, %d in flight each: %d acknowledged donations/s\n", NR, c, w, v[int((NR + 1) / 2)] }'
}
socket_load 50 1
socket_load 50 2
socket_load 50 4
socket_load 1 1

echo "== start-up to serving and resident memory with ${STACKS:-1000} stacks x 10 widgets and $DONATIONS stored donations"
"$BUILD/smartstack-store-bench" fill --state "$work/big" --donations "$DONATIONS" --stacks "${STACKS:-1000}"
"$BUILD/smartstack-store-bench" startup --daemon "$BUILD/smartstackd" --state "$work/big" --runs 5
