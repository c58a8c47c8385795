"""Durable state end to end: restart equivalence through the socket, crash safety under kill -9, and the clear
errors for a damaged file, a newer schema, a read-only state directory and a full disk."""
import os
import pathlib
import random
import shutil
import subprocess
import sqlite3
import threading
import time

import pytest

from conftest import DAEMON
from storage_support import (
    RawClient, StatefulDaemon, at, can_mount, digest, integrity_check, list_donation_ids, mounted_tmpfs,
    start_failing)

APPS = ["com.example.mail", "com.example.news", "com.example.maps", "com.example.music"]
STACKS = {"home": APPS[:3], "side": APPS[2:]}
CRASH_ROUNDS = int(os.environ.get("SMARTSTACK_CRASH_ROUNDS", "20"))
CRASH_SEED = int(os.environ.get("SMARTSTACK_CRASH_SEED", "20261121"))
needs_mount = pytest.mark.skipif(not can_mount(), reason="needs root and permission to mount tmpfs")


def ok(reply):
    assert "error" not in reply, reply
    return reply.get("parameters", {})


def setup(client):
    for app in APPS:
        ok(client.call("io.smartstack.Provider.RegisterWidget", app=app, kind="main", displayName=app,
                       families=["systemMedium"]))
    for stack, apps in STACKS.items():
        widgets = [{"instance": f"{stack}.{app.split('.')[-1]}", "app": app, "kind": "main"} for app in apps]
        ok(client.call("io.smartstack.Shell.ConfigureStack", stack=stack, family="systemMedium", widgets=widgets))


def stored_setup(workdir):
    """A state directory holding the setup's stacks, its service stopped; returns the (stopped) daemon."""
    daemon = StatefulDaemon(workdir)
    try:
        running = daemon.start()
        client = RawClient(running.socket_path)
        setup(client)
        client.close()
        daemon.stop()
    finally:
        daemon.close()
    return daemon


def workload(client, seed, calls):
    """A seeded mix of every recording call, deletions and reads that publish. Timeline entries lie in the past or
    days ahead, so no scheduled change falls due while the test compares."""
    rng = random.Random(seed)
    for index in range(calls):
        stack = rng.choice(list(STACKS))
        app = rng.choice(STACKS[stack])
        instance = f"{stack}.{app.split('.')[-1]}"
        roll = rng.random()
        if roll < 0.5:
            group = "private" if rng.random() < 0.2 else None
            parameters = {"app": app, "intent": "open", "id": f"w{index}"}
            if group:
                parameters["groupId"] = group
            ok(client.call("io.smartstack.Provider.Donate", **parameters))
        elif roll < 0.6:
            ok(client.call("io.smartstack.Shell.RecordLook", stack=stack))
        elif roll < 0.68:
            ok(client.call("io.smartstack.Shell.RecordEngagement", stack=stack, instance=instance,
                           kind=rng.choice(["tap", "swipeAway", "impression"])))
        elif roll < 0.74:
            ok(client.call("io.smartstack.Shell.SetContext", key="focus", value=rng.choice(["work", "home"])))
        elif roll < 0.84:
            entries = [{"date": at(-rng.randint(60, 3_600)), "relevance": {"score": rng.choice([3, 1, 0, -1]),
                                                                          "duration": 0}},
                       {"date": at(3 * 86_400), "relevance": {"score": 2, "duration": 0}}]
            ok(client.call("io.smartstack.Provider.SubmitTimeline", app=app, kind="main", instance=instance,
                           entries=entries, policy={"kind": "never"}))
        elif roll < 0.86:
            ok(client.call("io.smartstack.Provider.DeleteDonations", app=app, groupId="private"))
        else:
            ok(client.call("io.smartstack.Shell.GetStack", stack=stack))


def observe(client, times):
    """Every stack's decision and explanation at fixed times, and every app's donations."""
    seen = {}
    for stack in STACKS:
        for moment in times:
            seen[f"get {stack} {moment}"] = ok(client.call("io.smartstack.Shell.GetStack", stack=stack, at=moment))
            seen[f"explain {stack} {moment}"] = ok(client.call("io.smartstack.Shell.Explain", stack=stack, at=moment))
    for app in APPS:
        seen[f"donations {app}"] = list_donation_ids(client, app)
    return seen


