"""The service keeps its own clock (README "Time"): the five reproductions of issue 11 against the real daemon.

1. a future-dated call can't erase another app's donations (deletion, the real retention sweep, a restart);
2. future-dated calls don't move the clock (refused; reloads fire on time; `stack show` says now);
3. GetStack without `at` answers for now, as Explain does;
4. suggestions expire 24 h after their last donation, and subscribers are told;
5. dates are consistent: a withheld reload carries the call's date; a past `explain` sees only its past.
"""
import datetime
import pathlib
import queue
import threading
import time

import pytest
import varlink

from helpers import FrameReader, call, encode, now_plus, setup_stack
from test_ctl import ctl, ctl_json

PROVIDER = "io.smartstack.Provider"
SHELL = "io.smartstack.Shell"
ADMIN = "io.smartstack.Admin"


def parse(stamp):
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def seconds_from_now(stamp):
    return (parse(stamp) - datetime.datetime.now(datetime.timezone.utc)).total_seconds()


def expect_invalid(parameter, function, *args, **kwargs):
    with pytest.raises(varlink.VarlinkError) as raised:
        function(*args, **kwargs)
    error = raised.value
    assert error.error() == "org.varlink.service.InvalidParameter", error
    assert error.parameters()["parameter"] == parameter, error.parameters()
    return error


def raw_call(daemon, method, parameters):
    """One call on a raw socket; returns the reply frame (the Python client drops an error's `reason`)."""
    with daemon.raw() as connection:
        connection.sendall(encode(method, parameters))
        return FrameReader(connection).next()


def donations(address, app):
    return [d["id"] for d in call(address, PROVIDER, "ListDonations", app=app)["donations"]]


def test_a_future_date_cannot_erase_another_apps_donations(make_daemon):
    config = "retentionSweepSeconds = 1\nretentionDays = 28\n"
    daemon = make_daemon(config, subdirectory="state")
    address = daemon.address
    call(address, PROVIDER, "Donate", app="a.one", intent="X", id="a0")
    call(address, PROVIDER, "Donate", app="b.two", intent="Y", id="b0")
    # Older than retention: allowed as a backfill, and removed by the sweep on the service's clock.
    call(address, PROVIDER, "Donate", app="c.three", intent="Z", id="old", date=now_plus(-29 * 86_400))
    stored = call(address, ADMIN, "GetStatistics")["storedDonations"]
    for far in ("9999-12-31T23:59:59Z", now_plus(29 * 86_400)):
        expect_invalid("date", call, address, PROVIDER, "Donate", app="b.two", intent="Y", id="bf", date=far)
        reply = raw_call(daemon, PROVIDER + ".Donate", {"app": "b.two", "intent": "Y", "id": "bf", "date": far})
        assert reply["error"] == "org.varlink.service.InvalidParameter"
        assert reply["parameters"]["parameter"] == "date"
        assert "ahead of the service's clock" in reply["parameters"]["reason"], reply
    assert call(address, PROVIDER, "DeleteDonations", app="b.two", ids=["b0"])["deleted"] == 1
    assert donations(address, "a.one") == ["a0"]
    # The real sweep (every second here) runs on the service's clock: the 29-day-old one goes, nothing else.
    deadline = time.monotonic() + 15
    while "old" in donations(address, "c.three") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert donations(address, "c.three") == []
    time.sleep(2.5)  # two more sweeps
    assert donations(address, "a.one") == ["a0"] and donations(address, "b.two") == []
    assert call(address, ADMIN, "GetStatistics")["storedDonations"] == stored - 2
    assert daemon.stop() == 0
    restarted = make_daemon(config, subdirectory="state")
    assert donations(restarted.address, "a.one") == ["a0"]
    assert donations(restarted.address, "b.two") == []


