"""One Varlink call over a raw socket with the standard library only, for tests that run it as another user
(setpriv) with the system's python3, which cannot see the test runner's packages.

    raw_call.py PATH METHOD [JSON]   prints the reply (or the error) as one JSON line
"""
import json
import socket
import sys

path, method = sys.argv[1], sys.argv[2]
parameters = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
    connection.settimeout(10)
    try:
        connection.connect(path)
    except OSError as error:
        print(json.dumps({"connect": error.strerror}))
        sys.exit(0)
    connection.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
    data = b""
    while b"\0" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            print(json.dumps({"closed": True}))
            sys.exit(0)
        data += chunk
    print(data.split(b"\0", 1)[0].decode())
