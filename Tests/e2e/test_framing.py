"""Raw-socket tests of the Varlink framing: each ends by checking that other clients are served normally."""
import json
import socket
import time

from helpers import FrameReader, call, encode, setup_stack


def served_normally(daemon):
    """Another client gets a normal answer."""
    info = call(daemon.address, "org.varlink.service", "GetInfo")
    assert info["product"] == "smartstackd"


def test_pipelined_calls_are_answered_in_call_order(daemon):
    setup_stack(daemon.address)
    with daemon.raw() as connection:
        calls = [
            encode("io.smartstack.Shell.GetStack", {"stack": "home"}),
            encode("io.smartstack.Shell.GetStack", {"stack": "nope"}),
            encode("org.varlink.service.GetInfo"),
            encode("io.smartstack.Admin.GetStatistics"),
            encode("io.smartstack.Shell.GetBudget", {"instance": "mail"}),
        ]
        connection.sendall(b"".join(calls))
        reader = FrameReader(connection)
        replies = [reader.next() for _ in calls]
    assert replies[0]["parameters"]["stack"] == "home"
    assert replies[1]["error"] == "io.smartstack.Shell.NotFound"
    assert replies[2]["parameters"]["product"] == "smartstackd"
    assert "stacks" in replies[3]["parameters"]
    assert "capacity" in replies[4]["parameters"]
    served_normally(daemon)


def test_statistics_count_every_call_received(daemon):
    """GetStatistics' `calls`: every call read, whatever its answer (an error and a oneway call too)."""
    with daemon.raw() as connection:
        calls = [
            encode("io.smartstack.Admin.GetStatistics"),
            encode("org.varlink.service.GetInfo"),
            encode("io.smartstack.Shell.GetStack", {"stack": "nope"}),
            encode("io.smartstack.Provider.Donate", {"app": "com.example.mail", "intent": "open"}),
            encode("io.smartstack.Provider.Donate", {"app": "com.example.mail", "intent": "open"}, oneway=True),
            encode("io.smartstack.Admin.GetStatistics"),
        ]
        connection.sendall(b"".join(calls))
        reader = FrameReader(connection)
        first, _, missing, _, last = [reader.next() for _ in range(5)]
    assert missing["error"] == "io.smartstack.Shell.NotFound"
    # The first GetStatistics counts itself, the last counts the four calls between them and itself.
    assert first["parameters"]["calls"] >= 1
    assert last["parameters"]["calls"] - first["parameters"]["calls"] == 5, (first, last)
    served_normally(daemon)


def test_many_pipelined_calls_in_one_write(daemon):
    setup_stack(daemon.address)
    count = 2000
    with daemon.raw(timeout=20) as connection:
        payload = b"".join(
            encode("io.smartstack.Provider.Donate", {"app": "com.example.mail", "intent": "open", "id": f"p{i}"})
            for i in range(count))
        connection.sendall(payload)
        reader = FrameReader(connection)
        ids = [reader.next()["parameters"]["id"] for _ in range(count)]
    assert ids == [f"p{i}" for i in range(count)]
    served_normally(daemon)


def test_oneway_gets_no_reply_not_even_an_error(daemon):
    setup_stack(daemon.address)
    with daemon.raw() as connection:
        connection.sendall(
            encode("io.smartstack.Provider.Donate", {"app": "com.example.mail", "intent": "open", "id": "o1"}, oneway=True)
            + encode("io.smartstack.Shell.GetStack", {"stack": "nope"}, oneway=True)
            + encode("io.example.Missing.Method", {}, oneway=True)
            + encode("org.varlink.service.GetInfo"))
        reader = FrameReader(connection)
        first = reader.next()
        assert first["parameters"]["product"] == "smartstackd"
        connection.settimeout(0.5)
        try:
            extra = connection.recv(65536)
        except socket.timeout:
            extra = b""
        assert extra == b"" or b"\0" not in extra
    # The oneway donation was recorded.
    listed = call(daemon.address, "io.smartstack.Provider", "ListDonations", app="com.example.mail")
    assert [donation["id"] for donation in listed["donations"]] == ["o1"]
    served_normally(daemon)


def test_malformed_frame_closes_only_that_connection(daemon):
    with daemon.raw() as other, daemon.raw() as bad:
        bad.sendall(encode("org.varlink.service.GetInfo") + b"{this is not json\0")
        reader = FrameReader(bad)
        assert reader.next()["parameters"]["product"] == "smartstackd"
        assert reader.closed()
        other.sendall(encode("org.varlink.service.GetInfo"))
        assert FrameReader(other).next()["parameters"]["product"] == "smartstackd"
    for frame in (b"[1,2]\0", b'{"parameters": {}}\0', b'{"method": 5}\0', b"\xff\xfe\0"):
        with daemon.raw() as bad:
            bad.sendall(frame)
            assert FrameReader(bad).closed(), frame
    served_normally(daemon)


def test_oversized_frame_closes_only_that_connection(make_daemon):
    daemon = make_daemon(config="maxFrameSize = 4096\n")
    with daemon.raw() as other, daemon.raw() as big:
        # A frame just under the limit is served.
        padding = "x" * 3000
        big.sendall(encode("io.smartstack.Shell.GetStack", {"stack": "nope", "pad": padding}))
        reply = FrameReader(big).next()
        assert reply["error"] == "org.varlink.service.InvalidParameter"
        assert reply["parameters"]["parameter"] == "pad"
        # Over the limit, without a terminator: closed before the frame ends.
        try:
            big.sendall(b'{"method": "org.varlink.service.GetInfo", "parameters": {"pad": "' + b"y" * 8192)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert FrameReader(big).closed()
        other.sendall(encode("org.varlink.service.GetInfo"))
        assert FrameReader(other).next()["parameters"]["product"] == "smartstackd"
    served_normally(daemon)


def test_stream_without_more_is_expected_more(daemon):
    setup_stack(daemon.address)
    with daemon.raw() as connection:
        connection.sendall(encode("io.smartstack.Shell.Subscribe", {}) + encode("org.varlink.service.GetInfo"))
        reader = FrameReader(connection)
        assert reader.next()["error"] == "org.varlink.service.ExpectedMore"
        assert reader.next()["parameters"]["product"] == "smartstackd"


def test_client_vanishing_mid_stream(daemon):
    setup_stack(daemon.address)
    for _ in range(5):
        connection = daemon.raw()
        connection.sendall(encode("io.smartstack.Shell.Subscribe", {"stacks": ["home"]}, more=True))
        first = FrameReader(connection).next()
        assert first["continues"] is True
        assert first["parameters"]["stack"] == "home"
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        connection.close()
    # The streams are gone and the service serves others normally.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        stats = call(daemon.address, "io.smartstack.Admin", "GetStatistics")
        if stats["subscribers"] == 0:
            break
        time.sleep(0.05)
    assert stats["subscribers"] == 0
    served_normally(daemon)


def test_unknown_interface_and_method(daemon):
    with daemon.raw() as connection:
        connection.sendall(encode("io.example.Nope.Call") + encode("io.smartstack.Shell.Nope") + encode("nodots"))
        reader = FrameReader(connection)
        first, second = reader.next(), reader.next()
        assert first["error"] == "org.varlink.service.InterfaceNotFound"
        assert first["parameters"]["interface"] == "io.example.Nope"
        assert second["error"] == "org.varlink.service.MethodNotFound"
        assert second["parameters"]["method"] == "io.smartstack.Shell.Nope"
