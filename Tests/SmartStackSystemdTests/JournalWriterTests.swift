import SmartStackSystemd
import Testing

@Suite struct JournalDestinationTests {
    @Test(arguments: [
        ("2049:77", true, JournalWriter.Destination.journal),
        ("2049:78", true, .standardError),
        ("2050:77", true, .standardError),
        ("2049:77", false, .standardError),
        ("garbage", true, .standardError),
        ("2049:77:1", true, .standardError),
        ("", true, .standardError),
    ])
    func journalOnlyWhenStderrIsTheJournalStream(
        _ stream: String, _ socketExists: Bool, _ expected: JournalWriter.Destination
    ) {
        let chosen = JournalWriter.chooseDestination(
            journalStream: stream, standardError: (device: 2049, inode: 77), journalSocketExists: socketExists)
        #expect(chosen == expected)
    }

    @Test func stderrWithoutJournalStreamOrStderr() {
        #expect(
            JournalWriter.chooseDestination(journalStream: nil, standardError: (1, 2), journalSocketExists: true)
                == .standardError)
        #expect(
            JournalWriter.chooseDestination(journalStream: "1:2", standardError: nil, journalSocketExists: true)
                == .standardError)
    }
}

@Suite struct PlainLineTests {
    @Test(arguments: [
        (Int64(0), Int64(0), "1970-01-01T00:00:00.000Z"),
        (951_782_400, 999_999_999, "2000-02-29T00:00:00.999Z"),
        (1_709_164_799, 5_000_000, "2024-02-28T23:59:59.005Z"),
        (1_709_251_200, 0, "2024-03-01T00:00:00.000Z"),
        (4_102_444_799, 0, "2099-12-31T23:59:59.000Z"),
        (-1, 0, "1969-12-31T23:59:59.000Z"),
    ])
    func rfc3339(_ seconds: Int64, _ nanoseconds: Int64, _ expected: String) {
        #expect(JournalWriter.WallTime(seconds: seconds, nanoseconds: nanoseconds).rfc3339 == expected)
    }

    @Test func lineFormat() {
        var entry = JournalEntry(
            .orderChanged, "Order of \"home\" changed\nsecond line",
            fields: [.stack: "home", .reason: "timeline relevance 0.9", .order: ""])
        entry.append(.scores, "a=1\tb=\\2\u{7}")
        let line = JournalWriter.plainLine(
            entry, identifier: "smartstackd", processID: 42,
            time: .init(seconds: 1_709_251_200, nanoseconds: 123_000_000))
        #expect(
            line == "2024-03-01T00:00:00.123Z smartstackd[42] info: Order of \"home\" changed\\nsecond line"
                + " MESSAGE_ID=040d2f906681431293c211e0a6ef5c64 SMARTSTACK_STACK=home"
                + " SMARTSTACK_REASON=\"timeline relevance 0.9\" SMARTSTACK_ORDER=\"\""
                + " SMARTSTACK_SCORES=\"a=1\\tb=\\\\2\\x07\"\n")
    }

    @Test func linesAreCappedLikeJournalValues() {
        let entry = JournalEntry("x", priority: .warning, fields: [.reason: String(repeating: "r", count: 9000)])
        let line = JournalWriter.plainLine(entry, identifier: "smartstackd", processID: 1, time: .init(seconds: 0))
        #expect(line.contains(" warning: x "))
        #expect(line.contains(JournalEntry.truncationMarker))
        #expect(line.hasSuffix(" SMARTSTACK_TRUNCATED=SMARTSTACK_REASON\n"))
        #expect(line.utf8.count < 4096 + 200)
    }
}
