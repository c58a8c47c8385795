"""Small helpers shared by the end-to-end tests: a raw Varlink codec and a scenario builder."""
import datetime
import json
import socket

import varlink


def rfc3339(moment):
    return moment.astimezone().isoformat(timespec="milliseconds")


def now_plus(seconds):
    return rfc3339(datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds))


def encode(method, parameters=None, **flags):
    message = {"method": method}
    if parameters is not None:
        message["parameters"] = parameters
    message.update(flags)
    return json.dumps(message).encode() + b"\0"


class FrameReader:
    """Reads NUL-terminated JSON replies from a raw socket."""

    def __init__(self, connection):
        self.connection = connection
        self.buffer = b""

    def next(self):
        while b"\0" not in self.buffer:
            chunk = self.connection.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the service")
            self.buffer += chunk
        frame, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(frame)

    def closed(self, timeout=5.0):
        """True when the service closes the connection (EOF or reset) within the timeout."""
        self.connection.settimeout(timeout)
        try:
            while True:
                chunk = self.connection.recv(65536)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def call(_address, _interface, _method, **parameters):
    """One call with the independent Python varlink client; returns the reply as a dict."""
    with varlink.Client(address=_address) as client:
        with client.open(_interface, namespaced=False) as remote:
            return getattr(remote, _method)(**parameters)


def setup_stack(address, apps=("mail", "news", "maps"), stack="home", developer_mode=False):
    """Registers one kind per app and configures a stack with one widget per app, in order."""
    with varlink.Client(address=address) as client:
        with client.open("io.smartstack.Provider", namespaced=False) as provider:
            for app in apps:
                provider.RegisterWidget(
                    app=f"com.example.{app}", kind="main", displayName=app, families=["systemMedium"])
        with client.open("io.smartstack.Shell", namespaced=False) as shell:
            widgets = [{"instance": app, "app": f"com.example.{app}", "kind": "main"} for app in apps]
            reply = shell.ConfigureStack(
                stack=stack, family="systemMedium", widgets=widgets, developerMode=developer_mode)
    return reply