@pytest.mark.parametrize("ending", ["graceful", "kill -9"])
def test_restart_reproduces_every_decision_and_explanation(workdir, ending):
    daemon = StatefulDaemon(workdir)
    try:
        running = daemon.start()
        client = RawClient(running.socket_path)
        setup(client)
        workload(client, seed=7, calls=400)
        # A read at the current time publishes what is pending and waits until that is stored.
        for stack in STACKS:
            ok(client.call("io.smartstack.Shell.GetStack", stack=stack))
        times = [at(1), at(3_600), at(86_400)]
        before = observe(client, times)
        client.close()
        assert any(before[f"donations {app}"] for app in APPS)
        if ending == "graceful":
            daemon.stop()
        else:
            daemon.kill()
        running = daemon.start()
        client = RawClient(running.socket_path)
        after = observe(client, times)
        client.close()
        for key in before:
            assert after[key] == before[key], key
        daemon.stop()
    finally:
        daemon.close()


def test_kill9_never_loses_an_acknowledged_donation(workdir, capsys):
    """Rounds of concurrent donors, each recording the ids the service acknowledged, killed with SIGKILL at a
    seeded random moment; after each restart every acknowledged id is listed and the database is intact."""
    rng = random.Random(CRASH_SEED)
    daemon = StatefulDaemon(workdir)
    acknowledged = set()
    sent = set()
    lock = threading.Lock()
    try:
        running = daemon.start()
        for round_number in range(CRASH_ROUNDS):
            stop = threading.Event()

            def donor(worker, socket_path):
                try:
                    client = RawClient(socket_path, timeout=5.0)
                except OSError:
                    return
                index = 0
                try:
                    while not stop.is_set():
                        donation_id = f"r{round_number}-w{worker}-{index}"
                        app = APPS[worker % len(APPS)]
                        with lock:
                            sent.add((app, donation_id))
                        reply = client.call("io.smartstack.Provider.Donate", app=app, intent="open", id=donation_id)
                        if "error" not in reply:
                            with lock:
                                acknowledged.add((app, donation_id))
                        index += 1
                except (OSError, ConnectionError, ValueError):
                    pass  # the service was killed mid-call: that call was not acknowledged
                finally:
                    client.close()

            workers = [threading.Thread(target=donor, args=(worker, running.socket_path)) for worker in range(8)]
            for worker in workers:
                worker.start()
            time.sleep(rng.uniform(0.05, 0.5))
            daemon.kill()
            stop.set()
            for worker in workers:
                worker.join(timeout=10)
            assert integrity_check(daemon.database) == [("ok",)], f"round {round_number}"
            running = daemon.start()
            client = RawClient(running.socket_path)
            listed = set()
            for app in APPS:
                listed |= {(app, donation_id) for donation_id in list_donation_ids(client, app)}
            client.close()
            missing = acknowledged - listed
            assert not missing, f"round {round_number}: {len(missing)} acknowledged donations lost, e.g. {sorted(missing)[:3]}"
            assert listed <= sent, f"round {round_number}: donations nobody sent: {sorted(listed - sent)[:3]}"
        daemon.stop()
        assert integrity_check(daemon.database) == [("ok",)]
    finally:
        daemon.close()
    assert len(acknowledged) > CRASH_ROUNDS * 10
    with capsys.disabled():
        print(f"\ncrash safety: {CRASH_ROUNDS} kill -9 rounds (seed {CRASH_SEED}), "
              f"{len(acknowledged)} acknowledged donations verified after restarts, integrity_check ok")


def test_a_file_that_is_not_a_database_is_refused_untouched(workdir):
    state = pathlib.Path(workdir) / "state"
    state.mkdir()
    database = state / "smartstack.sqlite"
    database.write_bytes(b"not a database at all\n" * 100)
    before = digest(database)
    code, output = start_failing(workdir, state)
    assert code != 0
    assert str(database) in output and "not a database" in output, output
    assert digest(database) == before
    assert not (state / "smartstack.sqlite-wal").exists()


