"""Scenarios through the independent Python varlink client: register, configure, donate, rank, subscribe."""
import socket
import threading
import time

import pytest
import varlink

from helpers import FrameReader, call, encode, now_plus, setup_stack
from storage_support import StatefulDaemon


def get_stack(address, stack="home", **extra):
    return call(address, "io.smartstack.Shell", "GetStack", stack=stack, **extra)


def test_register_configure_donate_get_stack(daemon):
    reply = setup_stack(daemon.address)
    assert reply["revision"] >= 1
    before = get_stack(daemon.address)
    assert [entry["instance"] for entry in before["order"]] == ["mail", "news", "maps"]
    assert before["stack"] == "home"
    # The user keeps opening maps: it rises to the top.
    with varlink.Client(address=daemon.address) as client:
        with client.open("io.smartstack.Provider", namespaced=False) as provider:
            for index in range(6):
                donated = provider.Donate(app="com.example.maps", intent="open", id=f"m{index}")
                assert donated["id"] == f"m{index}"
            generated = provider.Donate(app="com.example.maps", intent="open")
            assert generated["id"]
    after = get_stack(daemon.address)
    assert after["order"][0]["instance"] == "maps"
    assert after["revision"] > before["revision"]
    top = after["order"][0]
    assert top["position"] == 0
    assert top["reason"] in ("behaviour", "engagement")
    assert isinstance(top["contributions"], dict) and top["contributions"]
    assert all(isinstance(value, float) for value in top["contributions"].values())
    listed = call(daemon.address, "io.smartstack.Provider", "ListDonations", app="com.example.maps")
    assert [donation["id"] for donation in listed["donations"]][:6] == [f"m{index}" for index in range(6)]
    assert len(listed["donations"]) == 7
    page = call(daemon.address, "io.smartstack.Provider", "ListDonations", app="com.example.maps", after="m2", limit=2)
    assert [donation["id"] for donation in page["donations"]] == ["m3", "m4"]
    deleted = call(daemon.address, "io.smartstack.Provider", "DeleteDonations", app="com.example.maps", ids=["m0", "m1"])
    assert deleted["deleted"] == 2
    stats = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
    assert stats["stacks"] == 1 and stats["widgets"] == 3 and stats["donations"] == 5


def test_timeline_relevance_rotates_to_top_at_entry_date_and_back_after_duration(daemon):
    setup_stack(daemon.address, developer_mode=True)
    # news becomes relevant in 2 s for 2 s.
    start, end = 2.0, 2.0
    reply = call(
        daemon.address, "io.smartstack.Provider", "SubmitTimeline", app="com.example.news", kind="main",
        entries=[{"date": now_plus(-60)}, {"date": now_plus(start), "relevance": {"score": 1.0, "duration": end}}])
    assert "warnings" in reply
    assert get_stack(daemon.address)["order"][0]["instance"] == "mail"
    # The future is visible without waiting: GetStack at a time.
    future = get_stack(daemon.address, at=now_plus(start + end / 2))
    assert future["order"][0]["instance"] == "news"
    assert future["order"][0]["reason"] == "relevance"

    seen = []
    with varlink.Client(address=daemon.address) as client:
        with client.open("io.smartstack.Shell", namespaced=False) as shell:
            began = time.monotonic()
            for update in shell.Subscribe(stacks=["home"], _more=True):
                seen.append((time.monotonic() - began, update["order"][0]["instance"], update["revision"]))
                if len(seen) == 3 or time.monotonic() - began > 10:
                    break
    # The current order first, then news on top (pushed at the entry's date, nobody asked), then back.
    assert [top for _, top, _ in seen] == ["mail", "news", "mail"], seen
    assert 1.0 < seen[1][0] < 4.0, seen
    assert seen[2][0] - seen[1][0] > 1.0, seen
    assert seen[0][2] < seen[1][2] < seen[2][2]


def listen_in_background(address, stack, count):
    """Subscribes to `stack` on a thread of its own until `count` replies came; returns the replies (filled as they
    come) and the thread, once the first reply (the current order) arrived."""
    updates = []
    subscribed = threading.Event()

    def listen():
        with varlink.Client(address=address) as client:
            with client.open("io.smartstack.Shell", namespaced=False) as shell:
                for update in shell.Subscribe(stacks=[stack], _more=True):
                    updates.append(update)
                    subscribed.set()
                    if len(updates) == count:
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert subscribed.wait(5)
    return updates, listener


