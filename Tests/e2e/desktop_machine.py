"""The machine test_desktop.py runs its scenarios on: a real systemd as PID 1 in its own namespaces, staged with the
repository's units and binaries, and the helpers that drive it (systemctl, transient units, the journal, calls to
smartstackd inside it). See test_desktop.py for what is isolated and how the namespace is ended.
"""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest
import varlink

from conftest import BUILD, DAEMON, ROOT

DESKTOP = pathlib.Path(os.environ.get("SMARTSTACK_DESKTOP", BUILD / "smartstack-desktop"))
SYSTEMD = "/lib/systemd/systemd"
UNIT_DIRECTORY = "/lib/systemd/system"
MESSAGE_IDS = {
    "desktopBusConnected": None, "desktopBusLost": None, "desktopLaunch": None, "desktopStackChanged": None,
    "desktopLook": None, "desktopOverviewLook": None, "desktopDisconnected": None, "desktopReconnected": None,
}
SYSTEM_UNITS = [
    "sysinit.target", "basic.target", "sockets.target", "shutdown.target", "paths.target", "timers.target",
    "slices.target", "local-fs.target", "swap.target", "multi-user.target", "systemd-journald.service",
    "systemd-journald.socket", "systemd-journald-dev-log.socket", "dbus.socket", "dbus.service",
    "final.target", "poweroff.target", "systemd-poweroff.service", "umount.target",
]
# For a real logind session and the user's own service manager and bus.
SESSION_UNITS = [
    "systemd-logind.service", "dbus-org.freedesktop.login1.service", "user@.service", "user-runtime-dir@.service",
    "user.slice", "systemd-user-sessions.service",
]


def _message_ids():
    """The desktop events' MESSAGE_IDs, read from SmartStackEvent.swift (the catalog test keeps both in step)."""
    source = (ROOT / "Sources" / "SmartStackSystemd" / "SmartStackEvent.swift").read_text()
    ids = {}
    for line in source.splitlines():
        line = line.strip()
        for name in MESSAGE_IDS:
            if line.startswith(f"case .{name}:"):
                ids[name] = line.split('"')[1]
    return ids


def _cgroup2_mount():
    for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split(" ")
        if "-" in fields:
            dash = fields.index("-")
            if len(fields) > dash + 1 and fields[dash + 1] == "cgroup2":
                return fields[4]
    return None


def _unavailable():
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("unshare", "nsenter", "timeout", "systemctl", "systemd-run", "busctl", "systemd-sysusers",
                 "dbus-daemon"):
        if not shutil.which(tool):
            return f"needs {tool} (make deps installs dbus)"
    if not os.path.exists(SYSTEMD):
        return "needs /lib/systemd/systemd"
    if os.path.exists("/run/systemd/system"):
        return "the host runs systemd (its cgroups belong to it)"
    if _cgroup2_mount() is None:
        return "needs a cgroup2 mount"
    if not DESKTOP.exists() or not DAEMON.exists():
        return "needs smartstackd and smartstack-desktop built"
    return None


pytestmark = pytest.mark.skipif(_unavailable() is not None, reason=str(_unavailable()))

# The namespace and its boot, shared with the Swift PID 1 test: Tests/pid1/outer.sh and inner.sh.
PID1_SCRIPTS = ROOT / "Tests" / "pid1"
# The namespace is killed after this many seconds whatever happens to the test.
NAMESPACE_SECONDS = 150

CONFIG = """\
# smartstack-desktop in the test namespace: the system manager, a stack of the 2 most-launched apps.
bus = system
stack = desktop.apps
stackSize = 2
ignore = org.gnome.Terminal, org.freedesktop.*
dedupSeconds = 5
"""

DROP_IN = """\
[Service]
ExecStart=
ExecStart=/usr/local/bin/smartstack-desktop --system --config /run/smartstack-desktop.conf
"""


def _child(pid, deadline):
    while time.monotonic() < deadline:
        try:
            children = pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            children = []
        if children:
            return int(children[0])
        time.sleep(0.02)
    return None


