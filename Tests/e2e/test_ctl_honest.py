"""Issue 12, an honest command line: messages that say what happened, errors with the service's reason, specific
errors for malformed options, relative paths for the daemon, and one readable status table."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import CTL, DAEMON, Daemon
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
