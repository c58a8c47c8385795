"""`smartstackctl analyze` against a real systemd-journald, never the machine's own journal.

journald runs in private mount and pid namespaces (`unshare`), with tmpfs over /run/systemd, /run/log,
/var/log/journal and /var/lib/systemd, as Tests/SmartStackSystemdTests/JournaldTests.swift does: when the
namespace's first process exits, the kernel ends journald with it. Inside, either the test-only probe writes
hand-made entries through JournalWriter, or the real smartstackd runs with its stderr connected to the
journal (as systemd would connect it) while `smartstackctl replay` feeds it a usage log. The journal files
are copied out, and analyze reads them again from outside (`--directory`, `--file`) as from another machine.
"""
import collections
import datetime
import html.parser
import json
import os
import pathlib
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import BUILD, CTL, DAEMON, ROOT
from test_ctl import small_log

PROBE = BUILD / "smartstack-systemd-probe"
JOURNALD = shutil.which("systemd-journald", path="/lib/systemd:/usr/lib/systemd") or "/lib/systemd/systemd-journald"
USAGE_LOG = ROOT.parent / "shared" / "data" / "usage" / "desktop.tsv"

MESSAGE_IDS = {
    "orderChanged": "040d2f906681431293c211e0a6ef5c64",
    "suggestionInserted": "aae23b06f80c441c88b40142c14fc332",
    "suggestionRemoved": "9c657d10b28944d095054ad8aef5d864",
    "reloadRequested": "a8c214f073314df1b3267b8bd145194c",
    "reloadWithheld": "e8e74928e7d3428daf2d415ecf85e6e9",
}

needs_journald = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not os.path.exists(JOURNALD)
    or not shutil.which("journalctl") or not shutil.which("systemd-cat"),
    reason="needs root, unshare, systemd-journald, journalctl and systemd-cat")

PREAMBLE = r"""
set -eu
out=$1
shift
for dir in /run/systemd /run/log /var/log/journal /var/lib/systemd; do mount -t tmpfs tmpfs "$dir"; done
SYSTEMD_LOG_TARGET=console "$JOURNALD" 2> "$out/journald.log" & journald=$!
trap 'kill $journald 2>/dev/null; wait $journald 2>/dev/null || true' EXIT
i=0; until [ -S /run/systemd/journal/socket ]; do i=$((i+1)); [ $i -lt 500 ] || exit 3; sleep 0.01; done
"""

EPILOGUE = r"""
journalctl --sync 2>/dev/null || sleep 1
for name in orderChanged:040d2f906681431293c211e0a6ef5c64 suggestionInserted:aae23b06f80c441c88b40142c14fc332 \
    suggestionRemoved:9c657d10b28944d095054ad8aef5d864 reloadRequested:a8c214f073314df1b3267b8bd145194c \
    reloadWithheld:e8e74928e7d3428daf2d415ecf85e6e9; do
    journalctl --no-pager -o json SYSLOG_IDENTIFIER=smartstackd "MESSAGE_ID=${name#*:}" > "$out/${name%%:*}.json"
done
"$CTL" analyze --json > "$out/analyze-local.json"
"$CTL" analyze --html "$out/report.html" > "$out/analyze-local.txt"
# Volatile (/run/log/journal) until flushed to /var/log/journal: copy both.
mkdir -p "$out/journal-copy"
cp -r /run/log/journal "$out/journal-copy/run" 2>/dev/null || true
cp -r /var/log/journal "$out/journal-copy/var"
"""


