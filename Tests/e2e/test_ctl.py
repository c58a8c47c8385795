"""smartstackctl against the real service: every verb in table and --json form, exit codes, colour, replay."""
import datetime
import json
import os
import pathlib
import pty
import subprocess
import threading
import time

import pytest

from conftest import CTL, ROOT
from helpers import now_plus


def ctl(daemon, *args, check=True, env=None, timeout=60):
    """Runs smartstackctl against the daemon (global options first, as people write them)."""
    address = ["--address", daemon.address] if daemon is not None else []
    result = subprocess.run(
        [str(CTL), *address, *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})})
    if check:
        assert result.returncode == 0, f"{args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def ctl_json(daemon, *args):
    """Runs with --json and returns the one JSON document printed."""
    result = ctl(daemon, "--json", *args)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])


def test_info_and_introspection(daemon):
    text = ctl(daemon, "info").stdout
    assert "Product: smartstackd" in text
    assert "io.smartstack.Shell" in text and daemon.address in text
    assert "io.smartstack.Admin" in ctl_json(daemon, "info")["interfaces"]
    shell = ctl(daemon, "introspect", "io.smartstack.Shell").stdout
    assert shell.startswith("# What shells") and "interface io.smartstack.Shell" in shell
    assert set(ctl_json(daemon, "introspect")["interfaces"]) == {
        "org.varlink.service", "io.smartstack.Provider", "io.smartstack.Shell", "io.smartstack.Admin"}


def configure(daemon):
    ctl(daemon, "widget", "register", "org.example.weather", "forecast", "--family", "systemSmall", "--family",
        "systemMedium", "--display-name", "Forecast", "--intent", "SelectCity", "--parameter", "city:string",
        "--parameter", "units:enum:metric|imperial=metric", "--mapping", "ShowCity:city=city")
    assert ctl_json(daemon, "widget", "register", "org.example.mail", "inbox", "--family", "systemMedium") == {}
    text = ctl(daemon, "stack", "configure", "home", "--family", "systemMedium", "--widget",
               "mail=org.example.mail/inbox", "--widget", "weather-paris=org.example.weather/forecast?city=Paris").stdout
    assert text.strip() == "configured home: 2 widgets, revision 1"


def test_shell_verbs(daemon):
    configure(daemon)
    reply = ctl_json(daemon, "stack", "configure", "work", "--family", "systemMedium", "--widget",
                     "mail-work=org.example.mail/inbox", "--no-suggestions", "--developer-mode", "--pin", "mail-work")
    assert reply["revision"] >= 1

    listed = ctl(daemon, "stacks").stdout.splitlines()
    assert listed[0].split() == ["STACK", "FAMILY", "WIDGETS", "ROTATE", "SUGGEST", "PINNED", "REVISION", "TOP"]
    assert listed[1].split()[:6] == ["home", "systemMedium", "2", "on", "on", "-"]
    assert listed[2].split()[:6] == ["work", "systemMedium", "1", "on", "off", "mail-work"]
    assert listed[-1] == "2 stacks listed."
    assert [stack["stack"] for stack in ctl_json(daemon, "stacks")["stacks"]] == ["home", "work"]

    shown = ctl(daemon, "stack", "show", "work").stdout
    assert "work · revision" in shown and "developer mode" in shown and "pinned mail-work" in shown
    assert "mail-work" in shown and "org.example.mail/inbox" in shown
    order = ctl_json(daemon, "stack", "show", "home", "--at", now_plus(60))
    assert {entry["instance"] for entry in order["order"]} == {"mail", "weather-paris"}
    assert ctl(daemon, "stack", "home").stdout.startswith("home · revision")  # show is the default

    assert ctl(daemon, "look", "home").stdout.strip() == "recorded a look at home"
    assert ctl_json(daemon, "look", "home", "--date", now_plus(0)) == {}
    assert ctl(daemon, "engage", "home", "weather-paris", "tap").stdout.strip() == \
        "recorded tap on weather-paris in home"
    assert ctl_json(daemon, "engage", "home", "mail", "impression", "--duration", "5") == {}
    assert ctl(daemon, "context", "set", "location=airport").stdout.strip() == "location=airport"
    assert ctl_json(daemon, "context", "set", "focus", "work") == {}
    assert ctl(daemon, "context", "clear", "focus").stdout.strip() == "cleared focus"

    explained = ctl(daemon, "explain", "home").stdout
    for text in ("Stack home", "Smart Rotate on", "weather-paris (org.example.weather / forecast)", "Reason",
                 "Score", "Relevance", "Stability", "Budget", "Pinned"):
        assert text in explained, explained
    one = ctl_json(daemon, "explain", "home", "weather-paris", "--at", now_plus(1))
    assert [widget["instance"] for widget in one["widgets"]] == ["weather-paris"]
    assert "budget" in one["widgets"][0] and "relevanceState" in one["widgets"][0]

    assert ctl(daemon, "budget", "weather-paris").stdout.startswith("weather-paris: 70 of 70 reloads left")
    assert ctl_json(daemon, "budget", "weather-paris", "--at", now_plus(0))["capacity"] == 70

    watched = ctl(daemon, "watch", "home", "--count", "1").stdout
    assert watched.startswith("home · revision") and "weather-paris" in watched
    lines = ctl(daemon, "--json", "watch", "--count", "2").stdout.splitlines()
    assert [json.loads(line)["stack"] for line in lines] == ["home", "work"]

    assert ctl(daemon, "stack", "remove", "work").stdout.strip() == "removed work"
    assert ctl_json(daemon, "stack", "remove", "home", "--date", now_plus(0)) == {}
    assert ctl(daemon, "stacks").stdout.strip() == "(no stacks)"


