"""How one connection is served: calls answered inline (donations) and calls run as tasks keep their order, a
half-closed connection is answered before it closes, and a client that sends without reading is slowed by its
socket while other clients are served."""
import json
import socket
import threading
import time

from helpers import FrameReader, call, encode, setup_stack


def donate(identifier, app="com.example.mail"):
    return encode("io.smartstack.Provider.Donate", {"app": app, "intent": "open", "id": identifier})


def list_donations(app="com.example.mail"):
    return encode("io.smartstack.Provider.ListDonations", {"app": app, "limit": 1000})


def read_frames(connection, count, timeout=30.0):
    """Reads `count` NUL-terminated replies (without re-scanning the buffer per reply)."""
    connection.settimeout(timeout)
    chunks = []
    seen = 0
    while seen < count:
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise ConnectionError(f"closed after {seen} of {count} replies")
        chunks.append(chunk)
        seen += chunk.count(b"\0")
    frames = b"".join(chunks).split(b"\0")
    assert frames[-1] == b"", "a reply was cut short"
    return [json.loads(frame) for frame in frames[:-1]]


def test_inline_and_task_calls_keep_call_order(daemon):
    """Donations are applied inline, ListDonations runs as a task: pipelined together, each listing sees exactly
    the donations sent before it on the connection, and the replies come back in call order."""
    setup_stack(daemon.address)
    calls = []
    expected = []
    for round_ in range(20):
        for index in range(round_ % 4):
            identifier = f"o{round_}-{index}"
            calls.append(donate(identifier))
            expected.append(("donate", identifier))
        calls.append(list_donations())
        expected.append(("list", [identifier for kind, identifier in expected if kind == "donate"]))
    with daemon.raw(timeout=20) as connection:
        connection.sendall(b"".join(calls))
        replies = read_frames(connection, len(calls))
    for reply, (kind, value) in zip(replies, expected):
        assert "error" not in reply, reply
        if kind == "donate":
            assert reply["parameters"]["id"] == value
        else:
            assert [donation["id"] for donation in reply["parameters"]["donations"]] == value


def test_input_held_behind_a_task_is_released_when_it_is_answered(daemon):
    """Frames that arrive behind a call running as a task wait, counted against the input budget; once the task is
    answered and they are too, the service holds nothing for the connection, though the client sends nothing more."""
    setup_stack(daemon.address)
    with daemon.raw(timeout=20) as connection:
        connection.sendall(list_donations() + b"".join(encode("org.varlink.service.GetInfo") for _ in range(50)))
        replies = read_frames(connection, 51)
        assert all("error" not in reply for reply in replies)
        # The connection stays open and idle: what it held is no longer held.
        statistics = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
        assert statistics["inputBytes"] == 0, statistics


def test_half_closed_connection_is_answered_then_closed(daemon):
    """A client that sends its calls and shuts down its sending side at once gets every reply, then the end of the
    stream. 20 rounds: the data and its end often arrive before the service first reads the new connection (a
    handler added after accepting lost them: 1 round in 4 got no reply)."""
    setup_stack(daemon.address)
    for round_ in range(20):
        calls = [donate(f"h{round_}a"), list_donations(), donate(f"h{round_}b"), encode("org.varlink.service.GetInfo"),
                 donate(f"h{round_}c")]
        with daemon.raw(timeout=10) as connection:
            connection.sendall(b"".join(calls))
            connection.shutdown(socket.SHUT_WR)
            reader = FrameReader(connection)
            replies = [reader.next() for _ in calls]
            assert reader.closed(timeout=5.0), "the service kept a half-closed connection open after answering"
        assert [reply["parameters"].get("id") for reply in replies[0::2]] == [f"h{round_}{x}" for x in "abc"]
        listed = [donation["id"] for donation in replies[1]["parameters"]["donations"]]
        assert listed[-1] == f"h{round_}a" and f"h{round_}b" not in listed
        assert replies[3]["parameters"]["product"] == "smartstackd"


def test_client_that_does_not_read_is_slowed_not_buffered(daemon):
    """A client sends 20,000 donations without reading: its socket fills and the service stops reading it, other
    clients are served meanwhile, and once it reads, every reply arrives in order."""
    setup_stack(daemon.address)
    count = 20_000
    payload = b"".join(donate(f"n{i}") for i in range(count))
    connection = daemon.raw(timeout=60)
    sent = threading.Event()

    def send():
        connection.sendall(payload)
        sent.set()

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    time.sleep(1.0)
    # The replies are ~60 bytes each (1.2 MB in all): with nobody reading them the socket buffers fill and the
    # service stops reading, so the sender is blocked part way.
    assert not sent.is_set(), "the service read everything although its replies were not read"
    started = time.monotonic()
    info = call(daemon.address, "org.varlink.service", "GetInfo")
    assert info["product"] == "smartstackd"
    assert time.monotonic() - started < 2.0, "another client waited for the one that does not read"
    replies = read_frames(connection, count, timeout=60)
    sender.join(timeout=30)
    connection.close()
    assert sent.is_set()
    assert [reply["parameters"]["id"] for reply in replies] == [f"n{i}" for i in range(count)]
    statistics = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
    assert statistics["donations"] >= count
