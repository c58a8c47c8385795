"""The README's examples, run in order against a fresh service: every method documented there works."""
import json
import shlex
import subprocess
import threading
import time

import varlink

from conftest import CTL, ROOT
from helpers import call, now_plus, setup_stack


def readme_examples():
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- examples:begin -->", 1)[1].split("<!-- examples:end -->", 1)[0]
    # A stream's example ends with "&" (it waits in the background when the block is pasted into a shell).
    return [line.split("   #", 1)[0].rstrip().removesuffix("&").rstrip()
            for line in block.splitlines() if line.startswith("smartstackctl ")]


def test_every_method_has_a_readme_example():
    examples = readme_examples()
    methods = {shlex.split(line)[2] for line in examples}
    for interface in ["io.smartstack.Provider", "io.smartstack.Shell", "io.smartstack.Admin", "org.varlink.service"]:
        parsed = varlink.Interface((ROOT / "Sources/SmartStackProtocol/Interfaces" / f"{interface}.varlink").read_text())
        declared = {f"{interface}.{name}" for name, member in parsed.members.items() if isinstance(member, varlink.scanner._Method)}
        assert declared <= methods, declared - methods


def test_readme_examples_run(daemon):
    for line in readme_examples():
        arguments = shlex.split(line)
        command = [str(CTL), "--address", daemon.address] + arguments[1:]
        if "WatchReloads" in line:
            # A stream that waits for the next reload request: it must connect and wait without an error.
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            assert process.poll() is None, process.communicate()
            process.terminate()
            process.wait(5)
            continue
        result = subprocess.run(command, capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, (line, result.stdout, result.stderr)
        reply = json.loads(result.stdout.splitlines()[0])
        assert isinstance(reply, dict)


def test_watch_reloads_streams_reload_requests(daemon):
    setup_stack(daemon.address, apps=("mail", "news"))
    replies = []
    ready = threading.Event()

    def watch():
        with varlink.Client(address=daemon.address) as client:
            with client.open("io.smartstack.Provider", namespaced=False) as provider:
                ready.set()
                for reply in provider.WatchReloads(app="com.example.news", _more=True):
                    replies.append(reply)
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert ready.wait(5)
    deadline = time.monotonic() + 5
    while call(daemon.address, "io.smartstack.Admin", "GetStatistics").get("reloadWatchers", 0) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    call(daemon.address, "io.smartstack.Provider", "ReloadTimelines", app="com.example.mail")
    call(daemon.address, "io.smartstack.Provider", "ReloadTimelines", app="com.example.news", kind="main")
    watcher.join(5)
    assert len(replies) == 1, replies
    assert replies[0]["app"] == "com.example.news"
    assert replies[0]["instance"] == "news"
    assert replies[0]["kind"] == "main"
    assert replies[0]["reason"] == "providerRequest"


def test_smartstackctl_commands(daemon):
    setup_stack(daemon.address)

    def ctl(*arguments):
        result = subprocess.run([str(CTL), "--address", daemon.address, *arguments], capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, (arguments, result.stdout, result.stderr)
        return result.stdout

    assert json.loads(ctl("--json", "status"))["stacks"] == 1
    assert "home" in ctl("stacks")
    assert "mail" in ctl("stack", "show", "home")
    assert json.loads(ctl("donate", "com.example.maps", "open", "--param", "q=x", "--id", "c1", "--json"))["id"] == "c1"
    pushed = ctl("timeline", "push", "com.example.news", "main", "--entry", now_plus(-5), "--entry", now_plus(60) + ",1,30")
    assert "accepted" in pushed
    watched = ctl("--json", "watch", "home", "--count", "1")
    assert json.loads(watched.splitlines()[0])["stack"] == "home"
    failed = subprocess.run([str(CTL), "--address", daemon.address, "stack", "show", "nope"], capture_output=True, text=True, timeout=20)
    assert failed.returncode != 0
    assert "NotFound" in failed.stderr
