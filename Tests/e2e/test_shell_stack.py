"""Issue 12, what a shell needs from a stack: Live Activities it can draw, stacks it can change without losing
what was learned, explanations of stability that are true, and engagement that means what users mean."""
import datetime

from helpers import call, rfc3339, setup_stack
from test_ctl import ctl, ctl_json

SHELL = "io.smartstack.Shell"
PROVIDER = "io.smartstack.Provider"


def at(seconds):
    return rfc3339(datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds))


def live_entries(reply):
    return [entry for entry in reply["order"] if entry["reason"] == "liveActivity"]


def test_live_activity_entries_carry_what_a_shell_draws(daemon):
    setup_stack(daemon.address, apps=("food", "mail"))
    started = at(-60)
    call(daemon.address, PROVIDER, "StartLiveActivity", app="com.example.food", id="del-1",
         attributes={"restaurant": "Luigi"}, contentState={"eta": "30"}, date=started)
    call(daemon.address, PROVIDER, "UpdateLiveActivity", app="com.example.food", id="del-1",
         contentState={"eta": "20"})

    (entry,) = live_entries(call(daemon.address, SHELL, "GetStack", stack="home"))
    live = entry["liveActivity"]
    assert entry["instance"] == "liveActivity:com.example.food/del-1" and entry["app"] == "com.example.food"
    assert live["app"] == "com.example.food" and live["id"] == "del-1" and live["state"] == "active"
    assert live["attributes"] == {"restaurant": "Luigi"} and live["contentState"] == {"eta": "20"}
    start = datetime.datetime.fromisoformat(live["started"])
    assert abs((start - datetime.datetime.fromisoformat(started)).total_seconds()) < 0.01
    assert datetime.datetime.fromisoformat(live["updated"]) > start
    assert datetime.datetime.fromisoformat(live["ends"]) - start == datetime.timedelta(hours=8)
    assert datetime.datetime.fromisoformat(live["removed"]) - start == datetime.timedelta(hours=12)

    # Past its 8 hours the service has ended it: the same entry, now ended; after 4 more hours it is gone.
    (ended,) = live_entries(call(daemon.address, SHELL, "GetStack", stack="home", at=at(8 * 3600)))
    assert ended["liveActivity"]["state"] == "ended" and ended["liveActivity"]["contentState"] == {"eta": "20"}
    assert live_entries(call(daemon.address, SHELL, "GetStack", stack="home", at=at(12 * 3600 + 60))) == []

    # An explicit end with final content and a dismissal: ended now, removed when the app said.
    call(daemon.address, PROVIDER, "EndLiveActivity", app="com.example.food", id="del-1",
         contentState={"eta": "0"}, dismissAfter=600)
    reply = call(daemon.address, SHELL, "GetStack", stack="home")
    (ended,) = live_entries(reply)
    live = ended["liveActivity"]
    assert live["state"] == "ended" and live["contentState"] == {"eta": "0"}
    ends = datetime.datetime.fromisoformat(live["ends"])
    assert datetime.datetime.fromisoformat(live["removed"]) - ends == datetime.timedelta(seconds=600)

    # Explain carries the same entry, and both smartstackctl views draw it.
    explained = call(daemon.address, SHELL, "Explain", stack="home")
    assert live_entries(explained)[0]["liveActivity"] == live
    for text in (ctl(daemon, "explain", "home").stdout, ctl(daemon, "stack", "show", "home").stdout):
        assert "Live Activity com.example.food/del-1" in text and "ended" in text, text
        assert "restaurant=Luigi" in text and "eta=0" in text, text
    assert ctl_json(daemon, "stack", "show", "home")["order"][0]["liveActivity"]["state"] == "ended"


def test_a_live_activity_update_is_a_new_revision_for_subscribers(daemon):
    setup_stack(daemon.address, apps=("food", "mail"))
    call(daemon.address, PROVIDER, "StartLiveActivity", app="com.example.food", id="del-1",
         attributes={}, contentState={"eta": "30"})
    first = call(daemon.address, SHELL, "GetStack", stack="home")
    call(daemon.address, PROVIDER, "UpdateLiveActivity", app="com.example.food", id="del-1",
         contentState={"eta": "25"})
    second = call(daemon.address, SHELL, "GetStack", stack="home")
    assert live_entries(second)[0]["liveActivity"]["contentState"] == {"eta": "25"}
    assert second["revision"] > first["revision"]
