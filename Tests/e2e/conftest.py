"""Fixtures that start the real smartstackd binary on a temporary socket.

The binary is SMARTSTACKD (default: .build/debug/smartstackd); smartstackctl is SMARTSTACKCTL.
Every daemon a test starts is stopped with SIGTERM at the end and must exit 0 within 10 s.
"""
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SMARTSTACK_BUILD", ROOT / ".build" / "debug"))
DAEMON = pathlib.Path(os.environ.get("SMARTSTACKD", BUILD / "smartstackd"))
CTL = pathlib.Path(os.environ.get("SMARTSTACKCTL", BUILD / "smartstackctl"))
DESKTOP = BUILD / "smartstack-desktop"
INTERFACES = ROOT / "Sources" / "SmartStackProtocol" / "Interfaces"


class DaemonProcess:
    """A process started with its output in files (stdout.log, stderr.log) and stopped with SIGTERM."""

    def __init__(self, directory, args, env=None, prefix=()):
        self.directory = pathlib.Path(directory)
        self.stdout = open(self.directory / "stdout.log", "w+")
        self.stderr = open(self.directory / "stderr.log", "w+")
        self.process = subprocess.Popen([*prefix, *args], stdout=self.stdout, stderr=self.stderr, env=env)

    def log(self):
        self.stdout.flush()
        self.stderr.flush()
        return (self.directory / "stdout.log").read_text() + (self.directory / "stderr.log").read_text()

    def stop(self, timeout=10.0):
        """SIGTERM, then wait; returns the exit code (or kills and fails after the timeout)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError("smartstackd did not stop within %s s after SIGTERM" % timeout)
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Daemon(DaemonProcess):
    """A running smartstackd with its socket, state directory and output."""

    def __init__(self, directory, config=None, extra_args=(), env=None):
        self.directory = pathlib.Path(directory)
        self.socket_path = str(self.directory / "run" / "io.smartstack")
        self.state = str(self.directory / "state")
        self.address = "unix:" + self.socket_path
        args = [str(DAEMON), "--listen", self.socket_path, "--state", self.state, *extra_args]
        if config is not None:
            config_path = self.directory / "smartstackd.conf"
            config_path.write_text(config)
            args += ["--config", str(config_path)]
        super().__init__(directory, args, env=env)
        self.wait_ready()

    def wait_ready(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"smartstackd exited with {self.process.returncode}: {self.log()}")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.connect(self.socket_path)
                    return
            except OSError:
                time.sleep(0.02)
        raise TimeoutError(f"smartstackd did not listen within {timeout} s: {self.log()}")

    def raw(self, timeout=5.0):
        """A raw socket connected to the daemon."""
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(timeout)
        connection.connect(self.socket_path)
        return connection


class ReadableCopies:
    """World-readable copies of files that processes running as other uids (setpriv) execute or read.

    The checkout may be private (cloned as root into /root/..., mode 0700): such a process cannot open
    anything under it, not the test helpers, the binaries in .build or the interface files. Each file is copied
    once per session into a temporary directory of mode 0755 (files 0755), removed at the end."""

    def __init__(self):
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="smartstack-readable-"))
        os.chmod(self.directory, 0o755)
        self.copies = {}

    def __call__(self, path):
        path = pathlib.Path(path).resolve()
        if path not in self.copies:
            target = self.directory / f"{len(self.copies)}" / path.name
            target.parent.mkdir(mode=0o755)
            os.chmod(target.parent, 0o755)  # mkdir's mode is filtered by the umask
            shutil.copyfile(path, target)
            os.chmod(target, 0o755)
            self.copies[path] = target
        return self.copies[path]

    def remove(self):
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def readable_copy():
    """readable_copy(path): a world-readable copy of `path` for a process that runs as another uid."""
    copies = ReadableCopies()
    yield copies
    copies.remove()


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="smartstack-e2e-") as directory:
        yield directory


@pytest.fixture
def daemon(workdir):
    running = Daemon(workdir)
    yield running
    assert running.stop() == 0, running.log()


@pytest.fixture
def make_daemon(workdir):
    """Starts daemons with a given configuration; all are stopped (and must exit 0) at the end."""
    started = []

    def start(config=None, subdirectory=None, extra_args=(), env=None):
        directory = pathlib.Path(workdir) / (subdirectory or f"d{len(started)}")
        directory.mkdir(parents=True, exist_ok=True)
        running = Daemon(directory, config=config, extra_args=extra_args, env=env)
        started.append(running)
        return running

    yield start
    for running in started:
        assert running.stop() == 0, running.log()
