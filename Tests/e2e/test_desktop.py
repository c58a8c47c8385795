"""smartstack-desktop with real components: a real systemd as PID 1 in its own namespaces, a real D-Bus system
bus (dbus-daemon from dbus.socket/dbus.service), the repository's units for smartstackd and smartstack-desktop,
and applications launched as transient units exactly as desktops launch them (`systemd-run --scope
--unit=app-gnome-….scope`, `systemd-run --unit=app-flatpak-…@….service`).

Two scenarios. The system instance (`systemd/smartstack-desktop.service`, `--system`) watches the system manager
on the system bus: launches, donation ids and dates, dedup, the ignore list, the stack, and restarts of
smartstack-desktop, smartstackd and dbus; its unlocks are real D-Bus signals sent on that bus with `busctl emit`
(`org.freedesktop.login1.Session.Unlock`, `PropertiesChanged` of `LockedHint`), as no logind runs there. The user
instance runs as on a desktop: systemd-logind, a real login session through PAM (pam_systemd), root's user
manager and user bus (dbus-user-session), the repository's user units, apps launched as the user's transient
units, and unlocks that logind itself signals (`loginctl unlock-session`, `SetLockedHint`).

systemd gets private /tmp, /var/tmp, /run, /etc/systemd/system (and /var/lib, /var/log/journal, /usr/local/bin)
before it is exec'd, a cgroup2 tree of its own, and only the staged units (SYSTEMD_UNIT_PATH, no generators):
nothing of the machine's boot runs. The staging folder is under the checkout's .build/, outside every path the
namespace hides. The namespace is ended with `systemctl poweroff`, and `timeout -s KILL` (or a kill of its
`unshare`, which takes every process inside with it) ends it whatever happens.
"""
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import varlink

from desktop_machine import (  # noqa: F401 (machine: the fixture)
    MESSAGE_IDS, acknowledged, donations, entries, eventually, launch_scope, launch_service, machine,
    service_call, state,
)


def test_desktop_launches_unlocks_and_restarts_under_real_systemd_and_dbus(machine):
    try:
        scenario(machine)
    except AssertionError:
        # What the services said, for the failure report.
        for unit in ("smartstack-desktop.service", "smartstackd.service"):
            print(f"--- journal of {unit}")
            print(machine.run("journalctl", "--no-pager", "-o", "short-precise", "-u", unit, check=False).stdout[-6000:])
        raise