def test_a_donate_retried_without_a_date_is_the_same_donation(make_daemon):
    """The service stamps each undated call with its own time, so a retry carries a later one: still the same
    donation under its id (acknowledged, listed once, across a restart too); other parameters are a Conflict."""
    daemon = make_daemon(subdirectory="state")
    sent = {"app": "org.a", "intent": "open", "id": "x1"}
    for _ in range(2):
        reply = raw_call(daemon, PROVIDER + ".Donate", sent)
        assert reply.get("parameters") == {"id": "x1"} and "error" not in reply, reply
        time.sleep(0.05)
    listed = call(daemon.address, PROVIDER, "ListDonations", app="org.a")["donations"]
    assert [d["id"] for d in listed] == ["x1"], listed
    other = raw_call(daemon, PROVIDER + ".Donate", {**sent, "parameters": {"city": "Paris"}})
    assert other["error"] == PROVIDER + ".Conflict", other
    # Dated, the retry's date is compared as before: an hour before the stored one is another donation.
    earlier = parse(listed[0]["date"]) - datetime.timedelta(hours=1)
    dated = raw_call(daemon, PROVIDER + ".Donate", {**sent, "date": earlier.isoformat()})
    assert dated["error"] == PROVIDER + ".Conflict", dated
    assert daemon.stop() == 0
    restarted = make_daemon(subdirectory="state")
    assert "error" not in raw_call(restarted, PROVIDER + ".Donate", sent)
    assert call(restarted.address, PROVIDER, "ListDonations", app="org.a")["donations"] == listed


def test_future_dated_calls_do_not_move_the_clock(daemon):
    setup_stack(daemon.address)
    for method, parameters in (
        ("Donate", {"app": "com.example.mail", "intent": "open"}),
        ("ReloadTimelines", {"app": "com.example.mail"}),
        ("SubmitTimeline", {"app": "com.example.news", "kind": "main", "entries": [{"date": now_plus(0)}]}),
    ):
        expect_invalid("date", call, daemon.address, PROVIDER, method, date="2030-01-01T08:00:00Z", **parameters)
    # The decision is for now, not 2030.
    shown = ctl_json(daemon, "stack", "show", "home")
    assert abs(seconds_from_now(shown["date"])) < 30, shown["date"]
    # An `after` reload 3 s from now fires then, not at once.
    received = queue.Queue()

    def watch():
        with varlink.Client(address=daemon.address) as client:
            with client.open(PROVIDER, namespaced=False) as provider:
                for reply in provider.WatchReloads(app="com.example.news", _more=True):
                    received.put((time.monotonic(), reply))
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)
    submitted = time.monotonic()
    call(daemon.address, PROVIDER, "SubmitTimeline", app="com.example.news", kind="main",
         entries=[{"date": now_plus(-1)}], policy={"kind": "after", "date": now_plus(3)})
    fired, reply = received.get(timeout=15)
    assert reply["reason"] == "policyDate"
    assert fired - submitted >= 2.5, fired - submitted
    assert abs(seconds_from_now(reply["date"])) < 30


def test_get_stack_without_a_time_answers_for_now_as_explain_does(daemon):
    setup_stack(daemon.address)
    for app in ("mail", "news", "maps"):
        call(daemon.address, PROVIDER, "SubmitTimeline", app=f"com.example.{app}", kind="main",
             entries=[{"date": now_plus(-5), "relevance": {"score": 1.0, "duration": 3600}}])
    current = call(daemon.address, SHELL, "GetStack", stack="home")
    assert abs(seconds_from_now(current["date"])) < 61
    explained = call(daemon.address, SHELL, "Explain", stack="home")
    at_now = call(daemon.address, SHELL, "GetStack", stack="home", at=now_plus(0))
    for decision in (current, at_now):
        # Each widget: relevance 1 plus its behaviour probability (which sum to 1 over the stack).
        assert [e["reason"] for e in decision["order"]] == ["relevance"] * 3, decision
        assert all(e["score"] > 1 for e in decision["order"]), decision
        assert sum(e["score"] for e in decision["order"]) == pytest.approx(4.0, abs=1e-6), decision
    assert [e["instance"] for e in current["order"]] == [e["instance"] for e in explained["order"]]
    assert [e["reason"] for e in current["order"]] == [e["reason"] for e in explained["order"]]
    assert [e["score"] for e in current["order"]] == pytest.approx([e["score"] for e in explained["order"]], abs=1e-9)
    assert current["date"] == explained["date"]


