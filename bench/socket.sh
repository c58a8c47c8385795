#!/usr/bin/env bash
# The side-by-side socket benchmark (make bench-socket; BENCHMARKS.md): Redis 7 (AOF everysec, Unix socket) and
# smartstackd (its durable default), each driven by the same epoll client, smartstack-load, speaking RESP to Redis
# and Varlink to smartstackd. Every measure runs ROUNDS times, Redis and smartstackd interleaved, each run against a
# freshly started server; the table gives the medians and the ratios. Expects a release build.
#   ROUNDS (3), RUN_SECONDS per run (5), PIN=1 pins the client to CPU 0 and the server to CPU 1, JSON=FILE keeps the runs.
# Besides the rates, each run records the server's CPU time over the measured part (/proc), and the table gives the
# server's CPU per call: on a shared machine it moves far less than the rates do.
set -euo pipefail
BUILD=${BUILD:-.build/release}
ROUNDS=${ROUNDS:-3}
# Not SECONDS: bash sets that itself (seconds since the shell started), so a default behind it was 0 s.
SECONDS_PER_RUN=${RUN_SECONDS:-5}
PIN=${PIN:-0}
work=$(mktemp -d /tmp/smartstack-bench-socket-XXXXXX)
server=""
cleanup() {
    if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

client_pin="" server_pin=""
if [ "$PIN" = 1 ]; then client_pin="taskset -c 0"; server_pin="taskset -c 1"; fi

wait_socket() {  # $1: path, $2: log
    for _ in $(seq 400); do [ -S "$1" ] && return; sleep 0.025; done
    echo "the server did not start: $(cat "$2")" >&2
    exit 1
}

start_redis() {
    rm -rf "$work/r"; mkdir -p "$work/r"
    $server_pin redis-server --port 0 --unixsocket "$work/r/sock" --unixsocketperm 700 --dir "$work/r" \
        --appendonly yes --appendfsync everysec --save '' --daemonize no >"$work/r/log" 2>&1 &
    server=$!
    wait_socket "$work/r/sock" "$work/r/log"
}

start_smartstackd() {
    rm -rf "$work/d"; mkdir -p "$work/d"
    $server_pin "$BUILD/smartstackd" --listen "$work/d/sock" --state "$work/d/state" >"$work/d/log" 2>&1 &
    server=$!
    wait_socket "$work/d/sock" "$work/d/log"
}

stop_server() {
    kill -TERM "$server"
    wait "$server" || true
    server=""
}

# name | Redis method | smartstackd method | clients | window | subscribers
measures=(
    "durable write, 50 × 1|zadd|donate|50|1|0"
    "durable write, 50 × 64|zadd|donate|50|64|0"
    "read top 10, 50 × 1|zrevrange|getstack|50|1|0"
    "read top 10, 50 × 64|zrevrange|getstack|50|64|0"
    "read, 1 client|zrevrange|getstack|1|1|0"
    "mixed 90/9/1, 50 × 64, 100 subscribers|-|mixed|50|64|100"
)

# A process's user + system CPU time in clock ticks (/proc/PID/stat fields 14 and 15), and seconds between two.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_second=$(getconf CLK_TCK)
cpu_seconds() { awk -v a="$1" -v b="$2" -v hz="$ticks_per_second" 'BEGIN { printf "%.3f", (b - a) / hz }'; }

results="$work/runs.jsonl"
: >"$results"
run() {  # $1: server (redis|smartstackd), $2: measure name, $3: method, $4: clients, $5: window, $6: subscribers
    local socket line
    if [ "$1" = redis ]; then start_redis; socket="$work/r/sock"; else start_smartstackd; socket="$work/d/sock"; fi
    # The server's CPU time (all its threads) over the measured part: from the end of the client's 1 s warm-up
    # to the end of its run.
    $client_pin "$BUILD/smartstack-load" --socket "$socket" --method "$3" --clients "$4" --window "$5" \
        --subscribers "$6" --seconds "$SECONDS_PER_RUN" --warmup 1 --json >"$work/line" &
    local load=$! before after
    sleep 1
    before=$(cpu_ticks "$server")
    wait "$load"
    after=$(cpu_ticks "$server")
    line=$(cat "$work/line")
    stop_server
    echo "{\"server\":\"$1\",\"measure\":\"$2\",\"cpuSeconds\":$(cpu_seconds "$before" "$after"),\"run\":$line}" \
        >>"$results"
    echo "  $1 $2: $line" >&2
}

echo "== smartstackd $(git rev-parse --short HEAD 2>/dev/null || echo '?') vs $(redis-server --version | cut -d' ' -f1-3)," \
    "$ROUNDS interleaved rounds of $SECONDS_PER_RUN s, pinned: $PIN" >&2
for round in $(seq "$ROUNDS"); do
    echo "round $round" >&2
    for measure in "${measures[@]}"; do
        IFS='|' read -r name redis_method smartstack_method clients window subscribers <<<"$measure"
        if [ "$redis_method" != - ]; then run redis "$name" "$redis_method" "$clients" "$window" 0; fi
        run smartstackd "$name" "$smartstack_method" "$clients" "$window" "$subscribers"
    done
done
if [ -n "${JSON:-}" ]; then cp "$results" "$JSON"; fi
python3 bench/socket_table.py "$results" "$SECONDS_PER_RUN"