def scenario(machine):
    started = time.monotonic()
    machine.run("systemctl", "start", "smartstackd.socket")
    # Type=notify: start returns once smartstack-desktop is subscribed to the manager on the bus.
    machine.run("systemctl", "start", "smartstack-desktop.service", timeout=60)
    assert machine.show("smartstack-desktop.service", "ActiveState") == "active"
    assert machine.show("smartstack-desktop.service", "StatusText").startswith("watching the system service manager")
    assert eventually(lambda: entries(machine, "desktopBusConnected"), 10)

    # Launches as desktops make them.
    for unit in ("app-gnome-org.gnome.Nautilus-1234.scope", "app-gnome-org.gnome.Nautilus-1235.scope",
                 "app-gnome-org.gnome.Nautilus-1236.scope"):
        launch_scope(machine, unit)
    launch_service(machine, "app-flatpak-org.mozilla.firefox@5678.service")
    # Not applications, and an application on the ignore list (exact and by prefix).
    launch_service(machine, "backup-job.service")
    launch_scope(machine, "session-x-9.scope")
    launch_scope(machine, "app-gnome-org.gnome.Terminal-77.scope")
    launch_service(machine, "app-org.freedesktop.Notifications@1.service")

    for unit in ("app-gnome-org.gnome.Nautilus-1234.scope", "app-gnome-org.gnome.Nautilus-1235.scope",
                 "app-gnome-org.gnome.Nautilus-1236.scope", "app-flatpak-org.mozilla.firefox@5678.service"):
        assert acknowledged(machine, unit), unit
    nautilus = donations(machine, "org.gnome.Nautilus")
    assert len(nautilus) == 3
    firefox = donations(machine, "org.mozilla.firefox")
    assert len(firefox) == 1
    # Each donation: intent open, id from the unit's invocation id, date = the unit's start time.
    invocation = machine.show("app-flatpak-org.mozilla.firefox@5678.service", "InvocationID")
    assert firefox[0]["id"] == "invocation-" + invocation
    assert firefox[0]["intent"] == "open"
    entered = machine.show("app-flatpak-org.mozilla.firefox@5678.service", "ActiveEnterTimestamp")
    assert entered and firefox[0]["date"][:19].replace("T", " ") in entered, (firefox[0]["date"], entered)
    assert sorted(d["id"] for d in nautilus) == sorted(
        "invocation-" + machine.show(f"app-gnome-org.gnome.Nautilus-{n}.scope", "InvocationID")
        for n in (1234, 1235, 1236))

    # The same unit restarted within seconds (a new invocation) counts once.
    machine.run("systemctl", "restart", "app-flatpak-org.mozilla.firefox@5678.service")
    assert machine.show("app-flatpak-org.mozilla.firefox@5678.service", "InvocationID") != invocation
    # Another unit of the same app is another launch.
    launch_service(machine, "app-flatpak-org.mozilla.firefox@9999.service")
    assert acknowledged(machine, "app-flatpak-org.mozilla.firefox@9999.service")
    assert len(donations(machine, "org.mozilla.firefox")) == 2, "the restart within 5 s was counted"

    # Ignored and non-app units: nothing registered, nothing donated.
    assert donations(machine, "org.gnome.Terminal") == []
    assert donations(machine, "org.freedesktop.Notifications") == []
    stacks = service_call(machine, "io.smartstack.Shell", "ListStacks")["stacks"]
    assert [s["stack"] for s in stacks] == ["desktop.apps"]
    stack = stacks[0]
    # K = 2: the two most-launched apps, most first, one launcher widget each.
    assert [(w["instance"], w["app"], w["kind"]) for w in stack["widgets"]] == [
        ("desktop.apps/org.gnome.Nautilus", "org.gnome.Nautilus", "launch"),
        ("desktop.apps/org.mozilla.firefox", "org.mozilla.firefox", "launch")]
    assert stack["family"] == "systemMedium"
    order = service_call(machine, "io.smartstack.Shell", "GetStack", stack="desktop.apps")["order"]
    assert sorted(entry["instance"] for entry in order) == [
        "desktop.apps/org.gnome.Nautilus", "desktop.apps/org.mozilla.firefox"]
    assert [e.get("SMARTSTACK_ORDER") for e in entries(machine, "desktopStackChanged")] == [
        "org.gnome.Nautilus", "org.gnome.Nautilus,org.mozilla.firefox"]
    launches = entries(machine, "desktopLaunch")
    assert sorted(e["SMARTSTACK_UNIT"] for e in launches) == sorted([
        "app-gnome-org.gnome.Nautilus-1234.scope", "app-gnome-org.gnome.Nautilus-1235.scope",
        "app-gnome-org.gnome.Nautilus-1236.scope", "app-flatpak-org.mozilla.firefox@5678.service",
        "app-flatpak-org.mozilla.firefox@9999.service"])

    # An unlock: logind's Unlock signal, sent on the real system bus; then LockedHint turning false.
    looks_before = service_call(machine, "io.smartstack.Shell", "Explain", stack="desktop.apps")["learnedFromLooks"]
    machine.run("busctl", "emit", "/org/freedesktop/login1/session/_31", "org.freedesktop.login1.Session", "Unlock")
    look = eventually(lambda: entries(machine, "desktopLook"), 10)
    assert look and look[0]["SMARTSTACK_SESSION"] == "_31" and look[0]["SMARTSTACK_STACK"] == "desktop.apps"
    # What the user opens next after the look teaches the ranking.
    launch_scope(machine, "app-gnome-org.gnome.Nautilus-2001.scope")
    assert acknowledged(machine, "app-gnome-org.gnome.Nautilus-2001.scope")
    assert len(donations(machine, "org.gnome.Nautilus")) == 4
    assert eventually(lambda: service_call(machine, "io.smartstack.Shell", "Explain", stack="desktop.apps")[
        "learnedFromLooks"] > looks_before, 10)
    def locked_hint(value):
        machine.run("busctl", "emit", "/org/freedesktop/login1/session/_31", "org.freedesktop.DBus.Properties",
                    "PropertiesChanged", "sa{sv}as", "org.freedesktop.login1.Session", "1", "LockedHint", "b",
                    value, "0")

    # The screen locker's LockedHint false after that Unlock is the same unlock: no second look.
    locked_hint("false")
    time.sleep(1.0)
    assert len(entries(machine, "desktopLook")) == 1
    # LockedHint turning true is no look; turning false again is the next unlock.
    locked_hint("true")
    time.sleep(1.0)
    assert len(entries(machine, "desktopLook")) == 1
    locked_hint("false")
    assert eventually(lambda: len(entries(machine, "desktopLook")) == 2, 10)
    # Locked, then Unlock (loginctl unlock-session) and the locker's LockedHint false: one look.
    locked_hint("true")
    machine.run("busctl", "emit", "/org/freedesktop/login1/session/_31", "org.freedesktop.login1.Session", "Unlock")
    locked_hint("false")
    assert eventually(lambda: len(entries(machine, "desktopLook")) == 3, 10)
    time.sleep(1.0)
    assert len(entries(machine, "desktopLook")) == 3

    counts = {app: len(donations(machine, app)) for app in ("org.gnome.Nautilus", "org.mozilla.firefox")}

    # smartstack-desktop restarts: the units still running are seen again and not donated twice; a launch
    # made while it was stopped is caught up.
    machine.run("systemctl", "stop", "smartstack-desktop.service")
    launch_scope(machine, "app-gnome-org.gnome.gedit-555.scope")
    machine.run("systemctl", "start", "smartstack-desktop.service", timeout=60)
    assert acknowledged(machine, "app-gnome-org.gnome.gedit-555.scope")
    assert len(donations(machine, "org.gnome.gedit")) == 1
    assert {app: len(donations(machine, app)) for app in counts} == counts

    # smartstackd goes away (service and socket): a launch meanwhile is kept and sent once it is back.
    machine.run("systemctl", "stop", "smartstackd.service", "smartstackd.socket")
    launch_service(machine, "app-org.kde.kate@42.service")
    assert eventually(lambda: entries(machine, "desktopDisconnected"), 15)
    machine.run("systemctl", "start", "smartstackd.socket")
    assert acknowledged(machine, "app-org.kde.kate@42.service")
    assert len(donations(machine, "org.kde.kate")) == 1
    assert eventually(lambda: entries(machine, "desktopReconnected"), 5)
    assert {app: len(donations(machine, app)) for app in counts} == counts, "no launch donated twice"
    assert len(donations(machine, "org.gnome.gedit")) == 1

    # A restart of smartstackd alone (socket kept): nothing lost, nothing twice.
    machine.run("systemctl", "restart", "smartstackd.service")
    launch_scope(machine, "app-gnome-org.gnome.gedit-556.scope")
    assert acknowledged(machine, "app-gnome-org.gnome.gedit-556.scope")
    assert len(donations(machine, "org.gnome.gedit")) == 2

    # The bus restarts: smartstack-desktop reconnects and goes on.
    machine.run("systemctl", "restart", "dbus.service")
    assert eventually(lambda: entries(machine, "desktopBusLost"), 10)
    assert eventually(lambda: len(entries(machine, "desktopBusConnected")) >= 3, 15)
    launch_scope(machine, "app-gnome-org.gnome.gedit-557.scope")
    assert acknowledged(machine, "app-gnome-org.gnome.gedit-557.scope")
    assert len(donations(machine, "org.gnome.gedit")) == 3
    assert {app: len(donations(machine, app)) for app in counts} == counts
    assert len(donations(machine, "org.kde.kate")) == 1

    # The stack now follows the counts: gedit (3) and Nautilus (4) are the two most launched.
    stack = service_call(machine, "io.smartstack.Shell", "ListStacks")["stacks"][0]
    assert [w["app"] for w in stack["widgets"]] == ["org.gnome.Nautilus", "org.gnome.gedit"]
    # The stack changed its apps after the look was learned; what was learned stayed (same instance ids).
    assert [e.get("SMARTSTACK_ORDER") for e in entries(machine, "desktopStackChanged")][-1] == \
        "org.gnome.Nautilus,org.gnome.gedit"
    assert service_call(machine, "io.smartstack.Shell", "Explain", stack="desktop.apps")["learnedFromLooks"] >= 1
    assert machine.show("smartstack-desktop.service", "NRestarts") == "0"
    print("donations:", {app: len(donations(machine, app)) for app in (
        "org.gnome.Nautilus", "org.mozilla.firefox", "org.gnome.gedit", "org.kde.kate", "org.gnome.Terminal")},
        "stack:", [w["app"] for w in stack["widgets"]], "looks learned from:", looks_before, "->",
        service_call(machine, "io.smartstack.Shell", "Explain", stack="desktop.apps")["learnedFromLooks"],
        "journal:", {name: len(entries(machine, name)) for name in MESSAGE_IDS},
        "seconds: %.1f" % (time.monotonic() - started))
    assert time.monotonic() - started < 120


