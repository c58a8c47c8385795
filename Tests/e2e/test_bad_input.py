"""A table of malformed and hostile requests against the real daemon: each gets its expected typed error (or, when
the frame itself is broken, its connection is closed); the connection survives where framing allows; after
each, the stored state is unchanged and another client is served."""
import json

import pytest

from helpers import FrameReader, call, encode

P = "io.smartstack.Provider."
S = "io.smartstack.Shell."
INVALID = "org.varlink.service.InvalidParameter"
CLOSE = "close"
NO_REPLY = "no reply"


def frame(text):
    return text.encode() + b"\0"


def donate(**parameters):
    return encode(P + "Donate", {"app": "org.ex.a", "intent": "open", **parameters})


# name, bytes sent, expected: an error name (with the parameter for InvalidParameter), CLOSE or NO_REPLY.
CASES = [
    ("broken JSON", b'{"method":\0', CLOSE),
    ("deeply nested JSON", frame('{"method":"' + P + 'Donate","parameters":{"app":"org.ex.a","intent":"x",'
                                 '"parameters":' + "[" * 10_000 + "]" * 10_000 + "}}"), CLOSE),
    ("invalid UTF-8", b'{"method":"' + P.encode() + b'Donate","parameters":{"app":"org.ex.a","intent":"\xff\xfe"}}\0',
     CLOSE),
    ("unpaired surrogate", frame('{"method":"' + P + 'Donate","parameters":{"app":"org.ex.a","intent":"\\ud800"}}'),
     CLOSE),
    ("NUL in a string", frame('{"method":"' + P + 'Donate","parameters":{"app":"org.ex.a","intent":"a\\u0000b"}}'),
     (INVALID, "intent")),
    ("NUL in a map value", donate(parameters={"city": "a\u0000b"}), (INVALID, "parameters.city")),
    ("a frame that is not an object", b"[1,2]\0", CLOSE),
    ("trailing garbage after the object", frame('{"method":"org.varlink.service.GetInfo"} x'), CLOSE),
    ("duplicate keys", frame('{"method":"org.varlink.service.GetInfo","method":"x"}'), CLOSE),
    ("empty frame", b"\0", CLOSE),
    ("no method", frame('{"parameters":{}}'), CLOSE),
    ("method not a string", frame('{"method":5}'), CLOSE),
    ("parameters not an object", frame('{"method":"' + P + 'Donate","parameters":[1]}'), CLOSE),
    ("NaN", frame('{"method":"' + P + 'ListDonations","parameters":{"app":"org.ex.a","limit":NaN}}'), CLOSE),
    ("number too large for a double", frame('{"method":"' + P + 'ListDonations","parameters":{"app":"org.ex.a",'
                                            '"limit":1e400}}'), CLOSE),
    ("integer out of range", frame('{"method":"' + P + 'ListDonations","parameters":{"app":"org.ex.a",'
                                   '"limit":99999999999999999999999}}'), (INVALID, "limit")),
    ("fraction for an integer", encode(P + "ListDonations", {"app": "org.ex.a", "limit": 2.5}), (INVALID, "limit")),
    ("negative limit", encode(P + "ListDonations", {"app": "org.ex.a", "limit": -1}), (INVALID, "limit")),
    ("empty after", encode(P + "ListDonations", {"app": "org.ex.a", "after": ""}), (INVALID, "after")),
    ("after longer than an id", encode(P + "ListDonations", {"app": "org.ex.a", "after": "x" * 300}),
     (INVALID, "after")),
    ("a family twice", encode(P + "RegisterWidget", {"app": "org.ex.a", "kind": "k",
                                                     "families": ["systemSmall", "systemSmall"]}),
     (INVALID, "families[1]")),
    ("a Live Activity id too long to update", encode(P + "UpdateLiveActivity", {
        "app": "org.ex.a", "id": "x" * 300, "contentState": {}}), (INVALID, "id")),
    ("huge string", donate(intent="x" * 5_000), (INVALID, "intent")),
    ("too many parameters", donate(parameters={str(i): "v" for i in range(100)}), (INVALID, "parameters")),
    ("huge array of ids", encode(P + "DeleteDonations", {"app": "org.ex.a", "ids": ["x"] * 200_000}),
     (INVALID, "ids")),
    ("negative duration", encode(P + "SubmitTimeline", {"app": "org.ex.a", "kind": "main", "entries": [
        {"date": "2026-01-01T00:00:00Z", "relevance": {"score": 1, "duration": -5}}]}),
     (INVALID, "entries[0].relevance.duration")),
    ("infinite score", frame('{"method":"' + P + 'SubmitTimeline","parameters":{"app":"org.ex.a","kind":"main",'
                             '"entries":[{"date":"2026-01-01T00:00:00Z","relevance":{"score":1e999,"duration":5}}]}}'),
     CLOSE),
    ("year 10000", donate(date="10000-01-01T00:00:00Z"), (INVALID, "date")),
    ("not a date", donate(date="yesterday"), (INVALID, "date")),
    ("month 13", donate(date="2026-13-01T00:00:00Z"), (INVALID, "date")),
    ("far future date", donate(date="9999-12-31T23:59:59Z"), (INVALID, "date")),
    ("app id with a slash", encode(P + "Donate", {"app": "../etc", "intent": "x"}), (INVALID, "app")),
    ("empty app id", encode(P + "Donate", {"app": "", "intent": "x"}), (INVALID, "app")),
    ("empty donation id", donate(id=""), (INVALID, "id")),
    ("wrong type", encode(P + "Donate", {"app": 5, "intent": "x"}), (INVALID, "app")),
    ("unknown parameter", donate(bogus=1), (INVALID, "bogus")),
    ("missing required parameter", encode(P + "Donate", {"app": "org.ex.a"}), (INVALID, "intent")),
    ("unknown method", encode(P + "Nope", {}), "org.varlink.service.MethodNotFound"),
    ("unknown interface", encode("org.nope.X", {}), "org.varlink.service.InterfaceNotFound"),
    ("interface description of an unknown interface",
     encode("org.varlink.service.GetInterfaceDescription", {"interface": "x.y"}),
     "org.varlink.service.InterfaceNotFound"),
    ("stream without more", encode(S + "Subscribe", {"stacks": ["home"]}), "org.varlink.service.ExpectedMore"),
    ("oneway with bad parameters", encode(P + "Donate", {"app": ""}, oneway=True), NO_REPLY),
    # A oneway stream got the stream's replies, and the calls after it were taken as the stream's.
    ("oneway and more", frame('{"method":"' + S + 'Subscribe","parameters":{"stacks":["home"]},"oneway":true,'
                              '"more":true}'), CLOSE),
    ("upgrade", frame('{"method":"org.varlink.service.GetInfo","upgrade":true}'), (INVALID, "upgrade")),
    # Every decision of a stack showing the activity carries it: 16 KiB of keys and values in all.
    ("live activity content over 16 KiB", encode(P + "StartLiveActivity", {
        "app": "org.ex.a", "id": "big", "contentState": {f"k{i}": "x" * 4_000 for i in range(5)}}),
     (INVALID, "contentState")),
    ("live activity attributes over 16 KiB", encode(P + "StartLiveActivity", {
        "app": "org.ex.a", "id": "big", "attributes": {f"k{i}": "x" * 4_000 for i in range(5)}}),
     (INVALID, "attributes")),
    ("live activity update over 16 KiB", encode(P + "UpdateLiveActivity", {
        "app": "org.ex.a", "id": "big", "contentState": {f"k{i}": "x" * 4_000 for i in range(5)}}),
     (INVALID, "contentState")),
    ("unknown family", encode(S + "ConfigureStack", {"stack": "x", "family": "bogus", "widgets": []}),
     (INVALID, "family")),
    ("a kind that does not support the stack's family", encode(S + "ConfigureStack", {
        "stack": "x", "family": "systemLarge", "widgets": [{"instance": "w", "app": "org.ex.a", "kind": "main"}]}),
     (INVALID, "widgets[0].kind")),
    ("duplicate instances", encode(S + "ConfigureStack", {"stack": "x", "family": "systemMedium", "widgets": [
        {"instance": "w", "app": "org.ex.a", "kind": "main"}, {"instance": "w", "app": "org.ex.a", "kind": "main"}]}),
     (INVALID, "widgets[1].instance")),
    ("an instance placed in another stack", encode(S + "ConfigureStack", {"stack": "x", "family": "systemMedium",
                                                                          "widgets": [{"instance": "a", "app": "org.ex.a",
                                                                                       "kind": "main"}]}),
     S + "Conflict"),
    ("configuration for a kind without one", encode(S + "ConfigureStack", {
        "stack": "x", "family": "systemMedium",
        "widgets": [{"instance": "w", "app": "org.ex.a", "kind": "main", "configuration": {"city": "Paris"}}]}),
     (INVALID, "widgets[0].configuration.city")),
    ("unknown widget kind", encode(S + "ConfigureStack", {"stack": "x", "family": "systemMedium", "widgets": [
        {"instance": "w", "app": "org.ex.a", "kind": "nope"}]}), S + "NotFound"),
    ("empty context key", encode(S + "SetContext", {"key": "", "value": "x"}), (INVALID, "key")),
    ("look at an unknown stack", encode(S + "RecordLook", {"stack": "nope"}), S + "NotFound"),
    ("unknown engagement kind", encode(S + "RecordEngagement", {"stack": "home", "instance": "a", "kind": "poke"}),
     (INVALID, "kind")),
    ("engagement with a widget of another stack", encode(S + "RecordEngagement", {
        "stack": "home", "instance": "zzz", "kind": "tap"}), (INVALID, "instance")),
    ("a kind with no family", encode(P + "RegisterWidget", {"app": "org.ex.a", "kind": "k", "families": []}),
     (INVALID, "families")),
    ("a kind with an unknown family", encode(P + "RegisterWidget", {"app": "org.ex.a", "kind": "k",
                                                                    "families": ["huge"]}), (INVALID, "families[0]")),
    ("Live Activity with an empty id", encode(P + "StartLiveActivity", {"app": "org.ex.a", "id": ""}), (INVALID, "id")),
    ("unknown log level", encode("io.smartstack.Admin.SetLogLevel", {"level": "loud"}), (INVALID, "level")),
    ("ListDonations after an unknown id", encode(P + "ListDonations", {"app": "org.ex.a", "after": "nope"}),
     P + "NotFound"),
    ("a reused donation id with other content", donate(id="d0", intent="other"), P + "Conflict"),
    ("GetStack of an unknown stack", encode(S + "GetStack", {"stack": "nope"}), S + "NotFound"),
    ("GetStack at a time that is not a date", encode(S + "GetStack", {"stack": "home", "at": "soon"}), (INVALID, "at")),
]