def test_a_damaged_database_is_refused_untouched(workdir):
    daemon = StatefulDaemon(workdir)
    try:
        running = daemon.start()
        client = RawClient(running.socket_path)
        setup(client)
        for index in range(300):
            ok(client.call("io.smartstack.Provider.Donate", app=APPS[0], intent="open", id=f"d{index}"))
        client.close()
        daemon.stop()
    finally:
        daemon.close()
    data = bytearray(daemon.database.read_bytes())
    data[100:8192] = bytes((index * 37) & 0xFF for index in range(100, 8192))  # header kept, schema page destroyed
    daemon.database.write_bytes(bytes(data))
    before = digest(daemon.database)
    code, output = start_failing(workdir, daemon.database.parent)
    assert code != 0
    assert str(daemon.database) in output, output
    assert digest(daemon.database) == before


def test_a_database_of_a_newer_schema_is_refused_untouched(workdir):
    daemon = stored_setup(workdir)
    connection = sqlite3.connect(daemon.database)
    connection.execute("INSERT INTO grdb_migrations(identifier) VALUES ('v9-next-release')")
    connection.execute("PRAGMA user_version = 9")
    connection.commit()
    connection.close()
    before = digest(daemon.database)
    code, output = start_failing(workdir, daemon.database.parent)
    assert code == 65, output
    assert str(daemon.database) in output and "newer" in output, output
    assert digest(daemon.database) == before


@needs_mount
def test_a_read_only_state_directory_is_refused(workdir):
    state = pathlib.Path(workdir) / "state"
    with mounted_tmpfs(state, "1m", read_only=True):
        code, output = start_failing(workdir, state)
    assert code == 73, output
    assert str(state / "smartstack.sqlite") in output, output


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_a_database_the_service_may_not_write_is_refused_at_start(workdir, readable_copy):
    """A database file the service's uid may read but not write (a restore that left it 0444 or root's) is refused
    at start with exit 73 naming it. Before, the service started, reported ready and failed every write."""
    daemon = stored_setup(workdir)
    os.chmod(workdir, 0o755)
    state = daemon.database.parent
    for path in [state, *state.iterdir()]:
        os.chown(path, 65534, 65534)
    binary = readable_copy(DAEMON)
    for owner, mode in ((65534, 0o444), (0, 0o600)):  # read-only for the service; root's alone
        os.chown(daemon.database, owner, owner)
        os.chmod(daemon.database, mode)
        before = digest(daemon.database)
        result = subprocess.run(
            [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", str(binary),
             "--listen", str(pathlib.Path(workdir) / "refused.sock"), "--state", str(state)],
            capture_output=True, text=True, timeout=30)
        output = result.stdout + result.stderr
        assert result.returncode == 73, output
        assert str(daemon.database) in output and "reading and writing" in output, output
        assert digest(daemon.database) == before


def test_an_online_backup_under_load_is_a_whole_database_the_service_starts_on(workdir):
    """The backup docs/storage.md gives (SQLite's online backup of the live file, here Python's sqlite3.backup,
    as `sqlite3 FILE ".backup COPY"` does) taken while donations are committed: the copy passes the integrity
    check, and a service started on it lists a prefix of what was acknowledged, at least all acknowledged before
    the backup began. (Copying the files one by one, as cp does, gave damaged copies.)"""
    (pathlib.Path(workdir) / "live").mkdir()
    daemon = StatefulDaemon(pathlib.Path(workdir) / "live")
    copy_directory = pathlib.Path(workdir) / "restored"
    try:
        running = daemon.start()
        client = RawClient(running.socket_path)
        setup(client)
        acknowledged = []
        stop = threading.Event()

        def donate():
            donor = RawClient(running.socket_path)
            index = 0
            while not stop.is_set():
                ok(donor.call("io.smartstack.Provider.Donate", app=APPS[0], intent="open", id=f"b{index}"))
                acknowledged.append(f"b{index}")
                index += 1
            donor.close()

        thread = threading.Thread(target=donate)
        thread.start()
        time.sleep(0.5)
        before = len(acknowledged)
        copy_directory.mkdir()
        source = sqlite3.connect(f"file:{daemon.database}?mode=ro", uri=True)
        target = sqlite3.connect(copy_directory / "smartstack.sqlite")
        source.backup(target, pages=64)
        target.close()
        source.close()
        time.sleep(0.2)
        stop.set()
        thread.join(timeout=30)
        client.close()
        daemon.stop()
    finally:
        daemon.close()
    assert before > 0
    assert integrity_check(copy_directory / "smartstack.sqlite") == [("ok",)]
    restored = StatefulDaemon(copy_directory.parent / "restored-run")
    restored.directory.mkdir()
    (restored.directory / "state").mkdir()
    os.replace(copy_directory / "smartstack.sqlite", restored.database)
    try:
        running = restored.start()
        client = RawClient(running.socket_path)
        listed = list_donation_ids(client, APPS[0])
        client.close()
        restored.stop()
    finally:
        restored.close()
    assert listed == acknowledged[:len(listed)], (len(listed), len(acknowledged))
    assert before <= len(listed) <= len(acknowledged)