def test_subscribe_receives_current_order_then_the_change(daemon):
    setup_stack(daemon.address)
    updates, listener = listen_in_background(daemon.address, "home", 2)
    # The shell reorders the stack by hand (a configuration with another order publishes at once).
    call(
        daemon.address, "io.smartstack.Shell", "ConfigureStack", stack="home", family="systemMedium",
        widgets=[{"instance": app, "app": f"com.example.{app}", "kind": "main"} for app in ("maps", "mail", "news")],
        smartRotate=False)
    listener.join(5)
    assert len(updates) == 2, updates
    assert [entry["instance"] for entry in updates[0]["order"]] == ["mail", "news", "maps"]
    assert [entry["instance"] for entry in updates[1]["order"]] == ["maps", "mail", "news"]
    assert updates[1]["revision"] > updates[0]["revision"]


def expect_error(name, function, **parameters):
    try:
        function(**parameters)
    except varlink.VarlinkError as error:
        assert error.error() == name, (error.error(), error.parameters())
        return error.parameters()
    raise AssertionError(f"expected {name}")


def test_errors_are_typed_and_name_what_was_wrong(daemon):
    setup_stack(daemon.address)
    with varlink.Client(address=daemon.address) as client:
        with client.open("io.smartstack.Shell", namespaced=False) as shell:
            found = expect_error("io.smartstack.Shell.NotFound", shell.GetStack, stack="nope")
            assert found["kind"] == "stack" and found["id"] == "nope"
            bad = expect_error(
                "org.varlink.service.InvalidParameter", shell.GetStack, stack="home", at="yesterday")
            assert bad["parameter"] == "at"
            bad = expect_error(
                "org.varlink.service.InvalidParameter", shell.RecordEngagement, stack="home", instance="mail",
                kind="tap", duration=-1.0)
            assert bad["parameter"] == "duration"
            # The same connection keeps working after errors.
            assert shell.GetStack(stack="home")["stack"] == "home"
        with client.open("io.smartstack.Provider", namespaced=False) as provider:
            bad = expect_error(
                "org.varlink.service.InvalidParameter", provider.Donate, app="not an app id", intent="open")
            assert bad["parameter"] == "app"
            conflict = expect_error(
                "io.smartstack.Provider.NotFound", provider.SubmitTimeline, app="com.example.nope", kind="main",
                entries=[{"date": now_plus(0)}])
            assert conflict["kind"] in ("widgetKind", "kind")


def test_a_reload_request_carries_the_instances_configuration(daemon):
    """WatchReloads tells the provider how each instance is configured, so it can render that instance's timeline."""
    address = daemon.address
    call(address, "io.smartstack.Provider", "RegisterWidget", app="org.ex.weather", kind="city",
         displayName="Weather", families=["systemMedium"],
         intent={"type": "CityIntent", "parameters": [{"name": "city", "type": "string"}]})
    call(address, "io.smartstack.Provider", "RegisterWidget", app="org.ex.weather", kind="summary",
         displayName="Weather today", families=["systemMedium"])
    call(address, "io.smartstack.Shell", "ConfigureStack", stack="home", family="systemMedium", widgets=[
        {"instance": "paris", "app": "org.ex.weather", "kind": "city", "configuration": {"city": "Paris"}},
        {"instance": "berlin", "app": "org.ex.weather", "kind": "city", "configuration": {"city": "Berlin"}},
        {"instance": "today", "app": "org.ex.weather", "kind": "summary"}])
    received = []
    ready = threading.Event()
    done = threading.Event()

    def watch():
        with varlink.Client(address=address) as client:
            with client.open("io.smartstack.Provider", namespaced=False) as provider:
                ready.set()
                for reply in provider.WatchReloads(app="org.ex.weather", _more=True):
                    received.append(reply)
                    if len(received) == 3:
                        done.set()
                        return

    threading.Thread(target=watch, daemon=True).start()
    assert ready.wait(10)
    time.sleep(0.5)
    requested = call(address, "io.smartstack.Provider", "ReloadTimelines", app="org.ex.weather")
    assert sorted(requested["requested"]) == ["berlin", "paris", "today"], requested
    assert done.wait(10), received
    replies = {reply["instance"]: reply for reply in received}
    assert replies["paris"]["configuration"] == {"city": "Paris"}, replies
    assert replies["berlin"]["configuration"] == {"city": "Berlin"}, replies
    assert replies["today"]["configuration"] == {}, replies
    assert replies["today"]["kind"] == "summary" and replies["paris"]["kind"] == "city"