def state(address):
    """What a client can see of the stored state."""
    listed = call(address, P[:-1], "ListDonations", app="org.ex.a")["donations"]
    stats = call(address, "io.smartstack.Admin", "GetStatistics")
    stacks = call(address, S[:-1], "ListStacks")["stacks"]
    return json.dumps([listed, stats["storedDonations"], stats["storedEvents"], stats["stacks"], stats["kinds"],
                       [(s["stack"], [w["instance"] for w in s["widgets"]]) for s in stacks]], sort_keys=True)


def send(daemon, data):
    """Sends `data`; returns (reply or CLOSE or NO_REPLY, whether the connection still answers a GetInfo)."""
    with daemon.raw(timeout=5) as connection:
        connection.sendall(data)
        reader = FrameReader(connection)
        connection.settimeout(1.5)
        try:
            reply = reader.next()
        except ConnectionError:
            return CLOSE, False
        except OSError:
            reply = NO_REPLY
        connection.settimeout(5)
        try:
            connection.sendall(encode("org.varlink.service.GetInfo"))
            return reply, "parameters" in reader.next()
        except (ConnectionError, OSError):
            return reply, False


def test_bad_inputs(daemon):
    address = daemon.address
    call(address, P[:-1], "RegisterWidget", app="org.ex.a", kind="main", families=["systemMedium"])
    call(address, S[:-1], "ConfigureStack", stack="home", family="systemMedium",
         widgets=[{"instance": "a", "app": "org.ex.a", "kind": "main"}])
    call(address, P[:-1], "Donate", app="org.ex.a", intent="open", id="d0")
    before = state(address)
    assert len(CASES) >= 40 and len({name for name, _, _ in CASES}) == len(CASES)
    results = []
    for name, data, expected in CASES:
        reply, survived = send(daemon, data)
        if expected == CLOSE:
            assert reply == CLOSE, (name, reply)
        elif expected == NO_REPLY:
            assert reply == NO_REPLY and survived, (name, reply)
        else:
            assert isinstance(reply, dict) and "error" in reply, (name, reply)
            error, parameter = expected if isinstance(expected, tuple) else (expected, None)
            assert reply["error"] == error, (name, reply)
            if parameter is not None:
                assert reply["parameters"]["parameter"] == parameter, (name, reply)
                assert reply["parameters"]["reason"], (name, reply)
            assert survived, (name, "the connection did not survive a typed error")
        # Nothing stored changed, and another client is served.
        assert state(address) == before, name
        results.append((name, reply if isinstance(reply, str) else reply["error"]))
    print("\n".join(f"{name:50s} {outcome}" for name, outcome in results))
