#!/usr/bin/env python3
"""Writes the seed corpora of the wire and dispatch fuzzers (docs/fuzzing.md) into Tests/fuzz/corpus/.

Seeds: every call of the README's smartstackctl examples as a Varlink frame (alone, and the whole session as one
stream), one GetInterfaceDescription per interface file, and the end-to-end bad-input table's requests (those
under 4 KiB). The codec's seeds come from `swift run fuzz-codec seeds DIR` (real encoded events and snapshots).
Run from the repository root; files are named after their content, so re-running adds nothing twice."""
import hashlib
import json
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Tests", "fuzz", "corpus")


def frame(method, parameters=None, **flags):
    message = {"method": method}
    if parameters is not None:
        message["parameters"] = parameters
    message.update(flags)
    return json.dumps(message, separators=(",", ":")).encode() + b"\0"


def readme_calls():
    """(method, parameters, more) of each `smartstackctl call` line in the README."""
    calls = []
    with open(os.path.join(ROOT, "README.md")) as readme:
        for line in readme:
            if not line.startswith("smartstackctl call "):
                continue
            words = shlex.split(line.split("#")[0] if "'" not in line.split("#")[-1] else line)
            method = words[2]
            parameters = json.loads(words[3]) if len(words) > 3 and words[3].startswith("{") else None
            calls.append((method, parameters, "--more" in words))
    return calls


def service_time(parameters):
    """The README's dates moved to the fuzzing service's fixed day (2024-03-04), so they are not in its future."""
    text = json.dumps(parameters)
    return json.loads(re.sub(r"20\d\d-\d\d-\d\dT", "2024-03-04T", text))


def write(target, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(directory, name), "wb") as file:
        file.write(data)


def main():
    calls = readme_calls()
    assert len(calls) > 20, "the README's call examples moved"
    frames = [frame(m, p, **({"more": True} if more else {})) for m, p, more in calls]
    dispatch_frames = [frame(m, service_time(p) if p else p, **({"more": True} if more else {}))
                       for m, p, more in calls]
    interfaces = sorted(f[:-len(".varlink")] for f in os.listdir(
        os.path.join(ROOT, "Sources", "SmartStackProtocol", "Interfaces")))
    frames += [frame("org.varlink.service.GetInterfaceDescription", {"interface": name}) for name in interfaces]

    sys.path.insert(0, os.path.join(ROOT, "Tests", "e2e"))
    import test_bad_input  # noqa: E402  (the table of hostile requests)
    hostile = [case[1] for case in test_bad_input.CASES if isinstance(case[1], bytes) and len(case[1]) <= 4096]

    # wire: the first byte sets the size of the pieces the frame decoder is fed; then the stream.
    for index, data in enumerate(frames + hostile):
        write("wire", bytes([index % 64]) + data)
        write("wire", data[:-1])  # the JSON text alone (the parser's own seed)
    write("wire", bytes([7]) + b"".join(frames))

    # dispatch: the README session as one stream, each call after the registrations it needs, the hostile table.
    registrations = [f for f, (m, _, _) in zip(dispatch_frames, calls) if m.endswith(("RegisterWidget", "ConfigureStack"))]
    write("dispatch", b"".join(dispatch_frames))
    for data in dispatch_frames:
        write("dispatch", b"".join(registrations) + data)
    for data in hostile:
        write("dispatch", data)


if __name__ == "__main__":
    main()
