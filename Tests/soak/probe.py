"""GetStack round trips on one connection, one every 10 ms, in a process of its own (so the soak's own client
process does not add its queueing): writes each, in seconds, with the monotonic time it finished, to the file named
by its third argument; reconnects when the daemon is killed.

    probe.py SOCKET STACK[,STACK...] SAMPLES-FILE
"""
import json, os, signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
# The probe measures the service, not how long the busy load generator beside it keeps it off the CPU: it runs
# ahead of the load's processes when it may (root), in the unloaded run and under load alike.
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except (OSError, AttributeError):
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    except OSError:
        pass
path, stacks, out = sys.argv[1], sys.argv[2].split(","), open(sys.argv[3], "w", buffering=1)
index = 0
while True:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(path)
            buffer = b""
            while True:
                index += 1
                began = time.monotonic()
                s.sendall(json.dumps({"method": "io.smartstack.Shell.GetStack",
                                      "parameters": {"stack": stacks[index % len(stacks)]}}).encode() + b"\0")
                while b"\0" not in buffer:
                    chunk = s.recv(65536)
                    if not chunk:
                        raise ConnectionError()
                    buffer += chunk
                buffer = buffer.split(b"\0", 1)[1]
                out.write(f"{time.monotonic() - began} {time.monotonic()}\n")
                time.sleep(0.01)
    except OSError:
        time.sleep(0.05)
