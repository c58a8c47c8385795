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


# --- Changing a stack keeps what was learned -------------------------------------------------------------------

def explain_widgets(daemon, **extra):
    reply = call(daemon.address, SHELL, "Explain", stack="home", **extra)
    return reply, {widget["instance"]: widget for widget in reply["widgets"]}


def learn_something(daemon):
    """Looks followed by opening news, a tap on maps and a timeline for mail: state the service learned."""
    for round_ in range(3):
        call(daemon.address, SHELL, "RecordLook", stack="home", date=at(-600 + round_ * 60))
        call(daemon.address, PROVIDER, "Donate", app="com.example.news", intent="open", date=at(-595 + round_ * 60))
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="maps", kind="tap")
    call(daemon.address, PROVIDER, "SubmitTimeline", app="com.example.mail", kind="main",
         entries=[{"date": at(-60), "relevance": {"score": 2.0, "duration": 0}}])


def test_changing_a_stack_keeps_what_was_learned(daemon):
    setup_stack(daemon.address)
    learn_something(daemon)
    before, widgets = explain_widgets(daemon)
    assert before["learnedFromLooks"] == 3 and widgets["maps"]["engagement"]["taps"] > 0.9
    # The top's hold: a challenger must be at least 1.3 times as likely as the seen top (more once the stack's top
    # has changed often); heldTop names the widget it keeps first, if any (a null the client leaves out).
    assert before["holdMargin"] >= 1.3 - 1e-9 and before.get("heldTop") in (None, *widgets)
    assert widgets["mail"]["relevanceState"]["status"] == "relevant"

    # Settings, the pin and the order change; the widgets and what was learned stay.
    text = ctl(daemon, "stack", "set", "home", "--developer-mode", "--pin", "maps", "--order", "maps,news,mail").stdout
    assert text.startswith("changed home: revision"), text
    (listed,) = call(daemon.address, SHELL, "ListStacks")["stacks"]
    assert [w["instance"] for w in listed["widgets"]] == ["maps", "news", "mail"]
    assert listed["pinned"] == "maps" and listed["developerMode"] is True and listed["smartRotate"] is True
    after, kept = explain_widgets(daemon)
    assert after["learnedFromLooks"] == 3 and kept["maps"]["engagement"]["taps"] > 0.9
    assert after.get("heldTop") is None  # developer mode lifts the hold with the other stability limits
    assert kept["mail"]["relevanceState"]["status"] == "relevant"
    assert abs(kept["news"]["behaviour"] - widgets["news"]["behaviour"]) < 0.05

    # One widget added, one removed: the others keep their state.
    ctl(daemon, "stack", "add", "home", "--widget", "food=com.example.food/main", check=False)
    call(daemon.address, PROVIDER, "RegisterWidget", app="com.example.food", kind="main", families=["systemMedium"])
    assert "added 1 widget to home" in ctl(daemon, "stack", "add", "home", "--widget", "food=com.example.food/main").stdout
    assert "removed news from home" in ctl(daemon, "stack", "remove-widget", "home", "news").stdout
    (listed,) = call(daemon.address, SHELL, "ListStacks")["stacks"]
    assert [w["instance"] for w in listed["widgets"]] == ["maps", "mail", "food"]
    _, kept = explain_widgets(daemon)
    assert kept["maps"]["engagement"]["taps"] > 0.9 and kept["mail"]["relevanceState"]["status"] == "relevant"
    assert call(daemon.address, SHELL, "Explain", stack="home")["learnedFromLooks"] == 3

    # Unpinning, and errors that name what does not fit.
    ctl(daemon, "stack", "set", "home", "--unpin", "--no-developer-mode")
    assert call(daemon.address, SHELL, "ListStacks")["stacks"][0].get("pinned") is None
    bad = ctl(daemon, "stack", "remove-widget", "home", "nothing", check=False)
    assert bad.returncode == 2 and "remove[0]" in bad.stderr, bad.stderr
    bad = ctl(daemon, "stack", "set", "home", "--order", "maps,mail", check=False)
    assert bad.returncode == 2 and "order" in bad.stderr and "food" in bad.stderr, bad.stderr
    missing = ctl(daemon, "stack", "set", "nowhere", "--no-suggestions", check=False)
    assert missing.returncode == 2 and "NotFound" in missing.stderr

    # ConfigureStack of the existing stack with the same widgets keeps them too.
    call(daemon.address, SHELL, "ConfigureStack", stack="home", family="systemMedium", smartRotate=False,
         widgets=[{"instance": "maps", "app": "com.example.maps", "kind": "main"},
                  {"instance": "mail", "app": "com.example.mail", "kind": "main"}])
    _, kept = explain_widgets(daemon)
    assert kept["maps"]["engagement"]["taps"] > 0.9 and kept["mail"]["relevanceState"]["status"] == "relevant"


