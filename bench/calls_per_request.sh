#!/usr/bin/env bash
# Counts what the event loop calls per request: malloc, free, swift_retain and swift_release, through uprobes
# (perf probe), per call the dispatcher handles (ServiceDispatcher.handleImmediately). Unlike time, these counts do
# not move with the machine's load, so they tell two builds apart where the socket benchmark cannot (BENCHMARKS.md,
# thirteenth session). Needs root and Debian's linux-perf; a uprobe costs microseconds per hit, so the rates here are
# far below the real ones and batches differ (at 50 x 1 a commit then holds more donations).
#   bench/calls_per_request.sh BINARY [donate|getstack] [CLIENTS] [WINDOW] [SECONDS]
set -eu
binary=$(readlink -f "$1"); method=${2:-donate}; clients=${3:-50}; window=${4:-1}; seconds=${5:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
load=${LOAD:-$here/.build/release/smartstack-load}
core=/opt/swift/usr/lib/swift/linux/libswiftCore.so
[ -e "$core" ] || core=$(ldd "$binary" | awk '/libswiftCore.so/ {print $3}')
libc=$(ldd "$binary" | awk '/libc.so.6/ {print $3}')
symbol=$(nm "$binary" | awk '/ T .*ServiceDispatcherV17handleImmediately_4peer.*PeerCredentialsVtF$/ {print $3}' | head -1)
[ -n "$symbol" ] || { echo "no ServiceDispatcher.handleImmediately in $binary" >&2; exit 1; }
work=$(mktemp -d /tmp/calls-XXXXXX)
group=ssbench$$
cleanup() {
    [ -n "${server:-}" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    perf probe -q -d "$group:*" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
perf probe -q -x "$libc" -a "$group:malloc=malloc" -a "$group:free=free"
perf probe -q -x "$core" -a "$group:retain=swift_retain" -a "$group:release=swift_release"
perf probe -q -x "$binary" -a "$group:call=$symbol"
mkdir -p "$work/d"
"$binary" --listen "$work/d/sock" --state "$work/d/state" >/dev/null 2>&1 &
server=$!
for _ in $(seq 400); do [ -S "$work/d/sock" ] && break; sleep 0.025; done
"$load" --socket "$work/d/sock" --method "$method" --clients "$clients" --window "$window" \
    --seconds $((seconds + 3)) --warmup 1 --json >"$work/load" &
client=$!
sleep 1.5
perf stat -e "$group:malloc,$group:free,$group:retain,$group:release,$group:call" --per-thread -p "$server" -x, \
    -o "$work/stat" sleep "$seconds"
wait "$client"
python3 - "$work/stat" "$group" "$method $clients x $window" <<'PY'
import collections, sys
path, group, label = sys.argv[1:]
threads = collections.defaultdict(dict)
for line in open(path):
    fields = line.strip().split(",")
    if len(fields) < 4 or not fields[1].isdigit():
        continue
    threads[fields[0]][fields[3].split(":")[-1]] = int(fields[1])
calls = sum(counts.get("call", 0) for counts in threads.values())
loop = max(threads.items(), key=lambda item: item[1].get("call", 0))
print(f"{label}: {calls} calls counted; per call on the event loop ({loop[0]}):")
for event in ("malloc", "free", "retain", "release"):
    print(f"  {event:8} {loop[1].get(event, 0) / max(calls, 1):8.2f}")
PY