def suggestion_stack(address):
    """A stack of notes and Berlin's weather, with suggestions on: a city donated to is a candidate."""
    call(address, PROVIDER, "RegisterWidget", app="org.ex.weather", kind="city", families=["systemMedium"],
         intent={"type": "CityIntent", "parameters": [{"name": "city", "type": "string"}]})
    call(address, PROVIDER, "RegisterWidget", app="org.ex.notes", kind="main", families=["systemMedium"])
    call(address, SHELL, "ConfigureStack", stack="home", family="systemMedium", suggestions=True, widgets=[
        {"instance": "notes", "app": "org.ex.notes", "kind": "main"},
        {"instance": "berlin", "app": "org.ex.weather", "kind": "city", "configuration": {"city": "Berlin"}}])


def used_for_ten_minutes(address, city, prefix):
    """Six donations for the weather of `city` (not placed), a minute apart over the last ten minutes: a suggestion."""
    for index in range(6):
        call(address, PROVIDER, "Donate", app="org.ex.weather", intent="CityIntent", parameters={"city": city},
             id=f"{prefix}{index}", date=now_plus(-600 + 60 * index))


def test_suggestions_expire_24_hours_after_their_last_donation(daemon):
    address = daemon.address
    suggestion_stack(address)
    # Six donations for Tokyo (not placed), the last one 24 h minus 8 s ago.
    last = -86_400 + 8
    for index in range(6):
        call(address, PROVIDER, "Donate", app="org.ex.weather", intent="CityIntent", parameters={"city": "Tokyo"},
             id=f"t{index}", date=now_plus(last - 5 + index))
    shown = call(address, SHELL, "GetStack", stack="home")
    assert shown["order"][0]["suggested"] and shown["order"][0]["reason"] == "suggestion", shown
    # A month later (no event between), none.
    month = call(address, SHELL, "GetStack", stack="home", at=now_plus(31 * 86_400))
    assert not any(entry["suggested"] for entry in month["order"])
    # In real time: a subscriber is told when it expires, without any other call.
    with varlink.Client(address=address) as client:
        with client.open(SHELL, namespaced=False) as shell:
            started = time.monotonic()
            for update in shell.Subscribe(stacks=["home"], _more=True):
                if not any(entry["suggested"] for entry in update["order"]):
                    break
                assert time.monotonic() - started < 30, "the suggestion did not expire"
    assert 2 <= time.monotonic() - started <= 30
    assert not any(entry["suggested"] for entry in call(address, SHELL, "GetStack", stack="home")["order"])


def test_a_suggestion_swiped_away_leaves_the_stack_and_stays_out(daemon):
    address = daemon.address
    suggestion_stack(address)
    used_for_ten_minutes(address, "Tokyo", "t")
    top = call(address, SHELL, "GetStack", stack="home")["order"][0]
    assert top["suggested"] and top["instance"] == "suggestion:org.ex.weather/city?city=Tokyo", top
    # The shell reports what the user did with it, as with a widget (each was InvalidParameter before).
    call(address, SHELL, "RecordEngagement", stack="home", instance=top["instance"], kind="impression", duration=3.0)
    call(address, SHELL, "RecordEngagement", stack="home", instance=top["instance"], kind="tap")
    explained = call(address, SHELL, "Explain", stack="home", instance=top["instance"])
    assert explained["order"][0]["instance"] == top["instance"] and explained["widgets"] == [], explained
    with varlink.Client(address=address) as client:
        with client.open(SHELL, namespaced=False) as shell:
            updates = shell.Subscribe(stacks=["home"], _more=True)
            assert next(updates)["order"][0]["suggested"]
            call(address, SHELL, "RecordEngagement", stack="home", instance=top["instance"], kind="swipeAway")
            pushed = next(updates)
            assert not any(entry["suggested"] for entry in pushed["order"]), pushed
    # Another donation does not bring it back, nor does the rest of the day (the engine test sees it come back).
    call(address, PROVIDER, "Donate", app="org.ex.weather", intent="CityIntent", parameters={"city": "Tokyo"},
         id="t6")
    assert not any(entry["suggested"] for entry in call(address, SHELL, "GetStack", stack="home")["order"])
    later = call(address, SHELL, "GetStack", stack="home", at=now_plus(86_400 - 60))
    assert not any(entry["suggested"] for entry in later["order"]), later
    # An id naming no suggestion of the stack is refused, naming the instance.
    with pytest.raises(varlink.VarlinkError) as refused:
        call(address, SHELL, "RecordEngagement", stack="home", instance="suggestion:org.ex.weather/city?city=Oslo",
             kind="tap")
    assert refused.value.error() == "org.varlink.service.InvalidParameter"
    assert refused.value.parameters()["parameter"] == "instance"


