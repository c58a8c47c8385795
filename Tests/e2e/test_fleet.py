"""A fleet's journals collected with systemd-journal-remote and analysed with `smartstackctl analyze --directory`.

Two machines, each a private mount, pid and UTS namespace (`unshare`, as test_ctl_journal.py runs journald) with
its own /etc/machine-id (bind-mounted), hostname and systemd-journald: the real smartstackd writes its decision
entries to that journal while `smartstackctl replay` feeds it a usage log of its own size, then
systemd-journal-upload sends the machine's journal over loopback HTTP to one systemd-journal-remote the test
runs outside the namespaces. analyze reads the collector's directory: per machine (_MACHINE_ID, hostname) and
merged, and with --machine; every count is checked against `journalctl --directory` on the same files, and
against what each machine's own journal held before the upload.
"""
import collections
import json
import os
import pathlib
import shutil
import socket
import subprocess
import time
import uuid
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import CTL, DAEMON, DaemonProcess
from test_ctl import small_log
from test_ctl_journal import JOURNALD, MESSAGE_IDS

REMOTE = shutil.which("systemd-journal-remote", path="/lib/systemd:/usr/lib/systemd")
UPLOAD = shutil.which("systemd-journal-upload", path="/lib/systemd:/usr/lib/systemd")
NAMES = {identifier: name for name, identifier in MESSAGE_IDS.items()}

needs_fleet_tools = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not os.path.exists(JOURNALD) or REMOTE is None
    or UPLOAD is None or not shutil.which("journalctl") or not shutil.which("systemd-cat"),
    reason="needs root, unshare, systemd-journald, journalctl, systemd-cat and systemd-journal-remote "
           "(Debian package systemd-journal-remote)")

MACHINE = r"""
set -eu
out=$1
for dir in /run/systemd /run/log /var/log/journal /var/lib/systemd; do mount -t tmpfs tmpfs "$dir"; done
# This machine's identity: its own machine id and hostname, as journald stamps them on every entry.
echo "$MACHINE_ID" > "$out/machine-id"
mount --bind "$out/machine-id" /etc/machine-id
hostname "$HOST"
SYSTEMD_LOG_TARGET=console "$JOURNALD" 2> "$out/journald.log" & journald=$!
trap 'kill $journald 2>/dev/null; wait $journald 2>/dev/null || true' EXIT
i=0; until [ -S /run/systemd/journal/socket ]; do i=$((i+1)); [ $i -lt 500 ] || exit 3; sleep 0.01; done

mkdir -p "$out/run" "$out/state"
systemd-cat -t smartstackd sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@"' \
    "$DAEMON" --listen "$out/run/io.smartstack" --state "$out/state" & daemon=$!
i=0; until [ -S "$out/run/io.smartstack" ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 4; sleep 0.01; done
"$CTL" --address "unix:$out/run/io.smartstack" --json replay "$LOG" > "$out/replay.json"
sleep 1.5
kill -TERM $daemon; wait $daemon || true
journalctl --sync 2>/dev/null || sleep 1
# What this machine's own journal holds, before it leaves.
journalctl --no-pager -o json SYSLOG_IDENTIFIER=smartstackd > "$out/local.json"
# Ship it: every entry of the local journal, then exit (no --follow).
"$UPLOAD" --url="$COLLECTOR" --follow=no --save-state="$out/upload.state" 2> "$out/upload.log"
"""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, process, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, f"systemd-journal-remote exited with {process.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            assert time.monotonic() < deadline, "systemd-journal-remote did not listen"
            time.sleep(0.05)


def run_machine(directory, host, machine_id, log, collector, timeout=300):
    directory.mkdir()
    script = directory / "machine.sh"
    script.write_text(MACHINE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "JOURNALD": JOURNALD, "CTL": str(CTL),
           "DAEMON": str(DAEMON), "LOG": str(log), "HOST": host, "MACHINE_ID": machine_id, "UPLOAD": UPLOAD,
           "COLLECTOR": collector}
    result = subprocess.run(
        ["timeout", "-s", "KILL", str(timeout), "unshare", "--mount", "--pid", "--uts", "--fork", "--kill-child",
         "--mount-proc", "--propagation", "private", "/bin/sh", str(script), str(directory)],
        capture_output=True, text=True, env=env, timeout=timeout + 30)
    logs = "".join(f"\n--- {name}\n" + (directory / name).read_text() for name in ("upload.log", "journald.log")
                   if (directory / name).exists())
    assert result.returncode == 0, f"machine {host} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}{logs}"
    return [json.loads(line) for line in (directory / "local.json").read_text().splitlines() if line.strip()]


def decision_counts(entries):
    """Entries per analysis event name (order changes and the others by MESSAGE_ID)."""
    counts = collections.Counter()
    for entry in entries:
        name = NAMES.get(entry.get("MESSAGE_ID"))
        if name:
            counts[name] += 1
        elif entry.get("SMARTSTACK_ENGAGEMENT"):
            counts["engagement"] += 1
    return counts


