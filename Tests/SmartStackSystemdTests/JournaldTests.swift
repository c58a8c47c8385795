import Foundation
import SmartStackSystemd
import Testing

/// The journal writer against a real `systemd-journald`, read back with `journalctl`.
///
/// journald runs in private mount and pid namespaces (`unshare`), with tmpfs over `/run/systemd`,
/// `/run/log`, `/var/log/journal` and `/var/lib/systemd`: it cannot touch the machine's journal
/// (if any), and when the namespace's first process exits — or the test kills it — the kernel ends
/// journald with it. The probe writes the entries from inside the namespace, since libsystemd
/// always sends to `/run/systemd/journal/socket`.
@Suite(
    .timeLimit(.minutes(1)),
    .enabled(if: TestEnvironment.probe != nil, "needs smartstack-systemd-probe: swift build --build-tests"),
    .enabled(if: TestEnvironment.canRunJournald, "needs root, unshare, systemd-journald, journalctl and systemd-cat")
)
struct JournaldTests {
    /// Runs in the namespace: journald, the probe three ways, then journalctl into files in `$out`.
    static let script = #"""
        set -eu
        probe=$1 out=$2 journald=$3
        shift 3
        for dir in /run/systemd /run/log /var/log/journal /var/lib/systemd; do mount -t tmpfs tmpfs "$dir"; done
        mkdir -p /var/lib/systemd/catalog
        cp "$out/catalog/var/lib/systemd/catalog/database" /var/lib/systemd/catalog/database
        # journald's own messages go to its stderr, not the machine's kernel log.
        SYSTEMD_LOG_TARGET=console "$journald" 2> "$out/journald.log" & pid=$!
        trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
        i=0; until [ -S /run/systemd/journal/socket ]; do i=$((i+1)); [ $i -lt 500 ] || exit 3; sleep 0.01; done
        # 1. stderr is a journal stream, and JOURNAL_STREAM says so, as systemd sets it for a service.
        systemd-cat -t smartstack-probe sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" journal "$@"' \
            "$probe" "$@"
        # 2. forced to the journal with stderr elsewhere; 3. automatic with no journal stream: stderr.
        "$probe" journal --force -- stopping "Stopping on SIGTERM" SMARTSTACK_REASON=SIGTERM > "$out/forced.out"
        "$probe" journal -- clientRejected "Rejected by policy" SMARTSTACK_CLIENT_UID=1000 \
            > "$out/fallback.out" 2> "$out/fallback.err"
        journalctl --sync 2>/dev/null || sleep 1
        journalctl --no-pager -o json SYSLOG_IDENTIFIER=smartstackd > "$out/entries.json"
        journalctl --no-pager -o json SYSLOG_IDENTIFIER=smartstack-probe > "$out/stream.json"
        journalctl --no-pager -x -o short MESSAGE_ID=040d2f906681431293c211e0a6ef5c64 > "$out/explained.txt"
        """#

    private static let longScores = String(repeating: "weather=0.91,", count: 800)

    @Test func entriesReachJournaldWithTheirFields() throws {
        let probe = try #require(TestEnvironment.probe)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try CatalogTests.buildDatabase(under: directory.url.appendingPathComponent("catalog"))
        let scriptPath = directory.path("journald.sh")
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let entries = [
            "--", "orderChanged", "Order of home changed", "SMARTSTACK_STACK=home", "SMARTSTACK_REVISION=7",
            "SMARTSTACK_ORDER=weather,calendar", "SMARTSTACK_PREVIOUS_ORDER=calendar,weather", "SMARTSTACK_TOP=weather",
            "SMARTSTACK_COUNT=3", "SMARTSTACK_REASON=timeline relevance\nand a second line",
            "SMARTSTACK_SCORES=\(Self.longScores)",
            "--", "none", "Grüße, plain entry 🙂",
        ]
        let result = try ChildProcess.run(
            try #require(TestEnvironment.tool("unshare")),
            [
                "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private",
                "/bin/sh", scriptPath, probe, directory.url.path,
                try #require(TestEnvironment.tool("systemd-journald")),
            ]
                + entries,
            environment: TestEnvironment.cleanEnvironment(), in: directory.url, timeout: .seconds(40)
        )
        try #require(result.status == 0 && !result.timedOut, "namespace script failed: \(result.errorOutput)")

        let logged = try Self.jsonLines(directory.path("entries.json"))
        let probePIDs = Set(logged.compactMap { $0["_PID"] as? String })
        #expect(probePIDs.count == 2, "two probe runs wrote to the journal natively: \(probePIDs)")

        // 1. Automatic destination through the journal stream: every field, native transport.
        let changed = try #require(
            logged.first { $0["MESSAGE_ID"] as? String == SmartStackEvent.orderChanged.messageID.hex })
        #expect(changed["_TRANSPORT"] as? String == "journal")
        #expect(changed["MESSAGE"] as? String == "Order of home changed")
        #expect(changed["PRIORITY"] as? String == "6")
        #expect(changed["SYSLOG_IDENTIFIER"] as? String == "smartstackd")
        #expect(changed["CODE_FILE"] as? String == "smartstack_systemd_probe/main.swift")
        #expect(Int(changed["CODE_LINE"] as? String ?? "") != nil)
        #expect(changed["CODE_FUNC"] as? String == "runJournal(_:)")
        #expect(changed["SMARTSTACK_STACK"] as? String == "home")
        #expect(changed["SMARTSTACK_REVISION"] as? String == "7")
        #expect(changed["SMARTSTACK_ORDER"] as? String == "weather,calendar")
        #expect(changed["SMARTSTACK_PREVIOUS_ORDER"] as? String == "calendar,weather")
        #expect(changed["SMARTSTACK_TOP"] as? String == "weather")
        #expect(changed["SMARTSTACK_COUNT"] as? String == "3")
        #expect(changed["SMARTSTACK_REASON"] as? String == "timeline relevance\nand a second line")
        // The long value was cut to fit: journalctl shows it without --all (not null), marker at the end.
        let scores = try #require(changed["SMARTSTACK_SCORES"] as? String, "SMARTSTACK_SCORES missing or null")
        #expect(scores.hasSuffix(JournalEntry.truncationMarker))
        #expect("SMARTSTACK_SCORES=".utf8.count + scores.utf8.count == JournalEntry.maximumFieldBytes)
        #expect(Self.longScores.hasPrefix(String(scores.dropLast(JournalEntry.truncationMarker.count))))
        #expect(changed["SMARTSTACK_TRUNCATED"] as? String == "SMARTSTACK_SCORES")

        let plain = try #require(logged.first { $0["MESSAGE"] as? String == "Grüße, plain entry 🙂" })
        #expect(plain["MESSAGE_ID"] == nil)
        #expect(plain["_TRANSPORT"] as? String == "journal")

        // 2. Forced.
        let stopping = try #require(
            logged.first { $0["MESSAGE_ID"] as? String == SmartStackEvent.stopping.messageID.hex })
        #expect(stopping["SMARTSTACK_REASON"] as? String == "SIGTERM")
        #expect(try String(contentsOfFile: directory.path("forced.out"), encoding: .utf8) == "destination=journal\n")

        // 3. No journal stream: a line on stderr, nothing in the journal.
        #expect(!logged.contains { $0["MESSAGE_ID"] as? String == SmartStackEvent.clientRejected.messageID.hex })
        #expect(
            try String(contentsOfFile: directory.path("fallback.out"), encoding: .utf8) == "destination=standardError\n"
        )
        let fallback = try String(contentsOfFile: directory.path("fallback.err"), encoding: .utf8)
        #expect(fallback.contains(" smartstackd["))
        #expect(
            fallback.hasSuffix(
                "] info: Rejected by policy MESSAGE_ID=234a632a5b4149ad9bed534fc82f615e SMARTSTACK_CLIENT_UID=1000\n"))

        // The probe's stdout went to the journal stream, and it chose the journal itself.
        let stream = try Self.jsonLines(directory.path("stream.json"))
        #expect(
            stream.contains {
                $0["MESSAGE"] as? String == "destination=journal" && $0["_TRANSPORT"] as? String == "stdout"
            })

        // journalctl -x explains the entry from the installed catalog, fields substituted (each
        // explanation line has a prefix, "-- " or "░░ " depending on the systemd version).
        let explained = try String(contentsOfFile: directory.path("explained.txt"), encoding: .utf8)
        #expect(explained.contains(" Subject: Order of stack home changed\n"))
        #expect(explained.contains(" Defined-By: smartstackd\n"))
        #expect(explained.contains(" New order: weather,calendar\n"))
        #expect(explained.contains("(revision\n"))
        #expect(explained.contains(" 7). weather is now on top.\n"))
    }

    static func jsonLines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }
}