def test_a_reload_sent_while_nobody_watched_reaches_the_provider_when_it_watches(workdir):
    """A reload request is kept until a timeline answers it: a provider that was not watching (not running, the
    service restarting, its stream opened a moment after the request on another connection) gets it first."""
    service = StatefulDaemon(workdir)
    try:
        daemon = service.start()
        address = daemon.address
        call(address, "io.smartstack.Provider", "RegisterWidget", app="org.ex.weather", kind="radar",
             families=["systemMedium"])
        call(address, "io.smartstack.Shell", "ConfigureStack", stack="home", family="systemMedium", widgets=[
            {"instance": "rad", "app": "org.ex.weather", "kind": "radar"},
            {"instance": "rad2", "app": "org.ex.weather", "kind": "radar"}])
        requested = call(address, "io.smartstack.Provider", "ReloadTimelines", app="org.ex.weather")
        assert sorted(requested["requested"]) == ["rad", "rad2"], requested
        # rad2 is answered before anyone watches; rad is not.
        call(address, "io.smartstack.Provider", "SubmitTimeline", app="org.ex.weather", kind="radar",
             instance="rad2", entries=[{"date": now_plus(0)}], policy={"kind": "never"})

        def watch():
            stream = daemon.raw(timeout=10)
            stream.sendall(encode("io.smartstack.Provider.WatchReloads", {"app": "org.ex.weather"}, more=True))
            return stream, FrameReader(stream)

        stream, reader = watch()
        first = reader.next()["parameters"]
        assert (first["instance"], first["reason"]) == ("rad", "providerRequest"), first
        stream.settimeout(1)
        with pytest.raises(socket.timeout):
            reader.next()  # rad2 was answered: nothing more
        stream.close()
        # Still owed after kill -9 (from the stored log), until a timeline answers it.
        service.kill()
        daemon = service.start()
        stream, reader = watch()
        assert reader.next()["parameters"]["instance"] == "rad"
        call(daemon.address, "io.smartstack.Provider", "SubmitTimeline", app="org.ex.weather", kind="radar",
             instance="rad", entries=[{"date": now_plus(0)}], policy={"kind": "never"})
        stream.close()
        stream, reader = watch()
        stream.settimeout(1)
        with pytest.raises(socket.timeout):
            reader.next()
        stream.close()
        service.stop()
    finally:
        service.close()


def test_a_removed_stack_is_pushed_and_its_id_never_repeats_a_revision(make_daemon):
    """A subscriber learns that a stack it follows is gone (one last reply, removed true, no entries), and a stack
    configured again under that id starts its revisions above the removed one's, so a shell that applies only
    revisions above the last it saw never drops the new stack's orders (survives a restart: the floor is state)."""
    daemon = make_daemon(subdirectory="d")
    setup_stack(daemon.address, stack="dash", apps=("mail", "news"))
    updates, listener = listen_in_background(daemon.address, "dash", 3)
    last = updates[0]["revision"]
    call(daemon.address, "io.smartstack.Shell", "RemoveStack", stack="dash")
    assert call(daemon.address, "io.smartstack.Shell", "ListStacks")["stacks"] == []
    configured = call(
        daemon.address, "io.smartstack.Shell", "ConfigureStack", stack="dash", family="systemMedium",
        widgets=[{"instance": "maps2", "app": "com.example.mail", "kind": "main"}])
    listener.join(5)
    assert len(updates) == 3, updates
    removal, again = updates[1], updates[2]
    assert removal["removed"] is True and removal["order"] == [] and removal["revision"] > last, removal
    assert "removed" not in again and [e["instance"] for e in again["order"]] == ["maps2"]
    assert again["revision"] > removal["revision"] and configured["revision"] > removal["revision"]
    # The floor is kept across a restart: removed again, configured again, still above.
    assert daemon.stop() == 0, daemon.log()
    daemon = make_daemon(subdirectory="d")
    call(daemon.address, "io.smartstack.Shell", "RemoveStack", stack="dash")
    reply = call(
        daemon.address, "io.smartstack.Shell", "ConfigureStack", stack="dash", family="systemMedium",
        widgets=[{"instance": "maps3", "app": "com.example.mail", "kind": "main"}])
    assert reply["revision"] > again["revision"] + 1, (reply, again)