def test_configure_without_widgets_does_not_empty_a_stack(daemon):
    setup_stack(daemon.address)
    refused = ctl(daemon, "stack", "configure", "home", "--family", "systemMedium", "--developer-mode", check=False)
    assert refused.returncode == 64 and "stack set home" in refused.stderr, refused.stderr
    assert len(call(daemon.address, SHELL, "ListStacks")["stacks"][0]["widgets"]) == 3
    assert "0 widgets" in ctl(daemon, "stack", "configure", "empty", "--family", "systemMedium", "--empty").stdout


# --- Stability explanations -------------------------------------------------------------------------------------

def test_a_manual_swipe_holds_the_top_and_explain_says_until_when(daemon):
    setup_stack(daemon.address)
    for app in ("news", "maps"):
        call(daemon.address, PROVIDER, "SubmitTimeline", app=f"com.example.{app}", kind="main",
             entries=[{"date": at(-3600), "relevance": {"score": 1.0, "duration": 0}}])
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="swipeTo")
    swiped = datetime.datetime.now(datetime.timezone.utc)
    # Past the minimum time on top (5 minutes) but within the grace period (15 minutes).
    reply, widgets = explain_widgets(daemon, at=at(8 * 60))
    assert reply["order"][0]["instance"] == "mail" and reply["order"][0]["reason"] == "manualSwipe"
    next_allowed = datetime.datetime.fromisoformat(reply["nextRotationAllowed"])
    assert abs((next_allowed - swiped).total_seconds() - 15 * 60) < 5, reply["nextRotationAllowed"]
    for name in ("news", "maps"):
        assert widgets[name]["rotationLimited"] is True, widgets[name]
        assert widgets[name]["rotationLimitedBy"] == "manualSwipe"
        assert widgets[name]["reason"] == "rotationLimited"
    text = ctl(daemon, "explain", "home", "--at", at(8 * 60)).stdout
    assert "manual swipe" in text, text
    # After the grace period relevance rotates again.
    reply, widgets = explain_widgets(daemon, at=at(16 * 60))
    assert reply["order"][0]["reason"] == "relevance"


def test_a_widget_never_tapped_is_not_placed_by_engagement(daemon):
    setup_stack(daemon.address)
    # The user keeps opening news right after looking at the stack: what they opened, not a tap.
    for round_ in range(12):
        call(daemon.address, SHELL, "RecordLook", stack="home", date=at(-3000 + round_ * 200))
        call(daemon.address, PROVIDER, "Donate", app="com.example.news", intent="open",
             date=at(-2995 + round_ * 200))
    reply = call(daemon.address, SHELL, "GetStack", stack="home")
    assert all(entry["reason"] != "engagement" for entry in reply["order"]), reply["order"]
    # A tap makes engagement a reason it can be.
    _, widgets = explain_widgets(daemon)
    engagement = widgets["news"]["engagement"]
    assert engagement["taps"] == 0 and engagement["ignoredImpressions"] == 0 and engagement["factor"] == 1
    assert engagement.get("demotedUntil") is None


# --- Engagement semantics ---------------------------------------------------------------------------------------

def habit(daemon, app="mail", days=21, per_day=3):
    """Weeks of habit: looks at the stack followed by opening `app`, a few times a day."""
    for day in range(days, 0, -1):
        for slot in range(per_day):
            start = -day * 86400 + slot * 3 * 3600
            call(daemon.address, SHELL, "RecordLook", stack="home", date=at(start))
            call(daemon.address, PROVIDER, "Donate", app=f"com.example.{app}", intent="open", date=at(start + 5))


def behaviour(daemon, name, **extra):
    return explain_widgets(daemon, **extra)[1][name]["behaviour"]


def top(daemon, **extra):
    return call(daemon.address, SHELL, "GetStack", stack="home", **extra)["order"][0]["instance"]