USER_ENVIRONMENT = ("env", "XDG_RUNTIME_DIR=/run/user/0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus")


def _no_user_session():
    if not os.path.exists("/lib/systemd/systemd-logind"):
        return "needs systemd-logind"
    if not os.path.exists("/usr/lib/systemd/user/dbus.socket"):
        return "needs dbus-user-session (make deps)"
    try:
        if "pam_systemd" not in pathlib.Path("/etc/pam.d/common-session").read_text():
            return "needs pam_systemd in /etc/pam.d/common-session (libpam-systemd, make deps)"
    except OSError:
        return "needs /etc/pam.d/common-session"
    return None


@pytest.mark.skipif(_no_user_session() is not None, reason=str(_no_user_session()))
def test_user_session_with_real_logind(machine):
    """The user instance as on a desktop: a real logind session (a PAM login through pam_systemd) starts root's
    user manager and user bus (dbus-user-session); smartstackd and smartstack-desktop run from the repository's
    user units under it; apps are launched as the user's transient units; `loginctl unlock-session` makes
    logind itself send Unlock, and SetLockedHint makes it send PropertiesChanged of LockedHint. An unlock of
    another user's session is no look. /root is private to the namespace, so the user's state stays there."""
    try:
        user_scenario(machine)
    except AssertionError:
        output = machine.run("journalctl", "--no-pager", "-o", "short-precise", "-n", "200", check=False).stdout
        print(output[-8000:])
        raise


