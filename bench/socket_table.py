"""Prints bench/socket.sh's table: medians of the rounds per measure and server, and smartstackd / Redis.

"ratio" divides the medians; "per round" is the median of each round's own ratio (smartstackd's run against the
Redis run just before it, so a disturbed round counts once instead of moving one side's median); the server's CPU
per call is the median of the runs' (its CPU time over the measured part / calls answered)."""
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1])]
# The measured seconds of each run (bench/socket.sh's RUN_SECONDS).
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
measures = list(dict.fromkeys(run["measure"] for run in runs))


def median(measure, server, key):
    values = [run["run"][key] for run in runs if run["measure"] == measure and run["server"] == server]
    return statistics.median(values) if values else None


def paired_ratio(measure, key):
    """The median over rounds of smartstackd's value / Redis's in the same round (runs pair up in order)."""
    redis = [run["run"][key] for run in runs if run["measure"] == measure and run["server"] == "redis"]
    ours = [run["run"][key] for run in runs if run["measure"] == measure and run["server"] == "smartstackd"]
    ratios = [o / r for r, o in zip(redis, ours) if r]
    return statistics.median(ratios) if ratios else None


def cpu_per_call(measure, server):
    """The server's CPU time per call answered, in µs: the median of the runs'."""
    values = [
        run["cpuSeconds"] * 1e6 / (run["run"]["callsPerSecond"] * SECONDS)
        for run in runs
        if run["measure"] == measure and run["server"] == server and "cpuSeconds" in run
        and run["run"]["callsPerSecond"] > 0
    ]
    return statistics.median(values) if values else None


def cpu_text(value):
    return f"{value:.2f} µs" if value is not None else "—"


print("| measure | Redis | smartstackd | ratio | per round | server CPU per call: Redis | smartstackd |")
print("|---|---|---|---|---|---|---|")
for measure in measures:
    cpu = f"{cpu_text(cpu_per_call(measure, 'redis'))} | {cpu_text(cpu_per_call(measure, 'smartstackd'))}"
    if measure.startswith("read, 1 client"):
        redis, ours = median(measure, "redis", "p50Micros"), median(measure, "smartstackd", "p50Micros")
        ratio = f"{ours / redis:.2f}×" if redis else "—"
        paired = paired_ratio(measure, "p50Micros")
        paired_text = f"{paired:.2f}×" if paired is not None else "—"
        print(f"| {measure}, p50 | {redis:.0f} µs | {ours:.0f} µs | {ratio} | {paired_text} | {cpu} |")
        continue
    redis, ours = median(measure, "redis", "callsPerSecond"), median(measure, "smartstackd", "callsPerSecond")
    redis_text = f"{redis:,.0f}/s" if redis is not None else "—"
    ratio = f"{ours / redis:.2f}" if redis else "—"
    paired = paired_ratio(measure, "callsPerSecond")
    paired_text = f"{paired:.2f}" if paired is not None else "—"
    extra = ""
    pushed = median(measure, "smartstackd", "pushed")
    if pushed:
        extra = f" ({pushed:,.0f} decisions pushed)"
    print(f"| {measure} | {redis_text} | {ours:,.0f}/s{extra} | {ratio} | {paired_text} | {cpu} |")
errors = sum(run["run"]["errors"] for run in runs)
print(f"\n{len(runs)} runs, {errors} error replies; p99 (median of rounds):")
for measure in measures:
    for server in ("redis", "smartstackd"):
        p99 = median(measure, server, "p99Micros")
        if p99 is not None:
            print(f"  {measure} — {server}: p50 {median(measure, server, 'p50Micros'):.0f} µs, p99 {p99:.0f} µs")
