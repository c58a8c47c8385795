"""The soak's parts that are not the soak itself: the daemon it kills and restarts, a raw Varlink connection, the
GetStack probe (probe.py, a process of its own) and small measures."""
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")


def probe_latencies(path, stacks, seconds=None):
    """Runs the probe for `seconds` (or returns the process to stop later). It writes its samples to a file: a
    pipe nobody reads until the end would fill after a few thousand samples and stop the probe there."""
    samples = tempfile.NamedTemporaryFile(prefix="smartstack-probe-", suffix=".txt", delete=False)
    samples.close()
    process = subprocess.Popen([sys.executable, PROBE, path, ",".join(stacks), samples.name])
    process.samples_path = samples.name
    if seconds is None:
        return process
    time.sleep(seconds)
    return stop_probe(process)


def stop_probe(process):
    """Stops the probe; returns its samples as (latency in seconds, monotonic time when it finished)."""
    process.terminate()
    process.wait(timeout=10)
    with open(process.samples_path) as samples:
        rows = [line.split() for line in samples if line.strip()]
    os.unlink(process.samples_path)
    return [(float(row[0]), float(row[1])) for row in rows if len(row) == 2]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Daemon:
    def __init__(self, binary, directory, pin=()):
        self.binary = binary
        self.pin = list(pin)
        self.directory = directory
        self.socket = os.path.join(directory, "sock")
        self.config = os.path.join(directory, "smartstackd.conf")
        with open(self.config, "w") as file:
            file.write("maxConnections = 4096\nsubscriberQueue = 32\nmaxSubscriptions = 4096\n")
        self.process = None
        self.lives = 0

    def start(self):
        log = open(os.path.join(self.directory, f"daemon{self.lives}.log"), "w")
        self.process = subprocess.Popen(
            [*self.pin, self.binary, "--listen", self.socket, "--state", os.path.join(self.directory, "state"),
             "--config", self.config], stdout=log, stderr=log)
        self.lives += 1
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"smartstackd exited with {self.process.returncode}")
            try:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(self.socket)
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("smartstackd did not start")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()


class Connection:
    """One Varlink connection with asyncio streams (raw framing, so this client shares no code with the server)."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, path):
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 22)
        return cls(reader, writer)

    async def call(self, method, parameters=None, more=False):
        message = {"method": method, "parameters": parameters or {}}
        if more:
            message["more"] = True
        self.writer.write(json.dumps(message).encode() + b"\0")
        await self.writer.drain()
        return await self.next()

    async def next(self):
        frame = await self.reader.readuntil(b"\0")
        return json.loads(frame[:-1])

    def close(self):
        self.writer.close()
