"""Helpers for the storage tests: daemons restarted on one state directory, kill -9, raw-socket clients,
the database file and small filesystems mounted for a test."""
import contextlib
import datetime
import hashlib
import json
import os
import pathlib
import socket
import sqlite3
import subprocess
import tempfile
import time

from conftest import DAEMON, Daemon
from helpers import FrameReader

DATABASE = "smartstack.sqlite"


class StatefulDaemon:
    """Starts, stops and kills smartstackd on one directory (one socket, one state directory)."""

    def __init__(self, directory, config=None):
        self.directory = pathlib.Path(directory)
        self.config = config
        self.current = None
        self.starts = 0

    @property
    def database(self):
        return self.directory / "state" / DATABASE

    def start(self):
        self.starts += 1
        self.current = Daemon(self.directory, config=self.config)
        return self.current

    def stop(self):
        code = self.current.stop()
        assert code == 0, self.current.log()
        self.current = None

    def kill(self):
        """kill -9: no shutdown code runs."""
        self.current.kill()
        self.current = None

    def close(self):
        if self.current is not None:
            self.current.kill()


def start_failing(directory, state):
    """Runs smartstackd on a state directory it must refuse; returns (exit code, output)."""
    directory = pathlib.Path(directory)
    socket_path = directory / "refused.sock"
    result = subprocess.run(
        [str(DAEMON), "--listen", str(socket_path), "--state", str(state)],
        capture_output=True, text=True, timeout=30)
    return result.returncode, result.stdout + result.stderr


class RawClient:
    """One connection speaking Varlink directly (no client library), for load and crash tests."""

    def __init__(self, address_path, timeout=10.0):
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.settimeout(timeout)
        self.connection.connect(address_path)
        self.reader = FrameReader(self.connection)

    def call(self, method, **parameters):
        self.connection.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        return self.reader.next()

    def close(self):
        self.connection.close()


def list_donation_ids(client, app):
    """Every donation id of an app, paging through ListDonations with each reply's cursor."""
    ids = []
    cursor = None
    while True:
        parameters = {"app": app, "limit": 1000}
        if cursor is not None:
            parameters["cursor"] = cursor
        reply = client.call("io.smartstack.Provider.ListDonations", **parameters)
        assert "error" not in reply, reply
        page = [donation["id"] for donation in reply["parameters"]["donations"]]
        ids += page
        if len(page) < 1000:
            return ids
        cursor = reply["parameters"]["next"]


def integrity_check(path):
    """PRAGMA integrity_check on the database, read-only (it changes nothing, the WAL included)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute("PRAGMA integrity_check").fetchall()
    finally:
        connection.close()


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


@contextlib.contextmanager
def mounted_tmpfs(path, size, read_only=False):
    """A small tmpfs mounted at `path` for the test (root only), always unmounted afterwards."""
    os.makedirs(path, exist_ok=True)
    options = f"size={size},mode=0700" + (",ro" if read_only else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield pathlib.Path(path)
    finally:
        for _ in range(50):
            if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)


def can_mount():
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory(prefix="smartstack-mount-") as directory:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", directory],
                          capture_output=True).returncode != 0:
            return False
        subprocess.run(["umount", directory], capture_output=True)
    return True


def rfc3339(moment):
    return moment.astimezone().isoformat(timespec="milliseconds")


def at(seconds_from_now):
    return rfc3339(datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds_from_now))