def test_a_suggestion_carries_its_configuration_and_can_be_placed_as_it_is(daemon):
    address = daemon.address
    suggestion_stack(address)
    used_for_ten_minutes(address, "São Paulo", "s")
    top = call(address, SHELL, "GetStack", stack="home")["order"][0]
    assert top["suggested"] and top["instance"] == "suggestion:org.ex.weather/city?city=S%C3%A3o%20Paulo", top
    assert top["configuration"] == {"city": "São Paulo"}, top
    assert all("configuration" not in entry for entry in call(address, SHELL, "GetStack", stack="home")["order"][1:])
    # The user keeps it: the shell adds the widget with the entry's app, kind and configuration, unchanged.
    call(address, SHELL, "ChangeStack", stack="home", add=[
        {"instance": "saopaulo", "app": top["app"], "kind": top["kind"], "configuration": top["configuration"]}])
    order = call(address, SHELL, "GetStack", stack="home")["order"]
    assert not any(entry["suggested"] for entry in order), order
    assert "saopaulo" in [entry["instance"] for entry in order], order


def test_dates_are_consistent(make_daemon):
    daemon = make_daemon("reloadBudget = 40\n")
    address = daemon.address
    setup_stack(address)
    call(address, PROVIDER, "SubmitTimeline", app="com.example.news", kind="main",
         entries=[{"date": now_plus(-5)}], policy={"kind": "never"})
    received = queue.Queue()

    def watch():
        try:
            with varlink.Client(address=address) as client:
                with client.open(PROVIDER, namespaced=False) as provider:
                    for reply in provider.WatchReloads(app="com.example.news", includeWithheld=True, _more=True):
                        received.put(reply)
        except (ConnectionError, OSError):
            pass  # the daemon stopped at the end of the test
        except varlink.VarlinkError as error:
            # ...and ended the stream first, as a stopping service does: anything else is a failure.
            if error.error() != "io.smartstack.Provider.ServiceStopping":
                raise

    threading.Thread(target=watch, daemon=True).start()
    time.sleep(0.5)
    # The budget is 40 a day: the 41st request is withheld.
    dates = [now_plus(-120 + index) for index in range(41)]
    for date in dates:
        call(address, PROVIDER, "ReloadTimelines", app="com.example.news", date=date)
    replies = [received.get(timeout=10) for _ in dates]
    assert all("withheldUntil" not in reply for reply in replies[:40])
    assert "withheldUntil" in replies[40]
    # Granted and withheld alike carry the service's time at the call, not the call's own date two minutes back:
    # the budget runs on the service's clock, so a request dated back cannot count in a window that has passed.
    got = [parse(reply["date"]) for reply in replies]
    assert all(g >= parse(d) + datetime.timedelta(seconds=60) for g, d in zip(got, dates)), (got, dates)
    assert got == sorted(got) and got[-1] <= parse(now_plus(1))
    # The command line says so too (it used to print "reload requested" for a withheld reload).
    said = ctl(daemon, "reload", "com.example.news").stdout
    assert said.startswith("reload withheld (budget spent) for news until "), said

    # explain at a time before later events sees only what had happened by then: the maps timeline, submitted
    # after `before` with an entry current from before it, is not in that answer.
    time.sleep(0.5)
    before = now_plus(0)
    time.sleep(0.5)
    call(address, PROVIDER, "SubmitTimeline", app="com.example.maps", kind="main",
         entries=[{"date": now_plus(-1), "relevance": {"score": 1.0, "duration": 3600}}])
    now = call(address, SHELL, "Explain", stack="home")
    assert now["order"][0]["instance"] == "maps" and now.get("lastRotation") is not None
    past = call(address, SHELL, "Explain", stack="home", at=before)
    assert past.get("lastRotation") is None or parse(past["lastRotation"]) <= parse(before), past
    assert parse(past["nextRotationAllowed"]) >= parse(before) - datetime.timedelta(seconds=1)
    assert past["order"][0]["instance"] != "maps"
    top = past["order"][0]["instance"]
    widget = next(w for w in past["widgets"] if w["instance"] == top)
    assert widget["position"] == 0
    assert parse(past["date"]) == parse(before)


