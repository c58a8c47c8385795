"""smartstackd under systemd's protocols, with real components and the real binary: systemd-socket-activate
passing the socket, a notify socket the test binds (READY=1, STATUS=, WATCHDOG=1, STOPPING=1), the watchdog
stopping when the engine stalls (test-only fault injection), the journal entries' stderr form, and the
access policy against other uids (clients run with setpriv as another user)."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time

import pytest
import varlink

from conftest import DAEMON, DaemonProcess
from helpers import FrameReader, call, encode, setup_stack

SOCKET_ACTIVATE = shutil.which("systemd-socket-activate")
SETPRIV = shutil.which("setpriv")
SS = shutil.which("ss")
SYSTEM_PYTHON = "/usr/bin/python3"
RAW_CALL = pathlib.Path(__file__).resolve().parent / "raw_call.py"
PERMISSION_DENIED = "org.varlink.service.PermissionDenied"
CLIENT_REJECTED = "MESSAGE_ID=234a632a5b4149ad9bed534fc82f615e"


class NotifySocket:
    """A datagram socket standing in for systemd's notify socket."""

    def __init__(self, path):
        self.path = str(path)
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)
        self.received = []

    def receive(self, timeout):
        """The next datagram's assignments as a dict (with its arrival time), or None after the timeout."""
        self.socket.settimeout(timeout)
        try:
            data = self.socket.recv(65536)
        except socket.timeout:
            return None
        message = dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)
        message["_at"] = time.monotonic()
        self.received.append(message)
        return message

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message is not None and predicate(message):
                return message
        return None

    def collect(self, seconds):
        messages = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message is not None:
                messages.append(message)
        return messages

    def close(self):
        self.socket.close()


class Process(DaemonProcess):
    """The daemon started directly (not through the Daemon fixture, which waits by connecting)."""

    def wait_log(self, *needles, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log()
            if all(needle in text for needle in needles):
                return text
            time.sleep(0.05)
        raise AssertionError(f"{needles} not in the log: {self.log()}")


def clean_environment(**extra):
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("LISTEN_", "NOTIFY_", "WATCHDOG_", "JOURNAL_", "SMARTSTACK_"))}
    environment.update(extra)
    return environment


def wait_for_path(path, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.02)


def listen_backlog(path):
    """A listening Unix socket's backlog, as `ss` shows it (Send-Q), or None."""
    output = subprocess.run([SS, "-xlnH"], capture_output=True, text=True, timeout=10).stdout
    for line in output.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[4] == path:
            return int(fields[3])
    return None


# Socket activation.

@pytest.mark.skipif(SOCKET_ACTIVATE is None, reason="needs systemd-socket-activate (Debian package systemd)")
def test_socket_activation_serves_the_passed_socket_and_keeps_its_backlog(workdir):
    path = os.path.join(workdir, "io.smartstack")
    daemon = Process(workdir, [SOCKET_ACTIVATE, "-l", path, "--fdname=varlink",
                               str(DAEMON), "--state", os.path.join(workdir, "state")], env=clean_environment())
    try:
        wait_for_path(path)
        assert SS, "needs ss (Debian package iproute2, which make deps installs)"
        # The file exists from bind(); wait for listen().
        deadline = time.monotonic() + 10
        while (before := listen_backlog(path)) is None:
            assert time.monotonic() < deadline, "systemd-socket-activate did not listen"
            time.sleep(0.02)
        # The first connection starts smartstackd, which adopts the socket named "varlink".
        address = "unix:" + path
        deadline = time.monotonic() + 10
        while True:
            try:
                info = call(address, "org.varlink.service", "GetInfo")
                break
            except ConnectionRefusedError:  # bound but not yet listening
                assert time.monotonic() < deadline
                time.sleep(0.02)
        assert info["product"] == "smartstackd"
        setup_stack(address)
        assert call(address, "io.smartstack.Shell", "GetStack", stack="home")["stack"] == "home"
        daemon.wait_log(f"smartstackd is listening on unix:{path}", "SMARTSTACK_ACTIVATION=systemd")
        # Not re-listened: NIO's bind(socket) would have set its own backlog of 128.
        assert listen_backlog(path) == before, (before, listen_backlog(path))
    finally:
        assert daemon.stop() == 0, daemon.log()
    # The socket file is systemd's: the daemon leaves it in place.
    assert os.path.exists(path)


