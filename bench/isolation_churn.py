#!/usr/bin/env python3
"""One uid's connect/close churn against another uid's new connections (BENCHMARKS.md, "Isolation").

The isolation review's F2 (docs/reviews/2026-12-02-isolation.md) as a benchmark: CHURNERS processes of uid 65534 loop
connect(); close() on the service's socket for RUN_SECONDS (never holding more than one connection each, so
maxConnectionsPerUID never applies); meanwhile uid 1000 opens a fresh non-blocking connection every 20 ms (waiting
at most 2 s for it, as event-loop clients do) and calls GetInfo on it. Each round runs a fresh system-mode daemon with
the churn and one without (the idle baseline), interleaved. Prints the victim's failed connections (EAGAIN: the
listen backlog full) and its connect + GetInfo p50/p99, and the churners' connections a second, then the medians.
Expects a release build (BUILD=.build/release) and root.
"""
import json
import os
import shutil
import statistics
import subprocess
import time

from isolation_flood import as_user, client_directory

BUILD = os.environ.get("BUILD", ".build/release")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
SECONDS = float(os.environ.get("RUN_SECONDS", "6"))
CHURNERS = int(os.environ.get("CHURNERS", "2"))

CHURNER = r'''
import socket, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
count = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        count += 1
    except OSError:
        pass
    s.close()
print(count)
'''

VICTIM = r'''
import errno, json, select, socket, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
request = json.dumps({"method": "io.smartstack.Admin.GetInfo", "parameters": {}}).encode() + b"\0"
failed, latencies = 0, []
end = time.monotonic() + seconds
while time.monotonic() < end:
    started = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        try:
            s.connect(path)
        except BlockingIOError:
            # A Unix socket's non-blocking connect fails with EAGAIN when the backlog is full: retried until 2 s.
            while True:
                if time.monotonic() - started > 2:
                    raise TimeoutError()
                time.sleep(0.005)
                try:
                    s.connect(path)
                    break
                except BlockingIOError:
                    continue
        s.setblocking(True)
        s.settimeout(2)
        s.sendall(request)
        buffer = b""
        while b"\0" not in buffer:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise ConnectionError()
            buffer += chunk
        latencies.append(time.monotonic() - started)
    except (OSError, TimeoutError, ConnectionError):
        failed += 1
    finally:
        s.close()
    time.sleep(0.02)
print(json.dumps({"failed": failed, "latencies": latencies}))
'''


def run(work, churn):
    state = os.path.join(work, "state")
    path = os.path.join(work, "sock")
    daemon = subprocess.Popen(
        [os.path.join(BUILD, "smartstackd"), "--system", "--listen", path, "--state", state, "--config", "/dev/null"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            if os.path.exists(path):
                break
            time.sleep(0.025)
        churners = [as_user(65534, os.path.join(work, "churner.py"), path, SECONDS) for _ in range(CHURNERS if churn else 0)]
        time.sleep(0.2 if churn else 0)
        victim = as_user(1000, os.path.join(work, "victim.py"), path, SECONDS - 0.5)
        result = json.loads(victim.communicate()[0])
        connects = sum(int(c.communicate()[0]) for c in churners)
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(state, ignore_errors=True)
    latencies = sorted(result["latencies"]) or [float("nan")]
    ms = lambda q: 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    total = result["failed"] + len(result["latencies"])
    return {"failed": result["failed"], "total": total, "p50": ms(0.5), "p99": ms(0.99),
            "churn": connects / SECONDS}


def main():
    work = client_directory("smartstack-churn-", {"churner.py": CHURNER, "victim.py": VICTIM})
    try:
        results = {True: [], False: []}
        for round_ in range(ROUNDS):
            for churn in (True, False):
                r = run(work, churn)
                results[churn].append(r)
                print(f"round {round_ + 1} {'churn' if churn else 'idle'}: victim {r['failed']} of {r['total']} "
                      f"connections failed, connect + GetInfo p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms; "
                      f"churners {r['churn']:.0f} connections/s", flush=True)
        print(f"\nmedians of {ROUNDS} rounds, {CHURNERS} churners for {SECONDS:.0f} s:")
        for churn in (True, False):
            runs = results[churn]
            med = lambda key: statistics.median(r[key] for r in runs)
            print(f"  {'churn' if churn else 'idle'}: victim failed {med('failed'):.0f} of {med('total'):.0f}, "
                  f"p50 {med('p50'):.2f} ms, p99 {med('p99'):.2f} ms; churners {med('churn'):.0f} connections/s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