def test_provider_verbs(daemon):
    configure(daemon)
    assert ctl(daemon, "donate", "org.example.weather", "ShowCity", "--param", "city=Paris", "--id", "w-1",
               "--group", "trip").stdout.strip() == "donated w-1"
    made_up = ctl_json(daemon, "donate", "org.example.weather", "ShowCity", "--param", "city=Rome",
                       "--date", now_plus(-60))
    assert made_up["id"]
    listed = ctl(daemon, "donations", "list", "org.example.weather").stdout.splitlines()
    assert listed[0].split() == ["ID", "INTENT", "DATE", "GROUP", "PARAMETERS"]
    assert listed[1].split()[0] == "w-1" and listed[1].split()[3:] == ["trip", "city=Paris"]
    assert listed[-1] == "2 donations listed."
    page = ctl_json(daemon, "donations", "list", "org.example.weather", "--limit", "1")
    assert [donation["id"] for donation in page["donations"]] == ["w-1"]
    after = ctl_json(daemon, "donations", "list", "org.example.weather", "--after", "w-1")
    assert [donation["id"] for donation in after["donations"]] == [made_up["id"]]

    assert ctl(daemon, "donations", "delete", "org.example.weather", "--group", "trip").stdout.strip() == \
        "deleted 1 donations of org.example.weather"
    assert ctl_json(daemon, "donations", "delete", "org.example.weather", "--id", made_up["id"]) == {"deleted": 1}
    assert ctl_json(daemon, "donations", "delete", "org.example.weather", "--all") == {"deleted": 0}

    # A reload watcher sees the reload asked for below.
    watcher = subprocess.Popen([str(CTL), "--address", daemon.address, "--json", "watch-reloads",
                                "org.example.weather", "--count", "1"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    start = now_plus(-10)
    pushed = ctl(daemon, "timeline", "push", "org.example.weather", "forecast", "--config", "city=Paris",
                 "--entry", start, "--entry", f"{now_plus(3600)},0.8,3600", "--policy", "never").stdout
    assert pushed.startswith("timeline accepted: 2 entries")
    reply = ctl_json(daemon, "timeline", "push", "org.example.weather", "forecast", "--instance", "weather-paris",
                     "--entry", start, "--entry", f"{now_plus(60)},1,0", "--date", now_plus(0))
    assert reply["warnings"], "entries less than 5 minutes apart are accepted with a warning"
    assert ctl(daemon, "reload", "org.example.weather", "forecast").stdout.strip() == \
        "reload requested for weather-paris"
    output, _ = watcher.communicate(timeout=20)
    request = json.loads(output)
    assert request["instance"] == "weather-paris" and request["reason"] == "providerRequest"
    assert ctl_json(daemon, "reload", "org.example.weather") == {"requested": ["weather-paris"], "withheld": []}
    # An app that registered nothing is not found (it used to print "reload requested" and exit 0).
    unknown = ctl(daemon, "reload", "org.ex.none", check=False)
    assert unknown.returncode != 0 and "NotFound" in unknown.stderr, unknown

    declared = ctl(daemon, "relevance", "declare", "org.example.weather", "forecast", "--config", "city=Paris",
                   "--context", "location=airport", "--context", f"{now_plus(0)}/{now_plus(600)}",
                   "--group", "travel").stdout
    assert declared.strip() == "declared 2 relevant contexts and relevance group travel for org.example.weather/forecast"
    assert ctl_json(daemon, "relevance", "declare", "org.example.weather", "forecast", "--instance",
                    "weather-paris") == {}

    assert ctl(daemon, "live", "start", "org.example.mail", "sync-1", "--attribute", "title=Syncing",
               "--state", "progress=0.1").stdout.strip() == "started org.example.mail sync-1"
    assert ctl_json(daemon, "live", "update", "org.example.mail", "sync-1", "--state", "progress=0.6") == {}
    shown = ctl_json(daemon, "stack", "show", "home")
    assert shown["order"][0]["instance"] == "liveActivity:org.example.mail/sync-1"
    assert ctl(daemon, "live", "end", "org.example.mail", "sync-1", "--state", "progress=1",
               "--dismiss-after", "60").stdout.strip() == "ended org.example.mail sync-1"


def test_admin_verbs_and_call(daemon):
    configure(daemon)
    stats = ctl(daemon, "stats").stdout
    assert "Stacks: 1" in stats and "Widgets: 2" in stats and "Uptime:" in stats
    assert ctl(daemon, "status").stdout.splitlines()[0] == stats.splitlines()[0]  # alias
    assert ctl_json(daemon, "stats")["stacks"] == 1
    assert ctl(daemon, "log-level", "debug").stdout.strip() == "log level set to debug"
    assert ctl(daemon, "log-level").stdout.strip() == "debug"
    assert ctl_json(daemon, "log-level") == {"level": "debug"}
    assert ctl_json(daemon, "log-level", "info") == {"level": "info"}
    assert json.loads(ctl(daemon, "call", "io.smartstack.Shell.GetStack", '{"stack": "home"}').stdout)["stack"] == "home"
    streamed = ctl(daemon, "call", "io.smartstack.Shell.Subscribe", "{}", "--more", "--count", "1").stdout
    assert json.loads(streamed)["stack"] == "home"
    ctl(daemon, "call", "io.smartstack.Shell.RecordLook", '{"stack": "home"}', "--oneway")


def test_exit_codes(daemon, workdir):
    configure(daemon)
    missing = ctl(daemon, "stack", "show", "nope", check=False)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "smartstackctl: io.smartstack.Shell.NotFound: kind=stack id=nope"
    as_json = ctl(daemon, "--json", "explain", "nope", check=False)
    assert as_json.returncode == 2 and as_json.stdout == ""
    assert json.loads(as_json.stderr) == {"error": "io.smartstack.Shell.NotFound",
                                          "parameters": {"kind": "stack", "id": "nope"}}
    invalid = ctl(daemon, "stack", "configure", "x", "--family", "systemMedium", "--widget", "a=no.such/kind",
                  check=False)
    assert invalid.returncode == 2 and "NotFound" in invalid.stderr
    called = ctl(daemon, "call", "io.smartstack.Shell.GetStack", '{"stack": 1}', check=False)
    assert called.returncode == 2
    assert json.loads(called.stderr)["error"] == "org.varlink.service.InvalidParameter"

    for arguments in (["frobnicate"], ["stacks", "--bogus"], ["engage", "home", "mail", "poke"],
                      ["donations", "delete", "org.example.mail"], ["call", "x.y.Z", "[1]"], ["log-level", "loud"],
                      ["stack", "configure", "s", "--family", "systemSmall", "--widget", "nonsense"],
                      ["replay", "--window", "100000", "log.tsv"], ["replay", "--stack-size", "5000", "log.tsv"],
                      ["explain", "home", "--at", "300000-01-01"], ["analyze", "--since", "-99999999999w"],
                      ["engage", "home", "mail", "tap", "--date", "2025-02-30"],
                      ["stack", "configure", "s", "--family", "systemMedium", "--widget", "a=b.c/d", "--widgets-json", "[]"],
                      ["widget", "register", "org.example.mail", "main", "--family", "systemMedium", "--mapping", ":x=y"]):
        result = ctl(daemon, *arguments, check=False)
        assert result.returncode == 64, (arguments, result.returncode, result.stderr)
        assert "Error:" in result.stderr
        # The usage printed is the command's, not the root's, whether the check ran before or in the command.
        assert "smartstackctl <subcommand>" not in result.stderr or arguments == ["frobnicate"], result.stderr
    for arguments, command in ((["stack", "configure", "s", "--family", "systemMedium", "--widgets-json", "{"],
                                "stack configure"),
                               (["stack", "configure", "s", "--family", "systemMedium"], "stack configure"),
                               (["log-level", "loud"], "log-level")):
        result = ctl(daemon, *arguments, check=False)
        assert result.returncode == 64, (arguments, result.stderr)
        assert f"Usage: smartstackctl {command} " in result.stderr, result.stderr
        assert f"See 'smartstackctl {command} --help'" in result.stderr, result.stderr
    assert "unknown command 'frobnicate'" in ctl(daemon, "frobnicate", check=False).stderr
    assert ctl(None, "--address", "tcp:1.2.3.4", "stacks", check=False).returncode == 64

    bad_log = pathlib.Path(workdir) / "bad.tsv"
    bad_log.write_text("user\ttime\tapp\tevent\nu\tnot-a-time\tx\topen\n")
    malformed = ctl(daemon, "replay", str(bad_log), check=False)
    assert malformed.returncode == 65 and "bad.tsv:2:" in malformed.stderr
    assert ctl(daemon, "replay", str(pathlib.Path(workdir) / "missing.tsv"), check=False).returncode == 66
    no_journal = ctl(None, "analyze", "--directory", str(pathlib.Path(workdir) / "none"), check=False)
    assert no_journal.returncode == 66 and "cannot read directory" in no_journal.stderr


def test_typed_calls_are_checked_before_connecting(daemon, workdir):
    """The command line builds typed requests and checks them with the service's own decoder: a bad value
    fails before connecting, with the error the service gives for the same call (exit 2), so it reads the same
    whether the service runs or not."""
    nowhere = f"unix:{pathlib.Path(workdir) / 'no' / 'io.smartstack'}"
    cases = [
        (["stack", "show", "bad stack"], "io.smartstack.Shell.GetStack", {"stack": "bad stack"}),
        (["donate", "org.example.mail", ""], "io.smartstack.Provider.Donate", {"app": "org.example.mail", "intent": ""}),
        (["look", "home", "--date", "2030-01-01T00:00:00Z"], None, None),
        (["stack", "remove-widget", "home", "ok", "not ok"], "io.smartstack.Shell.ChangeStack",
         {"stack": "home", "remove": ["ok", "not ok"]}),
        (["budget", "a\tb"], "io.smartstack.Shell.GetBudget", {"instance": "a\tb"}),
        (["context", "set", "=x"], "io.smartstack.Shell.SetContext", {"key": "", "value": "x"}),
        (["live", "end", "org.example.mail", "trip", "--dismiss-after", "99999"], "io.smartstack.Provider.EndLiveActivity",
         {"app": "org.example.mail", "id": "trip", "dismissAfter": 99999}),
    ]
    for arguments, method, parameters in cases:
        offline = ctl(None, "--json", "--address", nowhere, *arguments, check=False)
        if method is None:
            assert offline.returncode == 69, (arguments, offline.stderr)  # valid: it tries to connect
            continue
        assert offline.returncode == 2, (arguments, offline.returncode, offline.stderr)
        served = ctl(daemon, "call", method, json.dumps(parameters), check=False)
        assert served.returncode == 2, (arguments, served.stderr)
        assert json.loads(offline.stderr) == json.loads(served.stderr), arguments
        assert json.loads(offline.stderr)["error"] == "org.varlink.service.InvalidParameter"


def test_unreachable_service(workdir):
    socket_path = pathlib.Path(workdir) / "no" / "io.smartstack"
    log = pathlib.Path(workdir) / "usage.tsv"
    small_log(log, users=1, days=1)
    for arguments in (["stacks"], ["explain", "home"], ["watch"], ["replay", str(log)]):
        result = ctl(None, "--address", f"unix:{socket_path}", *arguments, check=False)
        assert result.returncode == 69, (arguments, result.stderr)
        assert f"cannot reach smartstackd at unix:{socket_path}: No such file or directory" in result.stderr
        assert "systemctl status smartstackd" in result.stderr
    # A path that is there but is no socket says so (it read "Connection refused", as for a stopped service).
    not_socket = ctl(None, "--address", f"unix:{workdir}", "stacks", check=False)
    assert not_socket.returncode == 69
    assert f"cannot reach smartstackd at unix:{workdir}: it is not a socket" in not_socket.stderr, not_socket.stderr
    assert "Is the service running" not in not_socket.stderr
    as_json = ctl(None, "--json", "--address", f"unix:{socket_path}", "stats", check=False)
    assert as_json.returncode == 69
    assert json.loads(as_json.stderr)["parameters"]["address"] == f"unix:{socket_path}"
    # The default address is the user's (XDG_RUNTIME_DIR) or the system's socket.
    default = ctl(None, "stacks", check=False, env={"XDG_RUNTIME_DIR": str(workdir)})
    assert default.returncode == 69
    assert (f"unix:{workdir}/smartstack/io.smartstack" in default.stderr
            or "unix:/run/smartstack/io.smartstack" in default.stderr)


def run_in_terminal(arguments, env):
    """Runs smartstackctl with a pseudo-terminal as stdout and stderr; returns what it wrote."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(CTL), [str(CTL), *arguments], env)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.waitpid(pid, 0)
    return output.decode()


def test_colour_only_on_a_terminal(daemon):
    configure(daemon)
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    env["TERM"] = "xterm"
    assert "\x1b[" not in ctl(daemon, "stacks", env={"TERM": "xterm"}).stdout
    coloured = run_in_terminal(["--address", daemon.address, "stacks"], env)
    assert "\x1b[1mSTACK" in coloured
    plain = run_in_terminal(["--address", daemon.address, "stacks"], {**env, "NO_COLOR": "1"})
    assert "STACK" in plain and "\x1b[" not in plain
    assert "\x1b[" not in run_in_terminal(["--address", daemon.address, "--json", "stacks"], env)


def small_log(path, users=2, days=3):
    """A usage log with `users` people opening a few apps and looking at home, minute by minute."""
    start = datetime.datetime(2024, 3, 4, 8, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    apps = ["mail", "editor", "browser", "chat", "music"]
    lines = ["# smartstack-usage/1", "user\ttime\tapp\tevent"]
    for user in range(users):
        for step in range(days * 40):
            moment = start + datetime.timedelta(days=step // 40, minutes=3 * (step % 40), seconds=user)
            stamp = moment.isoformat(timespec="milliseconds")
            if step % 4 == 0:
                lines.append(f"person {user}\t{stamp}\t-\thome")
            else:
                lines.append(f"person {user}\t{stamp}\t{apps[(step * (user + 1)) % len(apps)]}.app\topen")
    path.write_text("\n".join(lines) + "\n")
    return len(lines) - 2


def test_replay(daemon, workdir):
    log = pathlib.Path(workdir) / "usage.tsv"
    rows = small_log(log)
    text = ctl(daemon, "replay", str(log), "--stack-size", "3").stdout
    assert text.startswith(f"replayed {rows} rows of 2 users in ")
    assert "no errors" in text
    stacks = ctl_json(daemon, "stacks")["stacks"]
    assert [stack["stack"] for stack in stacks] == ["person_200", "person_201"]
    assert all(len(stack["widgets"]) == 3 for stack in stacks)
    donations = ctl_json(daemon, "stats")["donations"]
    assert donations == sum(1 for line in log.read_text().splitlines() if line.endswith("\topen"))
    # Donation ids come from the rows: a second replay adds nothing, and --evaluate scores the moments.
    again = ctl_json(daemon, "replay", str(log), "--stack-size", "3", "--evaluate", "--window", "7")
    assert again["errors"] == {} and again["rows"] == rows
    assert again["evaluation"]["moments"] > 0 and 0 <= again["evaluation"]["hit1"] <= 1
    assert [stack["stack"] for stack in again["stacks"]] == ["person_200", "person_201"]
    assert ctl_json(daemon, "stats")["donations"] == donations
    explained = ctl(daemon, "explain", "person_200").stdout
    assert "learned from" in explained and "1. person_200." in explained and "Budget" in explained


def test_replay_progress_bar_on_a_terminal(daemon, workdir):
    log = pathlib.Path(workdir) / "usage.tsv"
    small_log(log, users=1, days=2)
    env = {**os.environ, "TERM": "xterm"}
    output = run_in_terminal(["--address", daemon.address, "replay", str(log)], env)
    assert "replay [" in output and "rows" in output and "\r" in output
    assert "replayed 80 rows of 1 user" in output
    quiet = ctl(daemon, "replay", str(log))
    assert "replay [" not in quiet.stderr


def test_completions_and_manual(workdir):
    for shell, marker in (("bash", "-F _smartstackctl smartstackctl"), ("zsh", "#compdef smartstackctl"), ("fish", "complete -c 'smartstackctl'")):
        script = subprocess.run([str(CTL), "--generate-completion-script", shell], capture_output=True, text=True,
                                check=True).stdout
        assert marker in script and "analyze" in script and "replay" in script
    output = pathlib.Path(workdir) / "smartstackctl.1"
    subprocess.run(["python3", str(ROOT / "scripts" / "smartstackctl-manual.py"), str(CTL), str(output)], check=True)
    page = output.read_text()
    assert page.startswith(".TH SMARTSTACKCTL 1")
    for verb in ("explain", "replay", "analyze", "donations delete", "live start", "EXIT STATUS"):
        assert verb in page, verb
    rendered = subprocess.run(["man", "-l", "-P", "cat", str(output)], capture_output=True, text=True,
                              env={**os.environ, "MANWIDTH": "100"})
    if rendered.returncode == 0:
        assert "smartstackctl" in rendered.stdout


def test_make_install_ctl(workdir):
    """make install-ctl puts the completions and the man page under DESTDIR/PREFIX."""
    destination = pathlib.Path(workdir) / "root"
    subprocess.run(["make", "-s", "install-ctl", "CTL_CONFIGURATION=debug", f"DESTDIR={destination}",
                    "PREFIX=/usr"], cwd=ROOT, check=True, capture_output=True, timeout=600)
    share = destination / "usr" / "share"
    for path in ("bash-completion/completions/smartstackctl", "zsh/site-functions/_smartstackctl",
                 "fish/vendor_completions.d/smartstackctl.fish", "man/man1/smartstackctl.1"):
        assert (share / path).stat().st_size > 0, path
    assert (share / "man/man1/smartstackctl.1").read_text().startswith(".TH SMARTSTACKCTL 1")


def fake_service(path, answer):
    """A Unix socket that reads one call per connection and sends `answer` (bytes, or None for nothing at all)."""
    import socket
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    held = []

    def serve():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            held.append(connection)
            try:
                connection.recv(65536)
                if answer is not None:
                    connection.sendall(answer)
            except OSError:
                pass

    threading.Thread(target=serve, daemon=True).start()
    return server, held


def test_a_service_that_never_answers_or_answers_wrongly_fails_the_call(workdir):
    """smartstackctl waits for a reply at most --timeout seconds (120 by default), as varlinkctl does; a reply with
    'continues' to a call made without 'more' is a protocol error, as sd-varlink and the reference client say (it was
    taken as the answer, and the next reply as the next call's)."""
    silent_path = os.path.join(workdir, "silent.sock")
    silent, held = fake_service(silent_path, None)
    wrong_path = os.path.join(workdir, "wrong.sock")
    wrong, _ = fake_service(wrong_path, b'{"parameters":{},"continues":true}\0{"parameters":{"x":1}}\0')
    try:
        started = time.monotonic()
        result = subprocess.run([str(CTL), "--timeout", "1", "--address", "unix:" + silent_path, "status"],
                                capture_output=True, text=True, timeout=30)
        elapsed = time.monotonic() - started
        assert result.returncode != 0 and "no reply within 1 s" in result.stderr, (result.returncode, result.stderr)
        assert elapsed < 10, elapsed
        # A fraction of a second is said as it was given (it read "0 s"), and a service reached but silent is not
        # told to be started.
        result = subprocess.run([str(CTL), "--timeout", "0.25", "--address", "unix:" + silent_path, "status"],
                                capture_output=True, text=True, timeout=30)
        assert "connected, but no reply within 0.25 s" in result.stderr, result.stderr
        assert "Is the service running" not in result.stderr and "--timeout" in result.stderr, result.stderr
        result = subprocess.run([str(CTL), "--address", "unix:" + wrong_path, "status"], capture_output=True,
                                text=True, timeout=30)
        assert result.returncode != 0 and "continues" in result.stderr, (result.returncode, result.stderr)
        bad = subprocess.run([str(CTL), "--timeout", "-1", "--address", "unix:" + silent_path, "status"],
                             capture_output=True, text=True, timeout=30)
        assert bad.returncode == 64 and "--timeout" in bad.stderr, (bad.returncode, bad.stderr)
    finally:
        silent.close()
        wrong.close()
        for connection in held:
            connection.close()


def test_addresses_as_varlinkctl_takes_them(daemon):
    """A bare path works as unix:PATH does; an abstract socket is refused by name, not tried as a file."""
    path = daemon.address[len("unix:"):]
    assert json.loads(subprocess.run([str(CTL), "--json", "--address", path, "status"], capture_output=True,
                                     text=True, timeout=30, check=True).stdout)["stacks"] == 0
    result = subprocess.run([str(CTL), "--address", "unix:@smartstack", "status"], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 64 and "abstract sockets" in result.stderr, (result.returncode, result.stderr)


def test_time_flags_keep_the_written_offset_and_take_every_form(daemon):
    """An RFC 3339 time keeps the offset it was written with (the service learns the hour of the day on the clock
    the time names), and every option that takes a time takes every form, relative times with a leading '-' too:
    --entry, --policy after=, --context START/END."""
    ctl(daemon, "widget", "register", "org.example.clock", "main", "--family", "systemMedium")
    ctl(daemon, "stack", "configure", "clocks", "--family", "systemMedium", "--widget", "c=org.example.clock/main")
    yesterday = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)).strftime("%Y-%m-%d")
    written = f"{yesterday}T09:00:00-08:00"
    ctl(daemon, "donate", "org.example.clock", "open", "--id", "pacific", "--date", written, env={"TZ": "UTC"})
    listed = ctl_json(daemon, "donations", "list", "org.example.clock")["donations"]
    assert [d["date"] for d in listed if d["id"] == "pacific"] == [f"{yesterday}T09:00:00.000-08:00"]
    # Relative times everywhere, the leading '-' included.
    ctl(daemon, "timeline", "push", "org.example.clock", "main", "--instance", "c", "--entry", "-10min",
        "--entry", "+1h,0.5,600", "--policy", "after=+2h")
    ctl(daemon, "relevance", "declare", "org.example.clock", "main", "--instance", "c", "--context", "-1h/+1h")
    widget = ctl_json(daemon, "explain", "clocks")["widgets"][0]
    assert widget["relevantContext"] == 0, widget
    next_reload = datetime.datetime.fromisoformat(widget["nextReload"].replace("Z", "+00:00"))
    ahead = (next_reload - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 7_000 < ahead <= 7_200, widget["nextReload"]
    # A time that is none is named as such.
    bad = ctl(daemon, "timeline", "push", "org.example.clock", "main", "--instance", "c", "--entry", "+1h",
              "--policy", "after=soon", check=False)
    assert bad.returncode != 0 and "after='soon' is not a time" in bad.stderr
    bad = ctl(daemon, "relevance", "declare", "org.example.clock", "main", "--instance", "c", "--context",
              "later/+1h", check=False)
    assert bad.returncode != 0 and "START and END must each be a time" in bad.stderr


def test_contradictory_options_are_usage_errors_and_widget_values_are_percent_decoded(daemon):
    """The command-line review's small defects: each was taken (exit 0) and did something else than asked."""
    ctl(daemon, "widget", "register", "org.example.weather", "forecast", "--family", "systemMedium",
        "--intent", "SelectCity", "--parameter", "city:string")
    ctl(daemon, "widget", "register", "org.example.mail", "inbox", "--family", "systemMedium")
    # --empty with --widget (the widget was configured).
    refused = ctl(daemon, "stack", "configure", "home", "--family", "systemMedium", "--empty",
                  "--widget", "mail=org.example.mail/inbox", check=False)
    assert refused.returncode == 64 and "--empty" in refused.stderr, refused
    # %XX in a widget's configuration, as the service writes suggestion ids.
    ctl(daemon, "stack", "configure", "home", "--family", "systemMedium",
        "--widget", "tj=org.example.weather/forecast?city=Tom%20%26%20Jerry", "--widget", "mail=org.example.mail/inbox")
    widgets = {w["instance"]: w for s in ctl_json(daemon, "stacks")["stacks"] for w in s["widgets"]}
    assert widgets["tj"]["configuration"] == {"city": "Tom & Jerry"}, widgets
    for value in ("100%", "%+A", "%-0"):  # a sign was taken as a digit: '%+A' was a newline, '%-0' a NUL
        bad = ctl(daemon, "stack", "add", "home", "--widget", f"x=org.example.weather/forecast?city={value}",
                  check=False)
        assert bad.returncode == 64 and "%25" in bad.stderr, (value, bad)
    # --count 0 printed one reply.
    for args in (("watch", "home", "--count", "0"), ("watch-reloads", "org.example.weather", "--count", "0"),
                 ("call", "io.smartstack.Shell.Subscribe", "{}", "--more", "--count", "0")):
        result = ctl(daemon, *args, check=False, timeout=10)
        assert result.returncode == 64 and "--count" in result.stderr and result.stdout == "", (args, result)
    # analyze with --since after --until reported an empty, inverted range.
    result = ctl(daemon, "analyze", "--since", "-1h", "--until", "-3h", "--file", "/dev/null", check=False)
    assert result.returncode == 64 and "--since" in result.stderr, result
    # budget --at a time that is not now said "a reload is possible now".
    later = ctl(daemon, "budget", "tj", "--at", "+25h").stdout
    assert "possible then" in later and "possible now" not in later, later
    assert "possible now" in ctl(daemon, "budget", "tj").stdout