class Machine:
    """A booted namespace: systemd as PID 1 with the staged units."""

    def __init__(self, stage):
        self.stage = stage
        self.outer = subprocess.Popen(
            ["/bin/sh", str(stage / "outer.sh"), str(stage), _cgroup2_mount(), "smartstack-desktop-test",
             str(NAMESPACE_SECONDS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 15
        timeout_pid = None
        while timeout_pid is None and time.monotonic() < deadline:
            try:
                timeout_pid = int((stage / "timeout.pid").read_text().strip())
            except (OSError, ValueError):
                time.sleep(0.02)
        self.unshare = _child(timeout_pid, deadline) if timeout_pid else None
        self.systemd = _child(self.unshare, deadline) if self.unshare else None
        if self.systemd is None:
            self.kill()
            raise AssertionError("no systemd in the namespace")
        self.socket = f"/proc/{self.systemd}/root/run/smartstack/io.smartstack"
        self.address = "unix:" + self.socket

    def run(self, *arguments, check=True, timeout=30):
        result = subprocess.run(
            ["nsenter", "-t", str(self.systemd), "-m", "-p", *arguments], capture_output=True, text=True,
            timeout=timeout, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_PAGER": "cat",
                                  "SYSTEMD_COLORS": "0"})
        if check:
            assert result.returncode == 0, f"{arguments}: {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result

    def show(self, unit, prop):
        return self.run("systemctl", "show", "-P", prop, unit).stdout.strip()

    def wait_running(self):
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            state = self.run("systemctl", "is-system-running", check=False).stdout.strip()
            if state in ("running", "degraded"):
                return
            time.sleep(0.1)
        raise AssertionError("systemd did not finish booting: " + self.run("systemctl", "list-jobs").stdout)

    def journal(self, unit):
        output = self.run("journalctl", "--no-pager", "-o", "json", "-u", unit).stdout
        return [json.loads(line) for line in output.splitlines() if line.strip()]

    def poweroff(self):
        """systemctl poweroff, then wait for the namespace to end; kill it after 30 s."""
        if self.outer.poll() is None:
            self.run("systemctl", "poweroff", check=False)
            try:
                self.outer.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.outer.returncode

    def kill(self):
        if self.unshare:
            try:
                os.kill(self.unshare, 9)
            except ProcessLookupError:
                pass
        try:
            self.outer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.outer.kill()
            self.outer.wait()


def _stage(stage):
    units = stage / "units"
    (units / "sockets.target.wants").mkdir(parents=True)
    (stage / "etc").mkdir()
    for unit in SYSTEM_UNITS + SESSION_UNITS:
        source = pathlib.Path(UNIT_DIRECTORY) / unit
        if source.is_symlink():  # an alias stays an alias
            (units / unit).symlink_to(os.readlink(source))
        elif source.exists():
            shutil.copy(source, units / unit)
    for folder in ("user@.service.d", "user-.slice.d", "user@0.service.d"):
        if (pathlib.Path(UNIT_DIRECTORY) / folder).is_dir():
            shutil.copytree(pathlib.Path(UNIT_DIRECTORY) / folder, units / folder)
    # The repository's user units, for the user's manager (which reads /etc/systemd/user, private here).
    (stage / "user-units").mkdir()
    for unit in ("smartstackd.service", "smartstackd.socket", "smartstack-desktop.service"):
        shutil.copy(ROOT / "systemd" / "user" / unit, stage / "user-units" / unit)
    (units / "default.target").symlink_to("multi-user.target")
    for socket_unit in ("systemd-journald.socket", "systemd-journald-dev-log.socket", "dbus.socket"):
        (units / "sockets.target.wants" / socket_unit).symlink_to("../" + socket_unit)
    # The repository's units, verbatim; smartstack-desktop gets the test's configuration file by a drop-in.
    for unit in ("smartstackd.service", "smartstackd.socket", "smartstack-desktop.service"):
        shutil.copy(ROOT / "systemd" / unit, units / unit)
    (units / "smartstack-desktop.service.d").mkdir()
    (units / "smartstack-desktop.service.d" / "test.conf").write_text(DROP_IN)
    (units / "systemd-journald.service.d").mkdir()
    (units / "systemd-journald.service.d" / "test.conf").write_text(
        "[Service]\nEnvironment=SYSTEMD_LOG_TARGET=console\n")
    for name in ("group", "gshadow", "passwd", "shadow"):
        shutil.copy("/etc/" + name, stage / "etc" / name)
    # The group "smartstack" and the user "smartstack-desktop", added by systemd-sysusers itself to copies of the
    # user database that the namespace binds over /etc's.
    subprocess.run(["systemd-sysusers", f"--root={stage}", str(ROOT / "systemd/sysusers.d/smartstackd.conf"),
                    str(ROOT / "systemd/sysusers.d/smartstack-desktop.conf")],
                   check=True, capture_output=True, timeout=30)
    (stage / "bin").mkdir()
    shutil.copy(DAEMON, stage / "bin" / "smartstackd")
    shutil.copy(DESKTOP, stage / "bin" / "smartstack-desktop")
    (stage / "run").mkdir()
    (stage / "run" / "smartstack-desktop.conf").write_text(CONFIG)
    for script in ("outer.sh", "inner.sh"):
        shutil.copy(PID1_SCRIPTS / script, stage / script)


@pytest.fixture
def machine():
    base = ROOT / ".build" / "e2e-desktop"
    base.mkdir(parents=True, exist_ok=True)
    stage = pathlib.Path(tempfile.mkdtemp(prefix="ns-", dir=base))
    try:
        _stage(stage)
        booted = Machine(stage)
        try:
            booted.wait_running()
            yield booted
        finally:
            booted.poweroff()
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def service_call(machine, interface, method, **parameters):
    with varlink.Client(address=machine.address) as client:
        with client.open(interface, namespaced=False) as remote:
            return getattr(remote, method)(**parameters)


def donations(machine, app):
    try:
        return service_call(machine, "io.smartstack.Provider", "ListDonations", app=app, limit=100)["donations"]
    except varlink.VarlinkError:
        return []


def eventually(condition, timeout=20.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()


def state(machine):
    path = pathlib.Path(f"/proc/{machine.systemd}/root/var/lib/smartstack-desktop/desktop-state.json")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def acknowledged(machine, unit, timeout=25.0):
    """Waits until smartstack-desktop counted the unit's invocation and smartstackd acknowledged every call.

    The test reads donations only then: ListDonations acts as the app's provider, and the first uid to act for
    an app owns it, so a query made as root before smartstack-desktop registered the app would take the app
    from it."""
    invocation = machine.show(unit, "InvocationID")

    def done():
        current = state(machine)
        return current is not None and invocation in current["state"]["invocations"] and current["pending"] == []
    return eventually(done, timeout)


def launch_scope(machine, unit):
    """What GNOME does: the launcher starts the process and moves it into a transient scope."""
    machine.run("sh", "-c", f"systemd-run --quiet --scope --unit={unit} sleep 600 >/dev/null 2>&1 &")
    assert eventually(lambda: machine.show(unit, "ActiveState") == "active", 10), unit


def launch_service(machine, unit):
    """What KDE and flatpak launchers do: a transient service."""
    machine.run("systemd-run", "--quiet", f"--unit={unit}", "sleep", "600")


def entries(machine, name, user=False):
    message_id = _message_ids()[name]
    if user:
        output = machine.run("journalctl", "--no-pager", "-o", "json", "--user-unit", "smartstack-desktop.service").stdout
        journal = [json.loads(line) for line in output.splitlines() if line.strip()]
    else:
        journal = machine.journal("smartstack-desktop.service")
    return [entry for entry in journal if entry.get("MESSAGE_ID") == message_id]
