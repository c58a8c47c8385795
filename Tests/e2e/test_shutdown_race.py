"""SIGTERM while clients keep connecting: the daemon always exits 0 (no connection is dropped unfinished)."""
import os
import signal
import socket
import subprocess
import threading
import time

from conftest import DAEMON


def test_sigterm_during_a_storm_of_connections_exits_zero(workdir):
    for round in range(8):
        directory = os.path.join(workdir, f"r{round}")
        os.makedirs(directory)
        path = os.path.join(directory, "sock")
        process = subprocess.Popen(
            [str(DAEMON), "--listen", path, "--state", os.path.join(directory, "state")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.01)
        stop = threading.Event()

        def storm():
            while not stop.is_set():
                try:
                    with socket.socket(socket.AF_UNIX) as connection:
                        connection.connect(path)
                        connection.sendall(b'{"method":"org.varlink.service.GetInfo"}\0')
                except OSError:
                    pass

        threads = [threading.Thread(target=storm) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(15)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
            if process.poll() is None:
                process.kill()
        assert code == 0, process.stderr.read().decode()[-2000:]
