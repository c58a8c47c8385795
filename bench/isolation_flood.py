#!/usr/bin/env python3
"""One uid's write flood against another uid's reads (make bench-isolation; BENCHMARKS.md, "Isolation").

The isolation review's F1 (docs/reviews/2026-12-02-isolation.md) as a benchmark: uid 65534 opens APPS connections,
each donating for an app of its own (each claims it) with DEPTH calls in flight, for RUN_SECONDS; meanwhile uid 1000
calls GetStack one at a time on its own connection. Each round runs twice against fresh system-mode daemons,
interleaved: with the default rateLimitPerUID, with it off (0), so the two differ only in the per-uid limit, and
with no attacker at all (the victim's idle baseline in the same run).
Prints per run the victim's GetStack p50/p99/max and calls, and the attacker's accepted and refused calls a second,
then the medians. Expects a release build (BUILD=.build/release) and root (setpriv to the two uids).
"""
import json
import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("BUILD", ".build/release")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
SECONDS = float(os.environ.get("RUN_SECONDS", "6"))
APPS = int(os.environ.get("APPS", "64"))
DEPTH = int(os.environ.get("DEPTH", "64"))
PROVIDER = "io.smartstack.Provider"
SHELL = "io.smartstack.Shell"

ATTACKER = r'''
import json, select, socket, sys, time
path, apps, depth, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
conns = []
for index in range(apps):
    # One at a time, each answered once before the next: a burst of more than maxPendingConnectionsPerUID (32)
    # connections waiting to be set up has the rest closed on accept.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(json.dumps({"method": "io.smartstack.Admin.GetInfo", "parameters": {}}).encode() + b"\0")
    answer = b""
    while b"\0" not in answer:
        answer += s.recv(1 << 16)
    s.setblocking(False)
    conns.append([s, f"org.flood.a{index}", 0, b""])
def frame(app, n):
    return json.dumps({"method": "io.smartstack.Provider.Donate",
                       "parameters": {"app": app, "intent": "open", "id": f"{app}-{n}"}}).encode() + b"\0"
ok = refused = other = 0
sent = {}
for c in conns:
    c[0].sendall(b"".join(frame(c[1], c[2] + i) for i in range(depth)))
    c[2] += depth
    sent[c[0].fileno()] = c
end = time.monotonic() + seconds
while time.monotonic() < end:
    readable, _, _ = select.select([c[0] for c in conns], [], [], 0.1)
    for s in readable:
        c = sent[s.fileno()]
        data = s.recv(1 << 20)
        if not data:
            raise SystemExit("the service closed the attacker's connection")
        c[3] += data
        *replies, c[3] = c[3].split(b"\0")
        for raw in replies:
            reply = json.loads(raw)
            if "error" not in reply:
                ok += 1
            elif reply["error"].endswith("RateLimited"):
                refused += 1
            else:
                other += 1
        if replies:
            try:
                s.sendall(b"".join(frame(c[1], c[2] + i) for i in range(len(replies))))
            except BlockingIOError:
                pass
            c[2] += len(replies)
print(json.dumps({"ok": ok, "refused": refused, "other": other}))
'''

VICTIM = r'''
import json, socket, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
request = json.dumps({"method": "io.smartstack.Shell.GetStack", "parameters": {"stack": "home"}}).encode() + b"\0"
latencies = []
end = time.monotonic() + seconds
buffer = b""
while time.monotonic() < end:
    started = time.monotonic()
    s.sendall(request)
    while b"\0" not in buffer:
        buffer += s.recv(1 << 16)
    raw, buffer = buffer.split(b"\0", 1)
    latencies.append(time.monotonic() - started)
    assert "error" not in json.loads(raw), raw
    time.sleep(0.01)
print(json.dumps(latencies))
'''


def call(path, method, **parameters):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        buffer = b""
        while b"\0" not in buffer:
            buffer += s.recv(1 << 16)
    reply = json.loads(buffer.split(b"\0")[0])
    if "error" in reply:
        raise SystemExit(f"{method}: {reply}")
    return reply["parameters"]


