#!/usr/bin/env python3
"""The daemon's memory under calls of one kind (BENCHMARKS.md, "Timer heap"): starts smartstackd with a fresh state
directory, sets up the soak's 10 apps and 20 stacks, then runs each phase given (METHOD:COUNT, or sleepSECONDS)
over one connection and prints the daemon's anonymous and file-backed resident memory after it.

    python3 bench/timeline_memory.py [--daemon .build/release/smartstackd] submit:20000 submit:20000 sleep70 ...

Methods: submit (SubmitTimeline, one entry dated a second ago lasting 60 s, as the soak's clients send), donate,
explain, get (GetStack)."""
import argparse, json, os, random, shutil, socket, subprocess, sys, tempfile, time

P, S = "io.smartstack.Provider.", "io.smartstack.Shell."
APPS = [f"org.soak.app{index}" for index in range(10)]
STACKS = [f"stack{index}" for index in range(20)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/smartstackd")
    parser.add_argument("phases", nargs="+")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="smartstack-memory-")
    path = os.path.join(work, "sock")
    daemon = subprocess.Popen([options.daemon, "--listen", path, "--state", os.path.join(work, "state")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            if os.path.exists(path):
                break
            time.sleep(0.025)
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(path)
        buffer = b""

        def call(method, parameters):
            nonlocal buffer
            connection.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
            while b"\0" not in buffer:
                chunk = connection.recv(1 << 20)
                if not chunk:
                    sys.exit("the daemon closed the connection")
                buffer += chunk
            reply, buffer = buffer.split(b"\0", 1)
            reply = json.loads(reply)
            if "error" in reply:
                sys.exit(f"{method}: {reply}")

        def resident():
            fields = {}
            with open(f"/proc/{daemon.pid}/status") as status:
                for line in status:
                    name, _, value = line.partition(":")
                    if name in ("RssAnon", "RssFile"):
                        fields[name] = int(value.split()[0]) / 1024
            return f"anonymous {fields['RssAnon']:.1f} MiB, file {fields['RssFile']:.1f} MiB"

        for app in APPS:
            call(P + "RegisterWidget", {"app": app, "kind": "main", "families": ["systemMedium"]})
        for index, stack in enumerate(STACKS):
            widgets = [{"instance": f"{stack}-{app}", "app": app, "kind": "main"}
                       for app in random.Random(index).sample(APPS, 5)]
            call(S + "ConfigureStack", {"stack": stack, "family": "systemMedium", "widgets": widgets})
        rng = random.Random(1)
        sequence = 0

        def one(method):
            nonlocal sequence
            if method == "submit":
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
                call(P + "SubmitTimeline", {"app": rng.choice(APPS), "kind": "main", "entries": [
                    {"date": stamp, "relevance": {"score": rng.random(), "duration": 60}}]})
            elif method == "donate":
                sequence += 1
                call(P + "Donate", {"app": rng.choice(APPS), "intent": "open", "id": f"m{sequence}"})
            elif method == "explain":
                call(S + "Explain", {"stack": rng.choice(STACKS)})
            elif method == "get":
                call(S + "GetStack", {"stack": rng.choice(STACKS)})
            else:
                sys.exit(f"unknown method {method}")

        print(f"start: {resident()}", flush=True)
        for phase in options.phases:
            if phase.startswith("sleep"):
                time.sleep(float(phase[5:]))
                print(f"{phase}: {resident()}", flush=True)
                continue
            method, count = phase.split(":")
            began = time.monotonic()
            for _ in range(int(count)):
                one(method)
            print(f"{phase} ({time.monotonic() - began:.1f} s): {resident()}", flush=True)
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