@needs_mount
def test_a_full_disk_fails_the_calls_it_cannot_store_and_reads_go_on(workdir):
    daemon = StatefulDaemon(workdir)
    state = pathlib.Path(workdir) / "state"
    padding = {f"p{index}": "x" * 4_000 for index in range(4)}
    with mounted_tmpfs(state, "8m"):
        try:
            running = daemon.start()
            client = RawClient(running.socket_path)
            setup(client)
            filler = state / "filler"
            free = os.statvfs(state).f_bavail * os.statvfs(state).f_frsize
            filler.write_bytes(b"\0" * max(0, free - 400_000))
            acknowledged = []
            failure = None
            for index in range(1_000):
                reply = client.call("io.smartstack.Provider.Donate", app=APPS[0], intent="open", id=f"big{index}",
                                    parameters=padding)
                if "error" in reply:
                    failure = (f"big{index}", reply)
                    break
                acknowledged.append(f"big{index}")
            assert failure is not None, "the disk never filled"
            failed_id, reply = failure
            assert reply["error"] == "io.smartstack.Provider.StorageFailed", reply
            assert str(state / "smartstack.sqlite") in reply["parameters"]["reason"], reply
            # Nothing that was not stored is visible; everything acknowledged is; reads work.
            listed = list_donation_ids(client, APPS[0])
            assert listed == acknowledged
            ok(client.call("io.smartstack.Shell.GetStack", stack="home"))
            ok(client.call("io.smartstack.Shell.Explain", stack="home"))
            statistics = ok(client.call("io.smartstack.Admin.GetStatistics"))
            assert statistics["donations"] == len(acknowledged)
            # While the disk stays full, every recording call fails with the same clear error: storage is tried
            # again only once the disk has storageResumeFreeBytes (4 MiB) free. A test write alone fits in pages
            # SQLite already holds: the log took records again, the next commit failed, and the engine rolled
            # back every second.
            assert os.statvfs(state).f_bavail * os.statvfs(state).f_frsize < 4 << 20
            for index in range(30):
                again = client.call("io.smartstack.Provider.Donate", app=APPS[0], intent="open", id=f"more{index}",
                                    parameters=padding)
                assert again.get("error") == "io.smartstack.Provider.StorageFailed", again
                time.sleep(0.1)
            log = running.log()
            assert log.count("rolled back to the stored state") == 1, log
            assert "storage is tried again once the disk has more free space" in log, log
            # Space comes back: within a few seconds the service stores again, the failed call can be retried.
            filler.unlink()
            deadline = time.monotonic() + 10
            while True:
                retry = client.call("io.smartstack.Provider.Donate", app=APPS[0], intent="open", id=failed_id,
                                    parameters=padding)
                if "error" not in retry or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            ok(retry)
            client.close()
            daemon.stop()
            running = daemon.start()
            client = RawClient(running.socket_path)
            assert list_donation_ids(client, APPS[0]) == acknowledged + [failed_id]
            client.close()
            daemon.stop()
            assert integrity_check(daemon.database) == [("ok",)]
        finally:
            daemon.close()