def run_in_namespace(directory, body, environment, timeout=300):
    script = pathlib.Path(directory) / "namespace.sh"
    script.write_text(PREAMBLE + body + EPILOGUE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "JOURNALD": JOURNALD, "CTL": str(CTL), **environment}
    result = subprocess.run(
        ["timeout", "-s", "KILL", str(timeout), "unshare", "--mount", "--pid", "--fork", "--kill-child",
         "--mount-proc", "--propagation", "private", "/bin/sh", str(script), str(directory)],
        capture_output=True, text=True, env=env, timeout=timeout + 30)
    assert result.returncode == 0, f"namespace script failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def journal_entries(directory, name):
    path = pathlib.Path(directory) / f"{name}.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ctl_json(*arguments):
    result = subprocess.run([str(CTL), "--json", *arguments], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def journal_directory(directory):
    """The copied machine directory (/run/log/journal/MACHINE-ID, or /var/…) and its journal files."""
    machines = [path.parent for path in (pathlib.Path(directory) / "journal-copy").glob("*/*/*.journal")]
    machines = sorted(set(machines))
    assert len(machines) == 1, machines
    files = sorted(str(path) for path in machines[0].glob("*.journal"))
    assert files
    return machines[0], files


def check_counts_against_journalctl(directory, analysis):
    """The counts analyze reports equal those read back with journalctl -o json."""
    orders = journal_entries(directory, "orderChanged")
    per_stack = collections.Counter(entry["SMARTSTACK_STACK"] for entry in orders)
    decisions = {stack["stack"]: stack["decisions"] for stack in analysis["stacks"]}
    assert decisions == dict(per_stack)
    changes = collections.Counter()
    for entry in orders:
        changes[entry["SMARTSTACK_STACK"]] += int(entry.get("SMARTSTACK_COUNT", "1"))
    assert {stack["stack"]: stack["changes"] for stack in analysis["stacks"]} == dict(changes)
    for name in MESSAGE_IDS:
        assert analysis["entries"][name] == len(journal_entries(directory, name)), name
    inserted = collections.Counter(entry["SMARTSTACK_STACK"] for entry in journal_entries(directory, "suggestionInserted"))
    assert {stack["stack"]: stack["suggestionsInserted"] for stack in analysis["stacks"] if stack["suggestionsInserted"]} \
        == dict(inserted)
    return orders


def widgets_by_stack(directory):
    """Every widget each stack's entries name: its lanes."""
    widgets = collections.defaultdict(set)
    for entry in journal_entries(directory, "orderChanged"):
        for field in ("SMARTSTACK_ORDER", "SMARTSTACK_PREVIOUS_ORDER"):
            widgets[entry["SMARTSTACK_STACK"]].update(item for item in entry.get(field, "").split(",") if item)
    for entry in journal_entries(directory, "suggestionInserted"):
        widgets[entry["SMARTSTACK_STACK"]].add(entry["SMARTSTACK_WIDGET"])
    return widgets


class _HTMLChecker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = collections.Counter()

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1


def check_html(directory, expected_widgets):
    """The report parses as XML and as HTML, has no scripts or external references, one lane per widget."""
    text = (pathlib.Path(directory) / "report.html").read_text()
    checker = _HTMLChecker()
    checker.feed(text)
    assert checker.tags["script"] == 0 and checker.tags["svg"] == len(expected_widgets)
    root = ElementTree.fromstring(text)
    namespaces = {"h": "http://www.w3.org/1999/xhtml", "s": "http://www.w3.org/2000/svg"}
    svgs = root.findall(".//s:svg", namespaces)
    assert {svg.get("data-stack") for svg in svgs} == set(expected_widgets)
    for svg in svgs:
        lanes = [lane.get("data-widget") for lane in svg.findall("s:g[@class='lane']", namespaces)]
        assert len(lanes) == len(set(lanes)) == len(expected_widgets[svg.get("data-stack")])
        assert set(lanes) == expected_widgets[svg.get("data-stack")]
        fills = {rect.get("fill") for rect in svg.iter("{http://www.w3.org/2000/svg}rect") if rect.get("class") == "on-top"}
        assert fills, "bars coloured per widget"
    for element in root.iter():
        for key in ("src", "href"):
            assert not (element.get(key) or "#").lstrip("#").startswith(("http", "//")), element.get(key)
    assert root.findall(".//h:ul[@class='legend']", namespaces)


@needs_journald
@pytest.mark.skipif(not PROBE.exists(), reason="needs smartstack-systemd-probe: swift build --build-tests")
def test_analyze_entries_written_through_journal_writer(workdir):
    """Hand-made entries with the daemon's fields, written with JournalWriter into a private journald."""
    def order(stack, order, previous, reason, count="1"):
        return ["--", "orderChanged", f"Order of stack {stack} changed", f"SMARTSTACK_STACK={stack}",
                f"SMARTSTACK_ORDER={order}", f"SMARTSTACK_PREVIOUS_ORDER={previous}",
                f"SMARTSTACK_TOP={order.split(',')[0]}", f"SMARTSTACK_REASON={reason}", f"SMARTSTACK_COUNT={count}",
                "SMARTSTACK_SCORES=" + ",".join(f"{widget}=0.5" for widget in order.split(","))]
    entries = (
        order("home", "mail,news", "", "behaviour")
        + ["--", "suggestionInserted", "Suggestion inserted", "SMARTSTACK_STACK=home",
           "SMARTSTACK_WIDGET=suggestion:org.example.maps/nearby", "SMARTSTACK_REASON=suggestion"]
        + order("home", "news,mail,suggestion:org.example.maps/nearby", "mail,news", "relevance", "4")
        + ["--", "reloadRequested", "Reload requested", "SMARTSTACK_WIDGET=news", "SMARTSTACK_REASON=timelineEnded"]
        + ["--", "reloadWithheld", "Reload withheld", "SMARTSTACK_WIDGET=news", "SMARTSTACK_REASON=budget"]
        + order("home", "mail,news", "news,mail,suggestion:org.example.maps/nearby", "manualSwipe")
        + order("work", "slack", "", "behaviour")
        + ["--", "started", "smartstackd started"])
    body = '"$PROBE" journal --force ' + " ".join(f"'{item}'" for item in entries) + " > /dev/null\n"
    run_in_namespace(workdir, body, {"PROBE": str(PROBE)})

    local = json.loads((pathlib.Path(workdir) / "analyze-local.json").read_text())
    check_counts_against_journalctl(workdir, local)
    home = next(stack for stack in local["stacks"] if stack["stack"] == "home")
    assert (home["decisions"], home["changes"], home["topChanges"], home["manualSwipes"]) == (3, 6, 2, 1)
    assert home["rotationReasons"] == {"manualSwipe": 1, "relevance": 1}
    assert (home["suggestionsInserted"], home["reloadsRequested"], home["reloadsWithheld"]) == (1, 1, 1)
    assert home["widgets"] == ["mail", "news", "suggestion:org.example.maps/nearby"]
    news = next(widget for widget in local["widgets"] if widget["widget"] == "news")
    assert (news["surfacedByRelevance"], news["reloadsRequested"], news["engagementRate"]) == (1, 1, None)
    assert local["source"] == "the local journal"

    # The same files read from outside the namespace, as copied from another machine.
    machine, files = journal_directory(workdir)
    copied = ctl_json("analyze", "--directory", str(machine))
    by_files = ctl_json("analyze", *[argument for path in files for argument in ("--file", path)])
    for other in (copied, by_files):
        assert other["stacks"] == local["stacks"] and other["widgets"] == local["widgets"]
        assert other["entries"] == local["entries"]
    # A range that ends before the first entry holds nothing; one that starts after the last, too.
    assert ctl_json("analyze", "--directory", str(machine), "--until", "2000-01-01")["stacks"] == []
    assert ctl_json("analyze", "--directory", str(machine), "--since", "+1h")["stacks"] == []
    assert ctl_json("analyze", "--directory", str(machine), "--unit", "nothing.service")["stacks"] == []
    text = subprocess.run([str(CTL), "analyze", "--directory", str(machine)], capture_output=True, text=True,
                          check=True).stdout
    assert "home" in text and "Time on top in home" in text and "manualSwipe 1, relevance 1" in text
    check_html(workdir, widgets_by_stack(workdir))


@needs_journald
def test_analyze_a_replay_through_the_real_daemon(workdir):
    """smartstackd writes its decision entries to a real journald while smartstackctl replays a usage log;
    analyze's counts equal journalctl's, and its HTML has one lane per widget."""
    log = pathlib.Path(workdir) / "usage.tsv"
    if USAGE_LOG.exists():
        # One real person's log (sur-D, 1,112 rows) from the shared usage data.
        rows = [line for line in USAGE_LOG.read_text().splitlines() if line.startswith("sur-D\t")]
        log.write_text("user\ttime\tapp\tevent\n" + "\n".join(rows) + "\n")
        expected_stacks = ["sur-D"]
    else:
        rows = [None] * small_log(log, users=2, days=4)
        expected_stacks = ["person_200", "person_201"]
    body = r"""
mkdir -p "$out/run" "$out/state"
# stderr is a journal stream and JOURNAL_STREAM says so, as systemd sets it for a service.
systemd-cat -t smartstackd sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@"' \
    "$DAEMON" --listen "$out/run/io.smartstack" --state "$out/state" & daemon=$!
i=0; until [ -S "$out/run/io.smartstack" ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 4; sleep 0.01; done
"$CTL" --address "unix:$out/run/io.smartstack" --json replay "$LOG" > "$out/replay.json"
# Let the last coalesced order changes reach the journal, then stop the daemon.
sleep 1.5
kill -TERM $daemon; wait $daemon || true
"""
    run_in_namespace(workdir, body, {"DAEMON": str(DAEMON), "LOG": str(log)})
    replay = json.loads((pathlib.Path(workdir) / "replay.json").read_text())
    assert replay["rows"] == len(rows) and replay["errors"] == {}
    assert journal_entries(workdir, "orderChanged"), "smartstackd wrote no orderChanged entries to the journal"
    local = json.loads((pathlib.Path(workdir) / "analyze-local.json").read_text())
    check_counts_against_journalctl(workdir, local)
    assert [stack["stack"] for stack in local["stacks"]] == expected_stacks
    for stack in local["stacks"]:
        assert stack["decisions"] >= 1 and stack["changes"] >= stack["decisions"]
        assert abs(sum(share["share"] for share in stack["timeOnTop"]) - 1) < 1e-6
    machine, _ = journal_directory(workdir)
    copied = ctl_json("analyze", "--directory", str(machine))
    assert copied["stacks"] == local["stacks"]
    check_html(workdir, widgets_by_stack(workdir))


def log_spans(path):
    """Each person's first and last time in a usage log, in µs since the epoch."""
    spans = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or line.startswith("user\t") or not line.strip():
            continue
        user, moment = line.split("\t")[:2]
        micros = int(datetime.datetime.fromisoformat(moment).timestamp() * 1_000_000)
        first, last = spans.get(user, (micros, micros))
        spans[user] = (min(first, micros), max(last, micros))
    return spans


def identifier(text):
    """ReplayPlan.identifier: bytes outside [A-Za-z0-9.-] as _HH."""
    return "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in ".-") else "_%02X" % b
                   for b in text.encode())


