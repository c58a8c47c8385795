"""Issue 12, an honest command line: messages that say what happened, errors with the service's reason, specific
errors for malformed options, relative paths for the daemon, and one readable status table."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import CTL, DAEMON, DESKTOP, Daemon
from test_ctl import ctl

SETPRIV = shutil.which("setpriv")


def test_relevance_declare_with_only_a_group_says_so(daemon):
    ctl(daemon, "widget", "register", "org.ex.w", "main", "--family", "systemMedium")
    text = ctl(daemon, "relevance", "declare", "org.ex.w", "main", "--group", "G").stdout
    assert text.strip() == "declared relevance group G for org.ex.w/main", text
    text = ctl(daemon, "relevance", "declare", "org.ex.w", "main", "--context", "location=home", "--group", "G").stdout
    assert text.strip() == "declared 1 relevant context and relevance group G for org.ex.w/main", text


@pytest.mark.parametrize("entry, message", [
    ("2030-01-01T08:00:00Z,0.8", "has 2 comma-separated parts"),
    ("garbage,1,2", "the date 'garbage' is not a time"),
    ("now,x,2", "the score 'x' is not a number"),
    ("now,1,-5", "the duration '-5' is not a number of seconds"),
])
def test_a_malformed_entry_says_what_is_wrong(daemon, entry, message):
    result = ctl(daemon, "timeline", "push", "org.ex.w", "main", "--entry", entry, check=False)
    assert result.returncode == 64, result
    assert message in result.stderr and "timeline push" in result.stderr, result.stderr


def test_status_is_one_table_with_readable_values(daemon):
    ctl(daemon, "widget", "register", "org.ex.w", "main", "--family", "systemMedium")
    text = ctl(daemon, "status").stdout
    assert "{" not in text, text  # no raw JSON (commit latency was printed as an object)
    lines = text.splitlines()
    colons = {line.index(":") for line in lines}
    assert len(colons) == 1, text  # one aligned table: labels right-aligned to one column
    assert any(line.strip().startswith("Commit latency:") and " ms" in line for line in lines), text
    assert any(line.strip().startswith("Journal entries dropped:") for line in lines), text
    assert not any("journalEntriesDropped" in line for line in lines), text


def test_relative_state_and_listen_are_taken_from_the_working_directory(workdir):
    directory = pathlib.Path(workdir)
    process = subprocess.Popen(
        [str(DAEMON), "--listen", "run/sock", "--state", "state"], cwd=directory,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if (directory / "run" / "sock").exists():
                break
            if process.poll() is not None:
                raise AssertionError(process.communicate())
            subprocess.run(["sleep", "0.05"])
        result = subprocess.run([str(CTL), "--address", f"unix:{directory}/run/sock", "status"],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert (directory / "state" / "smartstack.sqlite").exists()
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root and setpriv to call as another uid")
def test_permission_denied_carries_the_services_reason(make_daemon, workdir, readable_copy):
    os.chmod(workdir, 0o755)
    daemon = make_daemon(extra_args=("--system",), config="shells = uid:0\n")
    binary = readable_copy(CTL)
    result = subprocess.run(
        [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", str(binary), "--address", daemon.address,
         "look", "home"], capture_output=True, text=True)
    assert result.returncode == 2, result
    assert "org.varlink.service.PermissionDenied" in result.stderr and "reason=" in result.stderr, result.stderr


def test_address_from_the_environment_and_method_names_checked(daemon):
    """$SMARTSTACK_ADDRESS names the socket when --address does not; a method name the service would close the
    connection on is refused before connecting (exit 64), not reported as an unreachable service."""
    served = ctl(None, "--json", "stats", env={"SMARTSTACK_ADDRESS": daemon.address})
    assert "uptimeSeconds" in served.stdout or "donations" in served.stdout, served.stdout
    # --address wins over the environment.
    ctl(daemon, "stats", env={"SMARTSTACK_ADDRESS": "unix:/nonexistent/io.smartstack"})
    # A bare path is taken as varlinkctl takes it; anything else that is not unix:PATH is refused by name.
    bare = ctl(None, "--json", "stats", env={"SMARTSTACK_ADDRESS": daemon.address[len("unix:"):]})
    assert "uptimeSeconds" in bare.stdout or "donations" in bare.stdout, bare.stdout
    bad = ctl(None, "stats", check=False, env={"SMARTSTACK_ADDRESS": "tcp:localhost:1234"})
    assert bad.returncode == 64, bad
    assert "SMARTSTACK_ADDRESS must look like unix:PATH" in bad.stderr, bad.stderr
    for method in ("NoSuch", "io.smartstack.Shell.getStack", "io.smartstack.Shell."):
        refused = ctl(daemon, "call", method, check=False)
        assert refused.returncode == 64, (method, refused)
        assert "is not an interface-qualified method name" in refused.stderr, refused.stderr
        assert "cannot reach" not in refused.stderr
    unknown = ctl(daemon, "call", "io.smartstack.Shell.NoSuch", check=False)
    assert unknown.returncode == 2 and "org.varlink.service.MethodNotFound" in unknown.stderr, unknown


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root and setpriv to call as another uid")
def test_a_socket_the_user_may_not_open_says_how_to_get_access(workdir, readable_copy):
    """EACCES on connect is not "is the service running?" (for the system service's socket it names its group: a
    unit test, CtlFailureTests, as that path is the machine's own)."""
    os.chmod(workdir, 0o755)
    path = pathlib.Path(workdir) / "io.smartstack"
    import socket
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(1)
        os.chmod(path, 0o600)
        result = subprocess.run(
            [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", str(readable_copy(CTL)), "--address",
             f"unix:{path}", "stats"], capture_output=True, text=True, timeout=60)
    finally:
        listener.close()
    assert result.returncode == 69, result
    assert "Permission denied" in result.stderr, result.stderr
    assert "This user may not open the socket" in result.stderr, result.stderr
    assert "Is the service running?" not in result.stderr and "usermod" not in result.stderr, result.stderr


def test_version_is_the_services(daemon):
    """--version of smartstackd, smartstackctl and smartstack-desktop is the version GetInfo reports."""
    info = ctl(daemon, "--json", "call", "org.varlink.service.GetInfo").stdout
    version = json.loads(info)["version"]
    for binary in (DAEMON, CTL, DESKTOP):
        result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0 and result.stdout.strip() == version, (binary, result)


def test_watch_reconnects_across_a_restart(make_daemon):
    """watch --reconnect follows on when smartstackd restarts (the current order first again); without it, watch
    ends when the service stops, with the stream's last reply, ServiceStopping."""
    import queue
    import threading
    from helpers import setup_stack
    daemon = make_daemon(subdirectory="d")
    setup_stack(daemon.address, apps=("mail", "news"))
    watcher = subprocess.Popen([str(CTL), "--address", daemon.address, "--json", "watch", "home", "--reconnect"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    plain = subprocess.Popen([str(CTL), "--address", daemon.address, "--json", "watch", "home"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watcher.stdout], daemon=True).start()
    try:
        first = json.loads(lines.get(timeout=20))
        assert first["stack"] == "home" and [e["instance"] for e in first["order"]] == ["mail", "news"], first
        assert json.loads(plain.stdout.readline())["stack"] == "home"
        assert daemon.stop() == 0, daemon.log()
        # The stream's last reply says the service is stopping: the typed error, exit 2 (a bare close was 69).
        assert plain.wait(timeout=20) == 2, plain.communicate()
        assert "io.smartstack.Shell.ServiceStopping" in plain.stderr.read()
        again = make_daemon(subdirectory="d")
        second = json.loads(lines.get(timeout=30))
        assert second["stack"] == "home" and second["order"] == first["order"], second
        assert watcher.poll() is None
        assert again.address == daemon.address
    finally:
        for process in (watcher, plain):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
    assert "connecting again" in watcher.stderr.read()