def test_a_swipe_away_demotes_the_widget_for_an_hour(daemon):
    setup_stack(daemon.address)
    habit(daemon, days=5)
    assert top(daemon) == "mail"
    before = behaviour(daemon, "mail")
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="swipeAway")
    reply, widgets = explain_widgets(daemon)
    assert reply["order"][0]["instance"] != "mail", reply["order"]
    assert widgets["mail"]["behaviour"] < before / 2
    demoted = datetime.datetime.fromisoformat(widgets["mail"]["engagement"]["demotedUntil"])
    remaining = (demoted - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 3500 < remaining <= 3600, remaining
    assert "demoted until" in ctl(daemon, "explain", "home", "mail").stdout
    # An hour later the habit is back on top.
    assert top(daemon, at=at(3610)) == "mail"
    assert abs(behaviour(daemon, "mail", at=at(3610)) - before) < 0.1


def test_impressions_without_taps_lower_a_widget_gently(daemon):
    setup_stack(daemon.address)
    habit(daemon, days=5)
    before = behaviour(daemon, "mail")
    for _ in range(5):
        call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="impression", duration=2)
    _, widgets = explain_widgets(daemon)
    after = widgets["mail"]["behaviour"]
    assert widgets["mail"]["engagement"]["ignoredImpressions"] > 4.9
    assert after < before and after > 0.7 * before, (before, after)
    assert top(daemon) == "mail"
    # A tap clears them.
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="tap")
    assert explain_widgets(daemon)[1]["mail"]["engagement"]["ignoredImpressions"] == 0


def test_taps_count_with_or_without_a_look_in_proportion(daemon):
    setup_stack(daemon.address)
    habit(daemon, days=5)
    base = behaviour(daemon, "maps")
    # A tap with no look before it.
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="maps", kind="tap")
    one = explain_widgets(daemon)[1]["maps"]
    assert one["behaviour"] > base and abs(one["engagement"]["factor"] - 1.35) < 0.01, one["engagement"]
    # A second tap, after a look: more, in proportion (not a jump).
    call(daemon.address, SHELL, "RecordLook", stack="home")
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="maps", kind="tap")
    two = explain_widgets(daemon)[1]["maps"]
    assert two["engagement"]["factor"] > one["engagement"]["factor"]
    assert two["behaviour"] > one["behaviour"]
    assert two["reason"] in ("engagement", "behaviour")


def test_no_single_event_erases_weeks_of_habit(daemon):
    setup_stack(daemon.address)
    habit(daemon, days=21)
    assert top(daemon) == "mail"
    mail = behaviour(daemon, "mail")
    # One look answered by a tap on another widget; one swipe-away-free impression of mail.
    call(daemon.address, SHELL, "RecordLook", stack="home")
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="news", kind="tap")
    assert top(daemon) == "mail"
    assert behaviour(daemon, "mail") > 0.6 * mail
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="impression", duration=1)
    assert top(daemon) == "mail"


def test_the_issue_scenario_swipes_and_impressions_count_and_two_taps_do_not_flip_everything(daemon):
    setup_stack(daemon.address, apps=("a", "b", "c"))
    for index in range(10):
        call(daemon.address, PROVIDER, "Donate", app="com.example.a", intent="open", date=at(-7200 + index * 60))
    start = behaviour(daemon, "a")
    for _ in range(5):
        call(daemon.address, SHELL, "RecordLook", stack="home")
        call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="a", kind="swipeAway")
        call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="a", kind="impression", duration=1)
    assert behaviour(daemon, "a") < start / 2
    for _ in range(2):
        call(daemon.address, SHELL, "RecordLook", stack="home")
        call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="c", kind="tap")
    _, widgets = explain_widgets(daemon)
    assert widgets["c"]["behaviour"] < 0.95, widgets["c"]
    # After the demotion the donations' habit is back: a well above c's pre-tap share.
    later = explain_widgets(daemon, at=at(3700))[1]
    assert later["a"]["behaviour"] > 0.2, later["a"]


def test_an_engagement_entry_carries_its_date(daemon):
    """The engagement entry `smartstackctl analyze` reads: a dated engagement carries its date as
    SMARTSTACK_ENGINE_TIME (analyze places it there, not when the entry was received)."""
    setup_stack(daemon.address)
    date = rfc3339(datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=30))
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="maps", kind="tap", date=date)
    call(daemon.address, SHELL, "RecordEngagement", stack="home", instance="mail", kind="tap")
    lines = [line for line in daemon.log().splitlines() if "SMARTSTACK_ENGAGEMENT=tap" in line]
    assert len(lines) == 2, lines
    parsed = datetime.datetime.fromisoformat(date.replace("Z", "+00:00"))
    assert any("SMARTSTACK_WIDGET=maps" in line and "SMARTSTACK_ENGINE_TIME=" in line for line in lines), lines
    stamped = [line.split("SMARTSTACK_ENGINE_TIME=")[1].split()[0].strip('"') for line in lines if "ENGINE_TIME" in line]
    assert [datetime.datetime.fromisoformat(value.replace("Z", "+00:00")) for value in stamped] == [parsed], lines