def user_scenario(machine):
    machine.run("systemctl", "start", "systemd-logind.service")
    machine.run("systemd-run", "--quiet", "--unit=console-login", "-p", "PAMName=login", "-p", "User=root",
                "sleep", "600")

    def root_session():
        for line in machine.run("loginctl", "list-sessions", "--no-legend").stdout.splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[1] == "0":
                return fields[0]
        return None
    session = eventually(root_session, 15)
    assert session, machine.run("loginctl", "list-sessions").stdout
    assert eventually(lambda: machine.show("user@0.service", "ActiveState") == "active", 20)
    assert eventually(lambda: os.path.exists(f"/proc/{machine.systemd}/root/run/user/0/bus"), 10)

    machine.run(*USER_ENVIRONMENT, "systemctl", "--user", "start", "smartstackd.socket")
    machine.run(*USER_ENVIRONMENT, "systemctl", "--user", "start", "smartstack-desktop.service", timeout=60)
    status = machine.run(*USER_ENVIRONMENT, "systemctl", "--user", "show", "-P", "StatusText",
                         "smartstack-desktop.service").stdout.strip()
    assert status == "watching the user service manager"
    address = f"unix:/proc/{machine.systemd}/root/run/user/0/smartstack/io.smartstack"
    # StateDirectory= of a user unit: $XDG_STATE_HOME from systemd 254 on, $XDG_CONFIG_HOME before.
    home = pathlib.Path(f"/proc/{machine.systemd}/root/root")
    state_paths = [home / folder / "smartstack-desktop" / "desktop-state.json" for folder in (".local/state", ".config")]

    def user_call(interface, method, **parameters):
        with varlink.Client(address=address) as client:
            with client.open(interface, namespaced=False) as remote:
                return getattr(remote, method)(**parameters)

    def settled(unit):
        invocation = eventually(lambda: machine.run(
            *USER_ENVIRONMENT, "systemctl", "--user", "show", "-P", "InvocationID", unit).stdout.strip(), 10)
        assert invocation, unit

        def done():
            try:
                current = json.loads(next(path for path in state_paths if path.exists()).read_text())
            except (StopIteration, OSError, ValueError):
                return False
            return invocation in current["state"]["invocations"] and current["pending"] == []
        return eventually(done, 20)

    machine.run("sh", "-c", "XDG_RUNTIME_DIR=/run/user/0 systemd-run --user --quiet --scope "
                "--unit=app-gnome-org.gnome.Nautilus-1234.scope sleep 600 >/dev/null 2>&1 &")
    assert settled("app-gnome-org.gnome.Nautilus-1234.scope")
    machine.run(*USER_ENVIRONMENT, "systemd-run", "--user", "--quiet",
                "--unit=app-flatpak-org.mozilla.firefox@5678.service", "sleep", "600")
    assert settled("app-flatpak-org.mozilla.firefox@5678.service")
    for app in ("org.gnome.Nautilus", "org.mozilla.firefox"):
        listed = user_call("io.smartstack.Provider", "ListDonations", app=app)["donations"]
        assert [d["intent"] for d in listed] == ["open"], app
    stack = user_call("io.smartstack.Shell", "ListStacks")["stacks"][0]
    assert stack["stack"] == "desktop.apps"
    assert [w["app"] for w in stack["widgets"]] == ["org.gnome.Nautilus", "org.mozilla.firefox"]

    # logind's own signals: Unlock from loginctl unlock-session, PropertiesChanged from SetLockedHint.
    machine.run("loginctl", "unlock-session", session)
    looks = eventually(lambda: entries(machine, "desktopLook", user=True), 10)
    assert looks and len(looks) == 1
    path = machine.run("busctl", "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                       "org.freedesktop.login1.Manager", "GetSession", "s", session).stdout.split()[1].strip('"')
    assert looks[0]["SMARTSTACK_SESSION"] == path.rsplit("/", 1)[1]
    machine.run("busctl", "call", "org.freedesktop.login1", path, "org.freedesktop.login1.Session",
                "SetLockedHint", "b", "true")
    machine.run("busctl", "call", "org.freedesktop.login1", path, "org.freedesktop.login1.Session",
                "SetLockedHint", "b", "false")
    assert eventually(lambda: len(entries(machine, "desktopLook", user=True)) == 2, 10)

    # Another user's session unlocking is not this user's look.
    machine.run("systemd-run", "--quiet", "--unit=other-login", "-p", "PAMName=login", "-p", "User=nobody",
                "sleep", "600")

    def other_session():
        for line in machine.run("loginctl", "list-sessions", "--no-legend").stdout.splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[1] == "65534":
                return fields[0]
        return None
    other = eventually(other_session, 15)
    assert other, machine.run("loginctl", "list-sessions").stdout
    machine.run("loginctl", "unlock-session", other)
    machine.run("loginctl", "unlock-session", session)
    assert eventually(lambda: len(entries(machine, "desktopLook", user=True)) == 3, 10)
    time.sleep(1.0)
    sessions = [e["SMARTSTACK_SESSION"] for e in entries(machine, "desktopLook", user=True)]
    assert len(sessions) == 3 and set(sessions) == {path.rsplit("/", 1)[1]}, sessions

    # GNOME Shell's overview: a stand-in owns org.gnome.Shell on the user's bus (started after smartstack-desktop
    # connected, as a shell that comes up later would) and serves OverviewActive as gnome-shell does; setting it
    # opens the overview and the owner sends PropertiesChanged. Each opening is one look.
    user_bus = f"unix:path=/proc/{machine.systemd}/root/run/user/0/bus"
    shell = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).with_name("fake_gnome_shell.py")), user_bus],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert shell.stdout.readline().strip() == "ready"
        bus_env = ("env", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus")

        def overview(open_):
            machine.run(*bus_env, "busctl", "--user", "set-property", "org.gnome.Shell", "/org/gnome/Shell",
                        "org.gnome.Shell", "OverviewActive", "b", "true" if open_ else "false")

        def overview_looks():
            return entries(machine, "desktopOverviewLook", user=True)
        looks_before = user_call("io.smartstack.Shell", "Explain", stack="desktop.apps")["learnedFromLooks"]
        overview(True)
        assert eventually(lambda: len(overview_looks()) == 1, 10)
        assert overview_looks()[0]["SMARTSTACK_STACK"] == "desktop.apps"
        # The look teaches the ranking like an unlock's: the next launch is its outcome.
        machine.run("sh", "-c", "XDG_RUNTIME_DIR=/run/user/0 systemd-run --user --quiet --scope "
                    "--unit=app-gnome-org.gnome.Nautilus-4321.scope sleep 600 >/dev/null 2>&1 &")
        assert settled("app-gnome-org.gnome.Nautilus-4321.scope")
        assert eventually(lambda: user_call("io.smartstack.Shell", "Explain", stack="desktop.apps")[
            "learnedFromLooks"] > looks_before, 10)
        # Closing is no look; opening again is the next.
        overview(False)
        overview(True)
        assert eventually(lambda: len(overview_looks()) == 2, 10)
        # The same PropertiesChanged from a peer that does not own org.gnome.Shell is no look.
        overview(False)
        machine.run(*bus_env, "busctl", "--user", "emit", "/org/gnome/Shell", "org.freedesktop.DBus.Properties",
                    "PropertiesChanged", "sa{sv}as", "org.gnome.Shell", "1", "OverviewActive", "b", "true", "0")
        time.sleep(1.5)
        assert len(overview_looks()) == 2
        # Unlock looks are still counted apart from the overview's.
        assert len(entries(machine, "desktopLook", user=True)) == 3
    finally:
        shell.kill()
        shell.wait(timeout=10)
