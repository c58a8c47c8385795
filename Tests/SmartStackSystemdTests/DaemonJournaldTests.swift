import Foundation
import SmartStackSystemd
import Testing

/// The real smartstackd writing to a real `systemd-journald`, read back with `journalctl`.
///
/// As in `JournaldTests`, journald runs in private mount and pid namespaces with tmpfs over its
/// directories. smartstackd runs inside with stderr on a journal stream (`systemd-cat`, and
/// `JOURNAL_STREAM` naming it, as systemd sets it for a service), so it picks the journal by itself; the
/// test drives it from outside through its socket in the test's directory, then lets the script stop it
/// and query the journal.
@Suite(
    .timeLimit(.minutes(1)),
    .enabled(if: TestEnvironment.daemon != nil, "needs smartstackd: swift build --build-tests"),
    .enabled(if: TestEnvironment.canRunJournald, "needs root, unshare, systemd-journald, journalctl and systemd-cat")
)
struct DaemonJournaldTests {
    static let script = #"""
        set -eu
        daemon=$1 out=$2 journald=$3
        for dir in /run/systemd /run/log /var/log/journal /var/lib/systemd; do mount -t tmpfs tmpfs "$dir"; done
        SYSTEMD_LOG_TARGET=console "$journald" 2> "$out/journald.log" & pid=$!
        trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
        i=0; until [ -S /run/systemd/journal/socket ]; do i=$((i+1)); [ $i -lt 500 ] || exit 3; sleep 0.01; done
        systemd-cat -t smartstackd-stream sh -c \
            'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" --listen "$1" --state "$2" --config "$3"' \
            "$daemon" "$out/io.smartstack" "$out/state" "$out/smartstackd.conf" & daemon_pid=$!
        i=0; until [ -e "$out/done" ]; do i=$((i+1)); [ $i -lt 4000 ] || exit 4; sleep 0.01; done
        kill -TERM $daemon_pid
        wait $daemon_pid; echo $? > "$out/daemon.status"
        journalctl --sync 2>/dev/null || sleep 1
        journalctl --no-pager -o json SYSLOG_IDENTIFIER=smartstackd > "$out/entries.json"
        journalctl --no-pager -o json MESSAGE_ID=040d2f906681431293c211e0a6ef5c64 > "$out/order.json"
        """#

    @Test func decisionsAndLifecycleReachTheJournalCoalesced() throws {
        let daemon = try #require(TestEnvironment.daemon)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.script.write(toFile: directory.path("run.sh"), atomically: true, encoding: .utf8)
        try "summaryInterval = 1\n".write(toFile: directory.path("smartstackd.conf"), atomically: true, encoding: .utf8)
        let namespace = try ChildProcess(
            try #require(TestEnvironment.tool("unshare")),
            [
                "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private",
                "/bin/sh", directory.path("run.sh"), daemon, directory.url.path,
                try #require(TestEnvironment.tool("systemd-journald")),
            ],
            environment: TestEnvironment.cleanEnvironment(), in: directory.url)
        var finished = false
        defer { if !finished { _ = namespace.wait(timeout: .zero) } }

        // Drive the daemon: a stack, then a burst of order changes well inside one second.
        let socket = directory.path("io.smartstack")
        try #require(waitForFile(socket, timeout: .seconds(20)), "smartstackd did not listen")
        let connection = try RawVarlinkConnection(path: socket)
        try connection.setUpStack(apps: ["mail", "news", "maps"])
        let burst = 30
        for index in 0..<burst {
            try connection.configure(
                order: index.isMultiple(of: 2) ? ["news", "mail", "maps"] : ["mail", "news", "maps"])
        }
        // Let the coalesced entry (one window later) and a periodic summary (every second) be written.
        usleep(2_500_000)
        try "".write(toFile: directory.path("done"), atomically: true, encoding: .utf8)
        let result = namespace.wait(timeout: .seconds(30))
        finished = true
        try #require(result.status == 0 && !result.timedOut, "namespace script failed: \(result.errorOutput)")
        #expect(try String(contentsOfFile: directory.path("daemon.status"), encoding: .utf8) == "0\n")

        // journalctl MESSAGE_ID=… finds the order changes with their fields, written natively.
        let changes = try JournaldTests.jsonLines(directory.path("order.json"))
        let first = try #require(changes.first)
        #expect(first["_TRANSPORT"] as? String == "journal")
        #expect(first["SYSLOG_IDENTIFIER"] as? String == "smartstackd")
        #expect(first["PRIORITY"] as? String == "6")
        #expect((first["CODE_FILE"] as? String)?.hasPrefix("SmartStackServer/") == true)
        #expect(first["SMARTSTACK_STACK"] as? String == "home")
        #expect(first["SMARTSTACK_ORDER"] as? String == "mail,news,maps")
        #expect(first["SMARTSTACK_PREVIOUS_ORDER"] as? String == "")
        #expect(first["SMARTSTACK_TOP"] as? String == "mail")
        #expect(first["SMARTSTACK_REASON"] as? String == "userOrder")
        #expect(first["SMARTSTACK_COUNT"] as? String == "1")
        #expect((first["SMARTSTACK_SCORES"] as? String)?.hasPrefix("mail=") == true)
        #expect(first["SMARTSTACK_REVISION"] != nil)

        // The burst was coalesced: every change counted once, entries at least a second apart.
        let counts = changes.compactMap { ($0["SMARTSTACK_COUNT"] as? String).flatMap(Int.init) }
        #expect(counts.reduce(0, +) == burst + 1, "\(counts)")
        #expect(changes.count < burst / 2, "\(changes.count) entries for \(burst + 1) changes")
        #expect(counts.contains { $0 > 1 })
        let times = changes.compactMap { ($0["__REALTIME_TIMESTAMP"] as? String).flatMap(Int.init) }
        for (earlier, later) in zip(times, times.dropFirst()) { #expect(later - earlier >= 900_000) }
        let last = try #require(changes.last)
        #expect(last["SMARTSTACK_ORDER"] as? String == "mail,news,maps")
        #expect(last["SMARTSTACK_PREVIOUS_ORDER"] as? String != nil)

        // Lifecycle entries, the summary, and swift-log messages as entries too.
        let entries = try JournaldTests.jsonLines(directory.path("entries.json"))
        func of(_ event: SmartStackEvent) -> [[String: Any]] {
            entries.filter { $0["MESSAGE_ID"] as? String == event.messageID.hex }
        }
        #expect(of(.started).count == 1)
        #expect(of(.stateLoaded).first?["SMARTSTACK_STACKS"] as? String == "0")
        #expect(of(.stopping).count == 1)
        let summary = try #require(of(.periodicSummary).first, "no periodic summary")
        #expect(summary["SMARTSTACK_JOURNAL_DROPPED"] as? String == "0")
        #expect(summary["SMARTSTACK_STACKS"] as? String == "1")
        #expect(summary["SMARTSTACK_DECISIONS"] != nil && summary["SMARTSTACK_DONATIONS"] != nil)
        let listening = try #require(entries.first { $0["MESSAGE"] as? String == "listening" })
        #expect(listening["SMARTSTACK_ADDRESS"] as? String == "unix:\(socket)")
        #expect(listening["CODE_FUNC"] != nil && listening["CODE_LINE"] != nil)
    }
}