def analyze(*arguments):
    result = subprocess.run([str(CTL), "--json", "analyze", *arguments], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@needs_fleet_tools
def test_two_machines_uploaded_to_one_collector_are_analysed_per_machine_and_merged(workdir):
    work = pathlib.Path(workdir)
    collected = work / "collected"
    collected.mkdir()
    port = free_port()
    remote = DaemonProcess(work, [REMOTE, f"--listen-http=127.0.0.1:{port}", f"--output={collected}/",
                                  "--split-mode=host"])
    machines = {"car-1": (uuid.uuid4().hex, 2, 3), "kiosk-2": (uuid.uuid4().hex, 3, 2)}
    local = {}
    try:
        wait_for_port(port, remote.process)
        for host, (machine_id, users, days) in machines.items():
            log = work / f"{host}.tsv"
            small_log(log, users=users, days=days)
            local[host] = run_machine(work / host, host, machine_id, log, f"http://127.0.0.1:{port}")
    finally:
        # On SIGTERM journal-remote closes its files (what a reader needs to see every entry).
        assert remote.stop() == 0, remote.log()
    files = list(collected.glob("*.journal"))
    assert files, remote.log()

    # What journalctl reads in the collector's directory: entries of both machines, each with its own
    # _MACHINE_ID and _HOSTNAME, exactly as many as each machine's own journal held.
    listed = subprocess.run(["journalctl", "--directory", str(collected), "--no-pager", "-o", "json",
                             "SYSLOG_IDENTIFIER=smartstackd"], capture_output=True, text=True, timeout=120, check=True)
    entries = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    by_machine = collections.defaultdict(list)
    for entry in entries:
        by_machine[entry["_MACHINE_ID"]].append(entry)
    assert set(by_machine) == {machine_id for machine_id, _, _ in machines.values()}
    expected = {}
    for host, (machine_id, _, _) in machines.items():
        assert {entry["_HOSTNAME"] for entry in by_machine[machine_id]} == {host}
        assert decision_counts(by_machine[machine_id]) == decision_counts(local[host])
        expected[host] = decision_counts(by_machine[machine_id])
        assert expected[host]["orderChanged"] > 0, f"{host}: no order-changed entries"
    assert expected["car-1"] != expected["kiosk-2"], "the two machines should differ"

    # analyze: one row per machine with journalctl's counts, and the merged totals.
    merged = analyze("--directory", str(collected))
    rows = {machine["label"]: machine for machine in merged["machines"]}
    assert set(rows) == set(machines)
    for host, (machine_id, _, _) in machines.items():
        row = rows[host]
        assert row["machineID"] == machine_id and row["hostname"] == host
        for name in MESSAGE_IDS:
            assert row["entries"][name] == expected[host][name], (host, name)
        assert row["entries"]["total"] == sum(expected[host].values())
        assert row["decisions"] == expected[host]["orderChanged"]
    for name in MESSAGE_IDS:
        assert merged["entries"][name] == expected["car-1"][name] + expected["kiosk-2"][name], name
    # Each machine's stacks are its own, named HOST/STACK; their decisions add up to the machine's entries.
    for host in machines:
        stacks = [stack for stack in merged["stacks"] if stack["stack"].startswith(host + "/")]
        assert stacks, host
        assert sum(stack["decisions"] for stack in stacks) == expected[host]["orderChanged"]
        assert rows[host]["stacks"] == len(stacks)
    assert len(merged["stacks"]) == sum(row["stacks"] for row in rows.values())
    # The published changes each machine's entries stand for (SMARTSTACK_COUNT), per machine and stack.
    for host, (machine_id, _, _) in machines.items():
        changes = collections.Counter()
        for entry in by_machine[machine_id]:
            if entry.get("MESSAGE_ID") == MESSAGE_IDS["orderChanged"]:
                changes[f"{host}/{entry['SMARTSTACK_STACK']}"] += int(entry.get("SMARTSTACK_COUNT", "1"))
        assert {stack["stack"]: stack["changes"] for stack in merged["stacks"]
                if stack["stack"].startswith(host + "/")} == dict(changes)

    # --machine: one machine's analysis, by hostname or by (a prefix of) its machine id.
    for host, (machine_id, _, _) in machines.items():
        for selector in (host, machine_id, machine_id[:10]):
            one = analyze("--directory", str(collected), "--machine", selector)
            for name in MESSAGE_IDS:
                assert one["entries"][name] == expected[host][name], (selector, name)
            assert all("/" not in stack["stack"] for stack in one["stacks"])
            assert len(one["machines"]) == 2
    nothing = analyze("--directory", str(collected), "--machine", "no-such-host")
    assert nothing["entries"]["orderChanged"] == 0
    assert any("no machine matches 'no-such-host'" in note for note in nothing["notes"])

    print("fleet figures (journalctl):", {host: dict(counts) for host, counts in expected.items()})
    print("fleet figures (analyze, merged):", merged["entries"], "stacks:", [stack["stack"] for stack in merged["stacks"]])

    # The same per-machine table in text and HTML.
    report = work / "fleet.html"
    text = subprocess.run([str(CTL), "analyze", "--directory", str(collected), "--html", str(report)],
                          capture_output=True, text=True, timeout=120, check=True).stdout
    for host, (machine_id, _, _) in machines.items():
        line = next(line for line in text.splitlines() if line.startswith(host + " "))
        assert machine_id in line and f" {sum(expected[host].values()):,} " in line.replace("\u202f", ","), line
    html = report.read_text()
    ElementTree.fromstring(html)  # still well-formed XHTML with the new table
    assert "<h2>Machines</h2>" in html
    for host, (machine_id, _, _) in machines.items():
        assert f"<td>{host}</td><td>{machine_id}</td><td>{sum(expected[host].values())}</td>" in html
