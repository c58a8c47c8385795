"""Prints bench/socket.sh's table: medians of the rounds per measure and server, and smartstackd / Redis."""
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1])]
measures = list(dict.fromkeys(run["measure"] for run in runs))


def median(measure, server, key):
    values = [run["run"][key] for run in runs if run["measure"] == measure and run["server"] == server]
    return statistics.median(values) if values else None


print("| measure | Redis | smartstackd | ratio |")
print("|---|---|---|---|")
for measure in measures:
    if measure.startswith("read, 1 client"):
        redis, ours = median(measure, "redis", "p50Micros"), median(measure, "smartstackd", "p50Micros")
        ratio = f"{ours / redis:.2f}×" if redis else "—"
        print(f"| {measure}, p50 | {redis:.0f} µs | {ours:.0f} µs | {ratio} |")
        continue
    redis, ours = median(measure, "redis", "callsPerSecond"), median(measure, "smartstackd", "callsPerSecond")
    redis_text = f"{redis:,.0f}/s" if redis is not None else "—"
    ratio = f"{ours / redis:.2f}" if redis else "—"
    extra = ""
    pushed = median(measure, "smartstackd", "pushed")
    if pushed:
        extra = f" ({pushed:,.0f} decisions pushed)"
    print(f"| {measure} | {redis_text} | {ours:,.0f}/s{extra} | {ratio} |")
errors = sum(run["run"]["errors"] for run in runs)
print(f"\n{len(runs)} runs, {errors} error replies; p99 (median of rounds):")
for measure in measures:
    for server in ("redis", "smartstackd"):
        p99 = median(measure, server, "p99Micros")
        if p99 is not None:
            print(f"  {measure} — {server}: p50 {median(measure, server, 'p50Micros'):.0f} µs, p99 {p99:.0f} µs")