@pytest.mark.skipif(SOCKET_ACTIVATE is None, reason="needs systemd-socket-activate (Debian package systemd)")
def test_socket_activation_serves_every_socket_named_varlink(workdir):
    """A socket unit names every ListenStream= with its FileDescriptorName=: two paths pass two descriptors named
    varlink, and both are served (before, only the first was; clients of the second waited unanswered)."""
    first, second = os.path.join(workdir, "first.sock"), os.path.join(workdir, "second.sock")
    daemon = Process(workdir, [SOCKET_ACTIVATE, "-l", first, "-l", second, "--fdname=varlink:varlink",
                               str(DAEMON), "--state", os.path.join(workdir, "state")], env=clean_environment())
    try:
        for path in (first, second):
            wait_for_path(path)
        deadline = time.monotonic() + 10
        for path in (second, first, second):
            while True:
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                        connection.settimeout(5)  # a socket not served would leave the call unanswered
                        connection.connect(path)
                        connection.sendall(encode("org.varlink.service.GetInfo", {}))
                        info = FrameReader(connection).next()["parameters"]
                    break
                except ConnectionRefusedError:  # bound but not yet listening
                    assert time.monotonic() < deadline
                    time.sleep(0.02)
            assert info["product"] == "smartstackd"
        setup_stack("unix:" + first)
        assert call("unix:" + second, "io.smartstack.Shell", "GetStack", stack="home")["stack"] == "home"
    finally:
        assert daemon.stop() == 0, daemon.log()


@pytest.mark.skipif(SOCKET_ACTIVATE is None, reason="needs systemd-socket-activate (Debian package systemd)")
def test_socket_activation_refuses_a_connection_over_the_limit_and_goes_on(workdir):
    """Over maxConnections a connection on a passed socket is closed and reported, and the service goes on. Before,
    the refused channel was closed before NIO registered it: a debug build crashed on an assertion (any member of
    the socket's group could stop the service with 257 connections), a release build reported nothing."""
    path = os.path.join(workdir, "io.smartstack")
    config = os.path.join(workdir, "smartstackd.conf")
    with open(config, "w") as file:
        file.write("maxConnections = 2\n")
    daemon = Process(workdir, [SOCKET_ACTIVATE, "-l", path, "--fdname=varlink", str(DAEMON), "--config", config,
                               "--state", os.path.join(workdir, "state")], env=clean_environment())
    held = []
    try:
        wait_for_path(path)
        deadline = time.monotonic() + 10
        while len(held) < 2:
            try:
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.settimeout(5)
                connection.connect(path)
                connection.sendall(encode("org.varlink.service.GetInfo", {}))
                assert FrameReader(connection).next()["parameters"]["product"] == "smartstackd"
                held.append(connection)
            except ConnectionRefusedError:  # bound but not yet listening
                connection.close()
                assert time.monotonic() < deadline
                time.sleep(0.02)
        for _ in range(3):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as extra:
                extra.settimeout(5)
                extra.connect(path)
                try:
                    extra.sendall(encode("org.varlink.service.GetInfo", {}))
                except (BrokenPipeError, ConnectionResetError):
                    pass
                assert FrameReader(extra).closed(timeout=5)
        daemon.wait_log("Refused client uid", "connection limit (2) reached")
        assert daemon.process.poll() is None, daemon.log()
        held.pop().close()
        deadline = time.monotonic() + 5
        while True:
            try:
                assert call("unix:" + path, "org.varlink.service", "GetInfo")["product"] == "smartstackd"
                break
            except (ConnectionError, BrokenPipeError, varlink.error.VarlinkError):
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        for connection in held:
            connection.close()
        assert daemon.stop() == 0, daemon.log()


# sd_notify and the watchdog.

def start_notified(workdir, **environment):
    notify = NotifySocket(pathlib.Path(workdir) / "notify")
    socket_path = os.path.join(workdir, "run", "io.smartstack")
    daemon = Process(workdir, [str(DAEMON), "--listen", socket_path, "--state", os.path.join(workdir, "state")],
                     env=clean_environment(NOTIFY_SOCKET=notify.path, **environment))
    return notify, daemon, socket_path


