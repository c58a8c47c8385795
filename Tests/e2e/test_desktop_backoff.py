"""smartstack-desktop against a smartstackd that is reachable but cannot take calls (its storage failing): the agent
keeps the call first in line and retries ever less often (0.2 s doubling to 5 s), not every 0.2 s on every new
connection, and says why in its log; once calls are taken it goes on with the next."""
import os
import pathlib
import socket
import subprocess
import tempfile
import threading
import time
import json

import pytest

from conftest import BUILD

DESKTOP = pathlib.Path(os.environ.get("SMARTSTACK_DESKTOP", BUILD / "smartstack-desktop"))

pytestmark = pytest.mark.skipif(not DESKTOP.exists(), reason="needs smartstack-desktop")


class RefusingService:
    """A Varlink server on a Unix socket that answers every call StorageFailed until `accept` is set; counts
    connections and the calls it answered each way."""

    def __init__(self, path):
        self.path = path
        self.accept = False
        self.connections = 0
        self.refused = 0
        self.accepted = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopping:
            try:
                connection, _ = self.server.accept()
            except socket.timeout:
                continue
            self.connections += 1
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection):
        buffer = b""
        with connection:
            while True:
                try:
                    data = connection.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buffer += data
                while b"\0" in buffer:
                    frame, buffer = buffer.split(b"\0", 1)
                    method = json.loads(frame)["method"]
                    interface = method.rsplit(".", 1)[0]
                    if self.accept:
                        self.accepted.append(method)
                        reply = {"parameters": {"id": "x"} if method.endswith("Donate") else {}}
                    else:
                        self.refused += 1
                        reply = {"error": interface + ".StorageFailed", "parameters": {"reason": "disk full"}}
                    connection.sendall(json.dumps(reply).encode() + b"\0")

    def close(self):
        self.stopping = True
        self.thread.join(timeout=2)
        self.server.close()


def test_a_service_that_cannot_take_calls_is_retried_ever_less_often():
    with tempfile.TemporaryDirectory() as directory:
        sock = os.path.join(directory, "sock")
        service = RefusingService(sock)
        config = os.path.join(directory, "desktop.conf")
        with open(config, "w") as file:
            # A fixed stack: its kinds are registered and the stack configured at start, before any launch.
            file.write("apps = org.example.a org.example.b\n")
        agent = subprocess.Popen(
            [str(DESKTOP), "--socket", sock, "--config", config, "--state", os.path.join(directory, "state")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(6)
            refused_while_failing = service.refused
            connections_while_failing = service.connections
            service.accept = True
            deadline = time.time() + 10
            while time.time() < deadline and len(service.accepted) < 3:
                time.sleep(0.1)
        finally:
            agent.terminate()
            output, _ = agent.communicate(timeout=10)
            service.close()
        # 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s: about 5 tries in 6 s (every 0.2 s would be about 30).
        assert 3 <= refused_while_failing <= 8, (refused_while_failing, output)
        assert connections_while_failing <= 8, (connections_while_failing, output)
        assert "cannot take calls now (io.smartstack.Provider.StorageFailed)" in output, output
        # The call refused for a while is the first taken, then the rest in order.
        assert service.accepted[:3] == [
            "io.smartstack.Provider.RegisterWidget", "io.smartstack.Provider.RegisterWidget",
            "io.smartstack.Shell.ConfigureStack"], service.accepted


def test_no_user_bus_is_said_once_with_why_not_every_second():
    """Without a user bus (no DBUS_SESSION_BUS_ADDRESS, no XDG_RUNTIME_DIR: run by hand over ssh or su), the agent
    logged "lost the D-Bus connection: … No medium found; reconnecting" once a second, forever, a connection it never
    had. Now one warning says what is missing, and the retries slow down to once a minute."""
    with tempfile.TemporaryDirectory() as directory:
        sock = os.path.join(directory, "sock")
        service = RefusingService(sock)
        service.accept = True
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")}
        agent = subprocess.Popen(
            [str(DESKTOP), "--socket", sock, "--state", os.path.join(directory, "state")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
        try:
            time.sleep(5)
        finally:
            agent.terminate()
            output, _ = agent.communicate(timeout=10)
            service.close()
        warnings = [line for line in output.splitlines() if "over D-Bus" in line and "cannot watch" in line]
        assert len(warnings) == 1, output
        assert "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set" in warnings[0], warnings
        assert "lost the D-Bus connection" not in output, output
