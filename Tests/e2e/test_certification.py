"""Varlink certification both ways, against the reference implementation's own suite (PyPI varlink 31.0.0,
`python3 -m varlink.tests.test_certification`, interface org.varlink.certification).

- The reference client against our server: `varlink-certification server` is org.varlink.certification served by
  the project's own Varlink stack (VarlinkListener, its connections, framing, JSON and IDL parser, the same code
  smartstackd serves with; only the CallHandler is the certification's).
- Our client against the reference server: `varlink-certification client` runs the certification sequence
  through SmartStackClient's VarlinkClient.
"""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import varlink

from conftest import BUILD, DaemonProcess
from helpers import FrameReader, encode

CERTIFICATION = BUILD / "varlink-certification"
REFERENCE = [sys.executable, "-m", "varlink.tests.test_certification"]
CERTIFICATION_ERROR = "org.varlink.certification.CertificationError"


def wait_for_socket(path, process, timeout=20.0):
    """Until the server accepts a connection: the socket's file appears at bind(2), before listen(2), and a client
    connecting in between is refused (seen once in CI)."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, f"exited with {process.returncode}"
        assert time.monotonic() < deadline, f"{path} did not accept a connection"
        if os.path.exists(path):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(path)
                    return
                except (ConnectionRefusedError, FileNotFoundError):
                    pass
        time.sleep(0.02)


@pytest.fixture
def our_server(workdir):
    path = os.path.join(workdir, "certification")
    server = DaemonProcess(workdir, [str(CERTIFICATION), "server", f"--varlink=unix:{path}"])
    wait_for_socket(path, server.process)
    yield "unix:" + path
    assert server.stop() == 0, server.log()
    assert "Listening on unix:" in server.log()


def test_the_reference_client_certifies_our_server(our_server):
    result = subprocess.run([*REFERENCE, "--client", f"--varlink={our_server}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("Certification passed"), result.stdout
    # The streamed replies came in order, the last one without `continues` (the client would wait otherwise).
    assert "Test10: {'string': 'Reply number 10'}" in result.stdout
    assert "End: {'all_ok': True}" in result.stdout
    # Twice on one server: each run has its own client id.
    again = subprocess.run([*REFERENCE, "--client", f"--varlink={our_server}"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr


def test_our_server_refuses_steps_out_of_order_and_wrong_messages(our_server):
    with varlink.Client(address=our_server) as client, client.open("org.varlink.certification") as remote:
        client_id = remote.Start()["client_id"]
        assert remote.Test01(client_id) == {"bool": True}
        # A step skipped.
        with pytest.raises(varlink.VarlinkError) as skipped:
            remote.Test03(client_id, 1)
        assert skipped.value.error() == CERTIFICATION_ERROR
        assert skipped.value.parameters()["wants"] == {"method": "org.varlink.certification.Test02"}
        # The right step with a wrong value ends the run: the client id is then unknown.
        with pytest.raises(varlink.VarlinkError) as wrong:
            remote.Test02(client_id, False)
        assert wrong.value.error() == CERTIFICATION_ERROR
        assert wrong.value.parameters()["got"]["parameters"] == {"client_id": client_id, "bool": False}
        with pytest.raises(varlink.VarlinkError) as ended:
            remote.Test02(client_id, True)
        assert ended.value.parameters()["wants"] == {"method": "org.varlink.certification.Start+++"}
    # A parameter of the wrong type is an InvalidParameter from the interface file's types.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(our_server[len("unix:"):])
        connection.sendall(encode("org.varlink.certification.Test01", {"client_id": 7}))
        reply = FrameReader(connection).next()
    assert reply["error"] == "org.varlink.service.InvalidParameter", reply
    assert reply["parameters"]["parameter"] == "client_id", reply


def test_our_client_certifies_against_the_reference_server(workdir):
    path = os.path.join(workdir, "reference")
    server = DaemonProcess(workdir, [*REFERENCE, f"--varlink=unix:{path}"])
    try:
        wait_for_socket(path, server.process)
        result = subprocess.run([str(CERTIFICATION), "client", f"--varlink=unix:{path}"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr + server.log()
        assert result.stdout.rstrip().endswith("Certification passed"), result.stdout
        assert "Test10: " in result.stdout and "Test11: (oneway)" in result.stdout
        assert "GetInterfaceDescription: org.varlink.certification, 13 methods, 2 types" in result.stdout
    finally:
        # The reference server ends on KeyboardInterrupt.
        if server.process.poll() is None:
            server.process.send_signal(signal.SIGINT)
            try:
                server.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


def test_calls_pipelined_behind_a_stream_are_answered_after_its_last_reply(our_server):
    """A `more` call's replies end with one without `continues`, and the connection goes on: the calls written
    right behind it (in the same write) are answered after it, in order."""
    with varlink.Client(address=our_server) as client, client.open("org.varlink.certification") as remote:
        client_id = remote.Start()["client_id"]
        reply = remote.Test01(client_id)
        reply = remote.Test02(client_id, reply["bool"])
        reply = remote.Test03(client_id, reply["int"])
        reply = remote.Test04(client_id, reply["float"])
        reply = remote.Test05(client_id, reply["string"])
        reply = remote.Test06(client_id, reply["bool"], reply["int"], reply["float"], reply["string"])
        reply = remote.Test07(client_id, reply["struct"])
        reply = remote.Test08(client_id, reply["map"])
    # The Python client turned the set into a Python set; send the wire form.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(our_server[len("unix:"):])
        reader = FrameReader(connection)
        connection.sendall(encode("org.varlink.certification.Test09",
                                  {"client_id": client_id, "set": {"one": {}, "two": {}, "three": {}}}))
        mytype = reader.next()["parameters"]["mytype"]
        replies = [f"Reply number {number}" for number in range(1, 11)]
        connection.sendall(
            encode("org.varlink.certification.Test10", {"client_id": client_id, "mytype": mytype}, more=True)
            + encode("org.varlink.certification.Test11", {"client_id": client_id, "last_more_replies": replies},
                     oneway=True)
            + encode("org.varlink.certification.End", {"client_id": client_id}))
        streamed = [reader.next() for _ in range(10)]
        assert [frame["parameters"]["string"] for frame in streamed] == replies
        assert all(frame.get("continues") is True for frame in streamed[:9])
        assert "continues" not in streamed[9]
        # Test11 is oneway (no reply); End's reply is next.
        assert reader.next() == {"parameters": {"all_ok": True}}


def test_our_client_certifies_against_our_server(our_server):
    """Both of the project's sides together, as a check that each passes for the same reasons with the other."""
    result = subprocess.run([str(CERTIFICATION), "client", f"--varlink={our_server}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("Certification passed"), result.stdout
    assert "End: {\"all_ok\":true}" in result.stdout, result.stdout
