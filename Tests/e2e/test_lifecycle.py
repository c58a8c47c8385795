"""The service's lifecycle and limits: socket ownership, shutdown, connection limit, slow subscribers."""
import os
import pathlib
import signal
import socket
import stat
import subprocess
import threading
import time

from conftest import DAEMON
from helpers import FrameReader, call, encode, setup_stack


def test_socket_directory_and_file_permissions(daemon):
    # A user's socket is the user's alone; root's (the system service) is reachable by all, and the
    # access policy decides who may do what.
    directory = pathlib.Path(daemon.socket_path).parent
    system = os.geteuid() == 0
    assert stat.S_IMODE(directory.stat().st_mode) == (0o755 if system else 0o700)
    assert stat.S_ISSOCK(os.stat(daemon.socket_path).st_mode)
    # The mode is set right after bind (inside the private directory); the probe may connect just before.
    wanted = 0o666 if system else 0o600
    deadline = time.monotonic() + 5
    while stat.S_IMODE(os.stat(daemon.socket_path).st_mode) != wanted and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stat.S_IMODE(os.stat(daemon.socket_path).st_mode) == wanted


def test_refuses_a_socket_another_live_daemon_owns(daemon, workdir):
    second = subprocess.run(
        [str(DAEMON), "--listen", daemon.socket_path, "--state", os.path.join(workdir, "state2")],
        capture_output=True, text=True, timeout=10)
    assert second.returncode != 0
    assert "already serving" in second.stderr + second.stdout
    # The first is untouched.
    assert call(daemon.address, "org.varlink.service", "GetInfo")["product"] == "smartstackd"


def test_removes_a_stale_socket_and_never_a_regular_file(make_daemon, workdir):
    run = pathlib.Path(workdir) / "stale" / "run"
    run.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(run / "io.smartstack"))
    stale.close()  # bound, never listening: stale
    daemon = make_daemon(subdirectory="stale")
    assert call(daemon.address, "org.varlink.service", "GetInfo")["product"] == "smartstackd"

    blocked = pathlib.Path(workdir) / "blocked"
    blocked.mkdir()
    (blocked / "io.smartstack").write_text("precious")
    result = subprocess.run(
        [str(DAEMON), "--listen", str(blocked / "io.smartstack"), "--state", str(blocked / "state")],
        capture_output=True, text=True, timeout=10)
    assert result.returncode != 0
    assert "not a socket" in result.stderr + result.stdout
    assert (blocked / "io.smartstack").read_text() == "precious"


def test_sigterm_finishes_in_flight_calls_ends_streams_and_exits_zero(make_daemon):
    daemon = make_daemon()
    setup_stack(daemon.address)
    stream = daemon.raw(timeout=10)
    stream.sendall(encode("io.smartstack.Shell.Subscribe", {}, more=True))
    reader = FrameReader(stream)
    assert reader.next()["continues"] is True
    watch = daemon.raw(timeout=10)
    watch.sendall(encode("io.smartstack.Provider.WatchReloads", {"app": "com.example.mail"}, more=True))
    watching = FrameReader(watch)
    idle = daemon.raw(timeout=10)
    idle.sendall(encode("org.varlink.service.GetInfo"))
    assert FrameReader(idle).next()["parameters"]["product"] == "smartstackd"
    began = time.monotonic()
    assert daemon.stop() == 0, daemon.log()
    assert time.monotonic() - began < 5
    # Each stream's last reply says why it ends (a bare close is a client cut off, or a crash).
    last = reader.next()
    assert last.get("error") == "io.smartstack.Shell.ServiceStopping" and "continues" not in last, last
    assert reader.closed(timeout=2)
    last = watching.next()
    assert last.get("error") == "io.smartstack.Provider.ServiceStopping", last
    assert watching.closed(timeout=2)
    assert FrameReader(idle).closed(timeout=2)
    assert not os.path.exists(daemon.socket_path)