@needs_journald
@pytest.mark.skipif(not USAGE_LOG.exists(), reason="needs the shared usage log desktop.tsv")
def test_a_replay_is_reported_on_the_logs_own_time(workdir):
    """Issue 12: desktop.tsv through the daemon into a real journald, each person replayed into a fresh daemon
    (as smartstack-eval scores each person with an engine of their own) and stopped at once: analyze reports each
    person over the log's own span (decision entries carry the engine time they were decided for), and each
    widget's share of time on top agrees within 1 percentage point with the engine's own decisions
    (smartstack-eval --top-shares)."""
    spans = log_spans(USAGE_LOG)
    header = "user\ttime\tapp\tevent\n"
    lines = USAGE_LOG.read_text().splitlines()
    for person in spans:
        rows = [line for line in lines if line.startswith(person + "\t")]
        (pathlib.Path(workdir) / f"{person}.tsv").write_text(header + "\n".join(rows) + "\n")
    body = r"""
for person in $PEOPLE; do
mkdir -p "$out/$person/run" "$out/$person/state"
systemd-cat -t smartstackd sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@"' \
    "$DAEMON" --listen "$out/$person/run/io.smartstack" --state "$out/$person/state" & daemon=$!
i=0; until [ -S "$out/$person/run/io.smartstack" ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 4; sleep 0.01; done
"$CTL" --address "unix:$out/$person/run/io.smartstack" --json replay "$out/$person.tsv" > "$out/$person/replay.json"
kill -TERM $daemon; wait $daemon || true
done
"""
    run_in_namespace(workdir, body, {"DAEMON": str(DAEMON), "PEOPLE": " ".join(spans)}, timeout=900)
    local = json.loads((pathlib.Path(workdir) / "analyze-local.json").read_text())
    orders = journal_entries(workdir, "orderChanged")
    assert orders and all("SMARTSTACK_ENGINE_TIME" in entry for entry in orders)
    reported = {stack["stack"]: stack for stack in local["stacks"]}
    assert set(reported) == set(spans), (set(reported), set(spans))
    engine = json.loads(subprocess.run(
        [str(BUILD / "smartstack-eval"), "--top-shares", str(USAGE_LOG)], capture_output=True, text=True,
        check=True, timeout=600).stdout)
    for person, (first, last) in spans.items():
        days = (last - first) / 86_400e6
        assert 41 <= days <= 57, (person, days)
        stack = reported[person]
        times = [int(datetime.datetime.fromisoformat(entry["SMARTSTACK_ENGINE_TIME"]).timestamp() * 1e6)
                 for entry in orders if entry["SMARTSTACK_STACK"] == person]
        # Every decision is dated within the person's log (not at the replay's wall clock), over its span.
        assert first <= min(times) and max(times) <= last + 1_000_000, person
        assert (max(times) - min(times)) / 86_400e6 > days - 2, (person, days)
        shares = {share["widget"]: share["share"] for share in stack["timeOnTop"]}
        expected = {identifier(person) + "." + identifier(app): share for app, share in engine[person].items()}
        for widget in set(shares) | set(expected):
            assert abs(shares.get(widget, 0) - expected.get(widget, 0)) <= 0.01, (person, widget, shares, expected)
    # Kept for a person to look at (SMARTSTACK_REPORT_DIR): the HTML report, the JSON and the text.
    keep = os.environ.get("SMARTSTACK_REPORT_DIR")
    if keep:
        for name in ("report.html", "analyze-local.json", "analyze-local.txt"):
            shutil.copy(pathlib.Path(workdir) / name, pathlib.Path(keep) / name)