def as_user(uid, script, *arguments):
    return subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, script, *map(str, arguments)],
        stdout=subprocess.PIPE, text=True)


def run(work, per_uid, flood=True):
    state = os.path.join(work, f"state-{per_uid}")
    path = os.path.join(work, f"sock-{per_uid}")
    config = os.path.join(work, f"config-{per_uid}")
    with open(config, "w") as f:
        f.write(f"providers = *\nrateLimitPerUID = {per_uid}\n")
    os.chmod(config, 0o644)
    daemon = subprocess.Popen(
        [os.path.join(BUILD, "smartstackd"), "--system", "--listen", path, "--state", state, "--config", config],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            if os.path.exists(path):
                break
            time.sleep(0.025)
        for app in ("mail", "news", "maps"):
            call(path, PROVIDER + ".RegisterWidget", app=f"org.calm.{app}", kind="main", families=["systemMedium"])
        call(path, SHELL + ".ConfigureStack", stack="home", family="systemMedium",
             widgets=[{"instance": app, "app": f"org.calm.{app}", "kind": "main"} for app in ("mail", "news", "maps")])
        victim = as_user(1000, os.path.join(work, "victim.py"), path, SECONDS)
        attacker = as_user(65534, os.path.join(work, "attacker.py"), path, APPS, DEPTH, SECONDS) if flood else None
        latencies = json.loads(victim.communicate()[0])
        flooded = json.loads(attacker.communicate()[0]) if attacker else {"ok": 0, "refused": 0, "other": 0}
        if victim.returncode or (attacker and attacker.returncode):
            raise SystemExit("a client failed")
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(state, ignore_errors=True)
    latencies.sort()
    ms = lambda q: 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    return {"p50": ms(0.5), "p99": ms(0.99), "max": 1000 * latencies[-1], "calls": len(latencies),
            "ok": flooded["ok"] / SECONDS, "refused": flooded["refused"] / SECONDS, "other": flooded["other"]}


def client_directory(prefix, clients):
    """A world-readable temporary directory holding the client scripts (name: text) the other uids run; as root."""
    if os.geteuid() != 0:
        raise SystemExit("run as root (the clients run as uid 65534 and 1000 through setpriv)")
    work = tempfile.mkdtemp(prefix=prefix)
    os.chmod(work, 0o755)
    for name, text in clients.items():
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(work, name), 0o644)
    return work


def main():
    work = client_directory("smartstack-isolation-", {"attacker.py": ATTACKER, "victim.py": VICTIM})
    try:
        modes = (("limit", 2000, True), ("off", 0, True), ("idle", 2000, False))
        results = {mode: [] for mode, _, _ in modes}
        for round_ in range(ROUNDS):
            for mode, per_uid, flood in modes:
                result = run(work, per_uid, flood)
                results[mode].append(result)
                print(f"round {round_ + 1} {mode} (rateLimitPerUID={per_uid}): victim GetStack p50 {result['p50']:.2f} ms, "
                      f"p99 {result['p99']:.2f} ms, max {result['max']:.1f} ms ({result['calls']} calls); "
                      f"attacker {result['ok']:.0f} donations/s taken, {result['refused']:.0f}/s refused",
                      flush=True)
        print(f"\nmedians of {ROUNDS} rounds, {APPS} apps x {DEPTH} in flight for {SECONDS:.0f} s:")
        labels = (("limit", "flood, rateLimitPerUID = 2000 (default)"), ("off", "flood, rateLimitPerUID = 0 (off)"),
                  ("idle", "no flood (idle baseline)"))
        for mode, label in labels:
            runs = results[mode]
            med = lambda key: statistics.median(r[key] for r in runs)
            print(f"  {label}: victim p50 {med('p50'):.2f} ms, p99 {med('p99'):.2f} ms, max {med('max'):.1f} ms; "
                  f"attacker taken {med('ok'):.0f}/s, refused {med('refused'):.0f}/s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
