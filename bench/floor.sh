#!/usr/bin/env bash
# What swift-nio allows (make bench-floor; BENCHMARKS.md, twenty-third session): the two 50 × 1 measures of
# bench/socket.sh, each served three ways in interleaved rounds against fresh servers, all driven by smartstack-load:
#   - Redis 7 (AOF everysec, Unix socket): ZADD, ZREVRANGE 0 9;
#   - smartstack-nio-floor, a swift-nio server that does no work per call: for the write, every reply waits for an
#     empty commit on a second thread (--mode hop, the shape of a durable Donate); for the read, each reply is
#     written in the turn that read the call, padded to the size of a GetStack reply of ten widgets (2,399 bytes);
#   - smartstackd (its durable default): Donate, GetStack.
# Prints the medians, each against Redis, smartstackd against the floor, and each server's CPU per call.
#   ROUNDS (3), RUN_SECONDS per run (4). Expects a release build with smartstack-nio-floor.
set -euo pipefail
BUILD=${BUILD:-.build/release}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${RUN_SECONDS:-4}
work=$(mktemp -d /tmp/smartstack-bench-floor-XXXXXX)
server=""
cleanup() {
    if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

start() {  # $1: server (redis|floor|smartstackd), $2: floor's extra arguments
    rm -rf "$work/s"; mkdir -p "$work/s"
    case $1 in
    redis) redis-server --port 0 --unixsocket "$work/s/sock" --unixsocketperm 700 --dir "$work/s" \
        --appendonly yes --appendfsync everysec --save '' --daemonize no >"$work/s/log" 2>&1 & ;;
    floor) # shellcheck disable=SC2086
        "$BUILD/smartstack-nio-floor" --listen "$work/s/sock" $2 >"$work/s/log" 2>&1 & ;;
    smartstackd) "$BUILD/smartstackd" --listen "$work/s/sock" --state "$work/s/state" >"$work/s/log" 2>&1 & ;;
    esac
    server=$!
    for _ in $(seq 400); do [ -S "$work/s/sock" ] && return; sleep 0.025; done
    echo "$1 did not start: $(cat "$work/s/log")" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
results="$work/runs.tsv"
: >"$results"
run() {  # $1: measure, $2: server, $3: method, $4: floor's arguments
    start "$2" "${4:-}"
    "$BUILD/smartstack-load" --socket "$work/s/sock" --method "$3" --clients 50 --window 1 \
        --seconds "$SECONDS_PER_RUN" --warmup 1 --json >"$work/line" &
    local load=$! before after
    sleep 1
    before=$(cpu_ticks "$server")
    wait "$load"
    after=$(cpu_ticks "$server")
    if ! kill -TERM "$server" 2>/dev/null; then echo "$2 had stopped during the run: $(cat "$work/s/log")" >&2; exit 1; fi
    wait "$server" || true; server=""
    local rate
    rate=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["callsPerSecond"])' "$work/line")
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$rate" "$((after - before))" >>"$results"
    echo "  $2 $1: $rate calls/s" >&2
}

for round in $(seq "$ROUNDS"); do
    echo "round $round" >&2
    run "durable write, 50 × 1" redis zadd
    run "durable write, 50 × 1" floor donate "--mode hop"
    run "durable write, 50 × 1" smartstackd donate
    run "read top 10, 50 × 1" redis zrevrange
    run "read top 10, 50 × 1" floor getstack "--mode echo --reply-bytes 2399"
    run "read top 10, 50 × 1" smartstackd getstack
done
python3 - "$results" "$SECONDS_PER_RUN" "$(getconf CLK_TCK)" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    measure, server, rate, ticks = line.rstrip("\n").split("\t")
    runs[measure, server].append((float(rate), int(ticks)))
seconds, hz = float(sys.argv[2]), float(sys.argv[3])
def median(measure, server): return statistics.median(rate for rate, _ in runs[measure, server])
def cpu(measure, server):  # µs of server CPU per call, median over rounds
    return statistics.median(ticks / hz / (rate * seconds) * 1e6 for rate, ticks in runs[measure, server])
print("| measure | Redis | NIO floor | smartstackd | floor / Redis | smartstackd / Redis | smartstackd / floor "
      "| CPU per call: Redis / floor / smartstackd |")
print("|---|---|---|---|---|---|---|---|")
for measure in dict.fromkeys(m for m, _ in runs):
    r, f, s = (median(measure, x) for x in ("redis", "floor", "smartstackd"))
    print(f"| {measure} | {r:,.0f}/s | {f:,.0f}/s | {s:,.0f}/s | {f / r:.2f} | {s / r:.2f} | {s / f:.2f} "
          f"| {cpu(measure, 'redis'):.1f} / {cpu(measure, 'floor'):.1f} / {cpu(measure, 'smartstackd'):.1f} µs |")
EOF