def test_a_graceful_stop_writes_every_stacks_last_change(make_daemon):
    """Order changes inside the coalescing window are written at a graceful stop: the journal (stderr here, as
    there is no journal) ends at the revision the service last published."""
    import re
    daemon = make_daemon()
    setup_stack(daemon.address)
    with varlink.Client(address=daemon.address) as client:
        with client.open(PROVIDER, namespaced=False) as provider:
            for round_ in range(6):
                for app in ("maps", "news", "mail")[round_ % 3:] + ("maps", "news", "mail")[:round_ % 3]:
                    for index in range(4):
                        provider.Donate(app=f"com.example.{app}", intent="open", id=f"{round_}-{app}-{index}")
    revision = call(daemon.address, SHELL, "GetStack", stack="home")["revision"]
    assert revision > 2
    assert daemon.stop() == 0
    revisions = [int(match) for match in re.findall(
        r"MESSAGE_ID=040d2f906681431293c211e0a6ef5c64.*?SMARTSTACK_REVISION=(\d+)", daemon.log())]
    assert revisions and max(revisions) == revision, (revisions, revision)


def test_every_time_option_takes_one_syntax(daemon, workdir):
    """RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, relative (-1h, '2d ago'), with or without '='."""
    setup_stack(daemon.address)
    later = datetime.datetime.now().astimezone() + datetime.timedelta(minutes=2)
    for at in ("now", "+1h", "+2d", later.strftime("%Y-%m-%d %H:%M"),
               later.isoformat(timespec="seconds")):
        for form in (["--at", at], [f"--at={at}"]):
            shown = ctl_json(daemon, "stack", "show", "home", *form)
            assert [entry["instance"] for entry in shown["order"]] == ["mail", "news", "maps"], (form, shown)
    # Two days ago the stack did not exist: a past question is answered from the state as it was then.
    past = ctl(daemon, "stack", "show", "home", "--at", "2d ago", check=False)
    assert past.returncode != 0 and "NotFound" in past.stderr, past
    hour_later = ctl_json(daemon, "stack", "show", "home", "--at", "+1h")
    assert 3500 < seconds_from_now(hour_later["date"]) < 3700
    # A relative date on a recording call: a look a minute ago, a donation 2 hours ago.
    assert ctl_json(daemon, "look", "home", "--date", "-1min") == {}
    ctl_json(daemon, "donate", "com.example.mail", "open", "--date", "2h ago")
    listed = call(daemon.address, PROVIDER, "ListDonations", app="com.example.mail")["donations"]
    assert -7300 < seconds_from_now(listed[-1]["date"]) < -7100
    # analyze's --since takes a leading minus without '=' (it used to fail with "Missing value").
    empty = pathlib.Path(workdir) / "journals"
    empty.mkdir()
    result = ctl(daemon, "analyze", "--directory", str(empty), "--since", "-1h", check=False)
    assert "Missing value" not in result.stderr, result.stderr
    bad = ctl(daemon, "stack", "show", "home", "--at", "soonish", check=False)
    assert bad.returncode != 0 and "soonish" in bad.stderr


def test_an_order_asked_for_a_past_time_keeps_its_revision_when_later_events_come(daemon):
    address = daemon.address
    for app in ("mail", "news"):
        call(address, PROVIDER, "RegisterWidget", app=f"com.example.{app}", kind="main", families=["systemMedium"],
             date=now_plus(-7_200))
    call(address, SHELL, "ConfigureStack", stack="home", family="systemMedium", date=now_plus(-3_600), widgets=[
        {"instance": app, "app": f"com.example.{app}", "kind": "main"} for app in ("mail", "news")])
    before = call(address, SHELL, "GetStack", stack="home", at=now_plus(-1_800))
    assert before["revision"] >= 1, before
    # A later event makes the same question one about the past (answered from the stored history): the order's
    # revision is the one it was published under, not 0 (it was 0 before).
    call(address, SHELL, "RecordLook", stack="home")
    after = call(address, SHELL, "GetStack", stack="home", at=now_plus(-1_800))
    assert after["revision"] == before["revision"], (before, after)
    assert [e["instance"] for e in after["order"]] == [e["instance"] for e in before["order"]]
    explained = call(address, SHELL, "Explain", stack="home", at=now_plus(-1_800))
    assert explained["revision"] == before["revision"], explained