def test_connection_limit_closes_extra_connections_only(make_daemon):
    daemon = make_daemon(config="maxConnections = 3\n")
    # Wait until the readiness probe's connection is gone (the statistics call itself is the only one).
    deadline = time.monotonic() + 5
    while call(daemon.address, "io.smartstack.Admin", "GetStatistics")["connections"] > 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.1)
    held = [daemon.raw() for _ in range(3)]
    for connection in held:
        connection.sendall(encode("org.varlink.service.GetInfo"))
        assert FrameReader(connection).next()["parameters"]["product"] == "smartstackd"
    extra = daemon.raw()
    try:
        extra.sendall(encode("org.varlink.service.GetInfo"))
    except (BrokenPipeError, ConnectionResetError):
        pass  # already closed
    assert FrameReader(extra).closed(timeout=5)
    # The held ones still work; after one closes, a new client gets in.
    held[0].sendall(encode("org.varlink.service.GetInfo"))
    assert FrameReader(held[0]).next()["parameters"]["product"] == "smartstackd"
    held.pop().close()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert call(daemon.address, "org.varlink.service", "GetInfo")["product"] == "smartstackd"
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    for connection in held:
        connection.close()


def test_a_subscriber_that_does_not_read_is_cut_off_and_others_are_not_slowed(make_daemon):
    daemon = make_daemon(config="subscriberQueue = 4\n")
    setup_stack(daemon.address)
    slow = daemon.raw()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.sendall(encode("io.smartstack.Shell.Subscribe", {}, more=True))
    time.sleep(0.2)
    orders = [("mail", "news", "maps"), ("maps", "mail", "news")]
    latencies = []
    with daemon.raw(timeout=10) as writer:
        reader = FrameReader(writer)
        for index in range(3000):
            order = orders[index % 2]
            widgets = [{"instance": app, "app": f"com.example.{app}", "kind": "main"} for app in order]
            began = time.monotonic()
            writer.sendall(encode(
                "io.smartstack.Shell.ConfigureStack",
                {"stack": "home", "family": "systemMedium", "widgets": widgets, "smartRotate": False}))
            reply = reader.next()
            latencies.append(time.monotonic() - began)
            assert "revision" in reply["parameters"], reply
            if index % 200 == 199:
                stats = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
                if stats["subscribers"] == 0:
                    break
    stats = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
    assert stats["subscribers"] == 0, stats
    assert FrameReader(slow).closed(timeout=5)
    latencies.sort()
    assert latencies[len(latencies) // 2] < 0.05, latencies[len(latencies) // 2]


def test_start_up_messages_name_what_is_in_the_way(daemon, workdir):
    """A --state that is a file says so (it said "Permission denied"); a socket some program serves does not blame
    smartstackd alone."""
    in_the_way = pathlib.Path(workdir) / "a-file"
    in_the_way.write_text("")
    result = subprocess.run(
        [str(DAEMON), "--listen", os.path.join(workdir, "other.sock"), "--state", str(in_the_way)],
        capture_output=True, text=True, timeout=10)
    assert result.returncode == 73, result
    assert "not a directory" in result.stderr + result.stdout, result
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    served = os.path.join(workdir, "served.sock")
    other.bind(served)
    other.listen(1)
    try:
        result = subprocess.run(
            [str(DAEMON), "--listen", served, "--state", os.path.join(workdir, "state3")],
            capture_output=True, text=True, timeout=10)
    finally:
        other.close()
    assert result.returncode != 0 and "another program (another smartstackd?)" in result.stderr + result.stdout


def test_a_stop_at_debug_level_names_the_services_without_dumping_them(make_daemon):
    """After the README's SetLogLevel debug, every stop wrote each service's whole state (buffers, loggers: up to
    2.3 KB a line) as swift-service-lifecycle's SMARTSTACK_SL_SERVICE field; now each service is named."""
    daemon = make_daemon()
    call(daemon.address, "io.smartstack.Admin", "SetLogLevel", level="debug")
    assert daemon.stop() == 0
    lines = [line for line in daemon.log().splitlines() if "SMARTSTACK_SL_SERVICE=" in line]
    named = {line.split("SMARTSTACK_SL_SERVICE=")[1].split()[0] for line in lines}
    assert {"VarlinkListener", "HostTimeService", "StatusService"} <= named, lines
    assert all(len(line) < 300 for line in lines), max(lines, key=len)