def test_notify_ready_after_the_socket_answers_then_status_watchdog_and_stopping(workdir):
    notify, daemon, socket_path = start_notified(workdir, WATCHDOG_USEC="1000000")
    address = "unix:" + socket_path
    try:
        ready = notify.wait_for(lambda message: message.get("READY") == "1", timeout=15)
        assert ready is not None, daemon.log()
        # READY=1 came only once the socket was bound: it answers at once.
        assert call(address, "org.varlink.service", "GetInfo")["product"] == "smartstackd"
        assert ready["STATUS"] == "serving 0 stacks, 0 widgets, 0 subscribers, 0 donations/min"
        before_ready = notify.received[: notify.received.index(ready)]
        assert not any("WATCHDOG" in message for message in before_ready)

        # STATUS= follows the service's state.
        setup_stack(address)
        with varlink.Client(address=address) as client:
            with client.open("io.smartstack.Provider", namespaced=False) as provider:
                for index in range(3):
                    provider.Donate(app="com.example.mail", intent="open", parameters={}, id=f"d{index}")
        status = notify.wait_for(
            lambda message: message.get("STATUS", "").startswith("serving 1 stack, 3 widgets")
            and message["STATUS"].endswith(" 3 donations/min"), timeout=10)
        assert status is not None, [message for message in notify.received if "STATUS" in message]

        # WATCHDOG_USEC=1 s: a ping every half second.
        pings = [message["_at"] for message in notify.collect(3.0) if message.get("WATCHDOG") == "1"]
        assert 4 <= len(pings) <= 8, pings
        gaps = [later - earlier for earlier, later in zip(pings, pings[1:])]
        assert all(0.3 <= gap <= 0.8 for gap in gaps), gaps

        # SIGTERM: STOPPING=1, then exit 0.
        daemon.process.send_signal(signal.SIGTERM)
        assert notify.wait_for(lambda message: message.get("STOPPING") == "1", timeout=5) is not None
        assert daemon.process.wait(timeout=10) == 0, daemon.log()
        daemon.wait_log("MESSAGE_ID=aa4ae41e146640ae93ec1e3b90762801")
    finally:
        daemon.kill()
        notify.close()


def test_a_stalled_engine_stops_the_watchdog_pings(workdir):
    notify, daemon, socket_path = start_notified(workdir, WATCHDOG_USEC="600000", SMARTSTACK_TEST_FAULTS="1")
    try:
        assert notify.wait_for(lambda message: message.get("READY") == "1", timeout=15) is not None, daemon.log()
        healthy = [message for message in notify.collect(1.5) if message.get("WATCHDOG") == "1"]
        assert len(healthy) >= 3
        daemon.process.send_signal(signal.SIGUSR2)  # test-only: the engine's owner blocks for an hour
        daemon.wait_log("test fault injection: stalling the engine")
        notify.collect(0.5)  # a ping already on its way
        stalled = [message for message in notify.collect(2.0) if message.get("WATCHDOG") == "1"]
        assert stalled == [], "pings continued while the engine was stalled"
        assert daemon.process.poll() is None
    finally:
        daemon.kill()
        notify.close()


def test_fault_injection_is_unreachable_without_its_variable(workdir):
    notify, daemon, socket_path = start_notified(workdir, WATCHDOG_USEC="600000")
    try:
        assert notify.wait_for(lambda message: message.get("READY") == "1", timeout=15) is not None, daemon.log()
        # No handler: SIGUSR2 has its default action and ends the process; nothing stalls.
        daemon.process.send_signal(signal.SIGUSR2)
        assert daemon.process.wait(timeout=10) == -signal.SIGUSR2
        assert "fault injection" not in daemon.log()
    finally:
        daemon.kill()
        notify.close()


# Journal entries (their stderr form, without a journal; tests/JournaldTests run a real journald).

def test_connection_limit_refusals_are_journal_entries_with_the_client_uid(make_daemon):
    daemon = make_daemon(config="maxConnections = 2\n")
    # Wait until the readiness probe's connection is gone (a call may itself be refused while it is not).
    deadline = time.monotonic() + 5
    while True:
        assert time.monotonic() < deadline
        try:
            if call(daemon.address, "io.smartstack.Admin", "GetStatistics")["connections"] <= 1:
                break
        except (ConnectionResetError, BrokenPipeError, ConnectionError):
            pass
        time.sleep(0.02)
    time.sleep(0.1)
    held = [daemon.raw() for _ in range(2)]
    for connection in held:
        connection.sendall(encode("org.varlink.service.GetInfo"))
        assert FrameReader(connection).next()["parameters"]["product"] == "smartstackd"
    extra = daemon.raw()
    assert FrameReader(extra).closed(timeout=5)
    # (A connection refused after its client already left reads as uid 4294967295; this one is still there.)
    uid = f"SMARTSTACK_CLIENT_UID={os.geteuid()} "
    deadline = time.monotonic() + 5
    while not any(CLIENT_REJECTED in line and uid in line for line in daemon.log().splitlines()):
        assert time.monotonic() < deadline, daemon.log()
        time.sleep(0.05)
    line = next(line for line in daemon.log().splitlines() if CLIENT_REJECTED in line and uid in line)
    assert 'SMARTSTACK_REASON="connection limit (2) reached"' in line
    for connection in held:
        connection.close()


def test_order_changes_are_journal_entries_with_their_fields(make_daemon):
    daemon = make_daemon()
    setup_stack(daemon.address)
    deadline = time.monotonic() + 5
    while "MESSAGE_ID=040d2f906681431293c211e0a6ef5c64" not in daemon.log():
        assert time.monotonic() < deadline, daemon.log()
        time.sleep(0.05)
    line = next(line for line in daemon.log().splitlines() if "MESSAGE_ID=040d2f906681431293c211e0a6ef5c64" in line)
    for field in ["SMARTSTACK_STACK=home", "SMARTSTACK_ORDER=mail,news,maps", "SMARTSTACK_TOP=mail",
                  "SMARTSTACK_REVISION=", "SMARTSTACK_SCORES=", "SMARTSTACK_COUNT=1", "SMARTSTACK_REASON="]:
        assert field in line, line
    stats = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
    assert stats["journalEntriesDropped"] == 0


# Access (DESIGN.md "Access"): peer credentials, a user service, the system policy.

needs_other_users = pytest.mark.skipif(
    os.geteuid() != 0 or SETPRIV is None or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="needs root, setpriv and /usr/bin/python3 to run clients as other uids")


@pytest.fixture
def as_user(readable_copy):
    """as_user(uid, path, method, parameters): one call made by a process running as `uid` (setpriv), with the
    system's python3 and no packages. raw_call.py runs from a world-readable copy: the checkout may be 0700."""
    raw_call = readable_copy(RAW_CALL)

    def call_as(uid, path, method, parameters=None):
        result = subprocess.run(
            [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", SYSTEM_PYTHON, str(raw_call), path,
             method, json.dumps(parameters or {})], capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    return call_as


def register(app):
    return {"app": app, "kind": "main", "displayName": app, "families": ["systemMedium"]}


@needs_other_users
def test_the_system_policy_refuses_other_uids_and_apps_belong_to_their_first_uid(make_daemon, workdir, as_user):
    os.chmod(workdir, 0o755)  # let other users reach the socket (it is 0666 for the system service)
    daemon = make_daemon(extra_args=("--system",), config=(
        "shells = uid:1000\n"
        "providers = uid:65534, uid:1000\n"
        "app.com.example.weather = uid:1000\n"))
    path = daemon.socket_path
    # Introspection is open to anyone who can connect; the Shell only to uid 1000; the Admin only to root.
    assert as_user(65534, path, "org.varlink.service.GetInfo")["parameters"]["product"] == "smartstackd"
    assert as_user(65534, path, "io.smartstack.Shell.ListStacks")["error"] == PERMISSION_DENIED
    assert "stacks" in as_user(1000, path, "io.smartstack.Shell.ListStacks")["parameters"]
    assert as_user(1000, path, "io.smartstack.Admin.GetStatistics")["error"] == PERMISSION_DENIED
    assert "stacks" in call(daemon.address, "io.smartstack.Admin", "GetStatistics")
    # An app belongs to the first uid that registers it; one the policy assigns, to its callers only.
    method = "io.smartstack.Provider.RegisterWidget"
    assert "error" not in as_user(65534, path, method, register("com.example.mail"))
    assert as_user(1000, path, method, register("com.example.mail"))["error"] == PERMISSION_DENIED
    assert "error" not in as_user(65534, path, method, register("com.example.mail"))
    assert as_user(65534, path, method, register("com.example.weather"))["error"] == PERMISSION_DENIED
    assert "error" not in as_user(1000, path, method, register("com.example.weather"))
    assert as_user(1000, path, "io.smartstack.Provider.Donate",
                   {"app": "com.example.mail", "intent": "open"})["error"] == PERMISSION_DENIED
    # Each refusal is a client-rejected journal entry naming the uid (stderr here: there is no journal).
    deadline = time.monotonic() + 5
    while True:
        lines = [line for line in daemon.log().splitlines() if CLIENT_REJECTED in line]
        if any("SMARTSTACK_CLIENT_UID=65534" in line for line in lines) and \
                any("SMARTSTACK_CLIENT_UID=1000" in line for line in lines):
            break
        assert time.monotonic() < deadline, daemon.log()
        time.sleep(0.05)
    assert any("SMARTSTACK_METHOD=io.smartstack.Shell.ListStacks" in line for line in lines)
    assert all("SMARTSTACK_ERROR=org.varlink.service.PermissionDenied" in line for line in lines)


@needs_other_users
def test_an_app_keeps_its_first_uid_across_restarts(make_daemon, workdir, as_user):
    os.chmod(workdir, 0o755)
    config = "providers = uid:65534, uid:1000\n"
    daemon = make_daemon(extra_args=("--system",), config=config, subdirectory="owners")
    method = "io.smartstack.Provider.RegisterWidget"
    assert "error" not in as_user(65534, daemon.socket_path, method, register("com.example.mail"))
    assert "error" not in as_user(1000, daemon.socket_path, method, register("com.example.news"))
    assert daemon.stop() == 0, daemon.log()
    # The claims were stored with the state: after a restart each app still belongs to its first uid.
    again = make_daemon(extra_args=("--system",), config=config, subdirectory="owners")
    path = again.socket_path
    assert as_user(1000, path, method, register("com.example.mail"))["error"] == PERMISSION_DENIED
    assert as_user(65534, path, method, register("com.example.news"))["error"] == PERMISSION_DENIED
    assert "error" not in as_user(65534, path, method, register("com.example.mail"))
    assert "error" not in as_user(1000, path, "io.smartstack.Provider.Donate",
                                  {"app": "com.example.news", "intent": "open"})


@needs_other_users
def test_a_user_service_serves_only_its_own_user_and_root(workdir, as_user, readable_copy):
    # The daemon itself runs as uid 1000 (a user service); its socket is loosened by hand so that another
    # user can reach the daemon's own check.
    home = pathlib.Path(workdir) / "u1000"
    home.mkdir()
    os.chown(home, 1000, 1000)
    os.chmod(workdir, 0o755)
    socket_path = str(home / "run" / "io.smartstack")
    # The daemon runs as uid 1000 from a world-readable copy of the binary (the checkout may be 0700).
    daemon = Process(home, [str(readable_copy(DAEMON)), "--listen", socket_path, "--state", str(home / "state")],
                     env=clean_environment(HOME=str(home)),
                     prefix=(SETPRIV, "--reuid=1000", "--regid=1000", "--clear-groups"))
    try:
        wait_for_path(socket_path)
        daemon.wait_log("listening")
        os.chmod(home / "run", 0o755)
        os.chmod(socket_path, 0o666)
        assert "error" not in as_user(1000, socket_path, "io.smartstack.Shell.ListStacks")
        assert "stacks" in call("unix:" + socket_path, "io.smartstack.Shell", "ListStacks")  # root
        assert as_user(65534, socket_path, "io.smartstack.Shell.ListStacks")["error"] == PERMISSION_DENIED
        assert as_user(65534, socket_path, "org.varlink.service.GetInfo")["error"] == PERMISSION_DENIED
        daemon.wait_log(CLIENT_REJECTED, "SMARTSTACK_CLIENT_UID=65534")
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_no_banner_when_standard_output_is_the_journal(workdir):
    """Under systemd standard output is the journal's stream ($JOURNAL_STREAM names it): the banner for people
    running it by hand ("listening on", "try:", "state in") is left out; it was written at every activation."""
    read_end, write_end = os.pipe()
    info = os.fstat(write_end)
    socket_path = os.path.join(workdir, "run", "io.smartstack")
    environment = clean_environment(JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")
    process = subprocess.Popen([str(DAEMON), "--listen", socket_path, "--state", os.path.join(workdir, "state")],
                               stdout=write_end, stderr=subprocess.DEVNULL, env=environment)
    os.close(write_end)
    try:
        wait_for_path(socket_path)
        deadline = time.monotonic() + 10
        while True:
            try:
                assert call("unix:" + socket_path, "org.varlink.service", "GetInfo")["product"] == "smartstackd"
                break
            except (ConnectionRefusedError, FileNotFoundError):
                assert time.monotonic() < deadline
                time.sleep(0.02)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    with os.fdopen(read_end) as output:
        text = output.read()
    assert "listening on" not in text and "state in" not in text, text
