import SmartStackCore
import SmartStackEval
import Testing

@Suite struct UsageLogTests {
    static let header = "user\ttime\tapp\tevent"

    /// The log text of `rows`, each a TAB-joined row, after the header.
    static func log(_ rows: [String], preamble: [String] = []) -> String {
        (preamble + [header] + rows).joined(separator: "\n") + "\n"
    }

    /// The line and problem of the error parsing `text` throws; fails the test when it parses.
    static func error(parsing text: String, sourceLocation: SourceLocation = #_sourceLocation) -> UsageLogError? {
        do {
            _ = try UsageLog.parse(text, file: "bad.tsv")
            Issue.record("expected a parse error", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesUsersInOrderOfFirstAppearance() throws {
        let text = Self.log([
            "ann\t2024-03-04T09:00:00.250-08:00\tfirefox\topen",
            "bo\t2024-03-04T20:00:00+05:30\t-\thome",
            "ann\t2024-03-04T09:00:00.250-08:00\t-\thome",
            "bo\t2024-03-04T20:01:00+05:30\tmail app\topen",
        ])
        let log = try UsageLog.parse(text, file: "ok.tsv")
        #expect(log.users.map(\.name) == ["ann", "bo"])
        #expect(log.eventCount == 4)
        let ann = log.users[0].events
        #expect(ann.map(\.kind) == [.open(app: "firefox"), .home])
        #expect(ann[0].time == Timestamp(microseconds: 1_709_571_600_250_000))
        #expect(ann[0].time.utcOffsetSeconds == -8 * 3_600)
        #expect(ann[0].time.localHour == 9)
        #expect(log.users[1].events.map(\.kind) == [.home, .open(app: "mail app")])
        #expect(log.users[1].events[1].time.utcOffsetSeconds == 5 * 3_600 + 30 * 60)
    }

    @Test func parsesBytesLikeText() throws {
        let text = Self.log(["ann\t2024-03-04T09:00:00Z\tA\topen"])
        let fromBytes = try UsageLog.parse(Array(text.utf8), file: "ok.tsv")
        let fromText = try UsageLog.parse(text, file: "ok.tsv")
        // A collection without contiguous storage is copied first.
        let fromLazy = try UsageLog.parse(text.utf8.lazy.map { $0 }, file: "ok.tsv")
        for log in [fromBytes, fromLazy] {
            #expect(log.users.map(\.name) == fromText.users.map(\.name))
            #expect(log.users[0].events == fromText.users[0].events)
        }
    }

    @Test func skipsCommentsAndEmptyLines() throws {
        let text =
            "# smartstack-usage/1\n\n# another comment\n" + Self.header + "\n\n"
            + "ann\t2024-03-04T09:00:00-08:00\tA\topen\n# between\n\nann\t2024-03-04T09:01:00-08:00\t-\thome"
        let log = try UsageLog.parse(text, file: "ok.tsv")
        #expect(log.users.count == 1)
        #expect(log.users[0].events.map(\.kind) == [.open(app: "A"), .home])
    }

    @Test func acceptsCRLFAndEqualTimes() throws {
        let text = Self.header + "\r\nann\t2024-03-04T09:00:00Z\t-\thome\r\nann\t2024-03-04T09:00:00Z\tA\topen\r\n"
        let log = try UsageLog.parse(text, file: "ok.tsv")
        #expect(log.users[0].events.map(\.kind) == [.home, .open(app: "A")])
    }

    @Test func emptyLogIsAnError() {
        let error = Self.error(parsing: "# only a comment\n")
        #expect(error?.line == 1)
    }

    @Test func rejectsAWrongHeader() {
        let error = Self.error(parsing: "# comment\n\nuser\ttime\tevent\tapp\nann\t2024-03-04T09:00:00Z\tA\topen\n")
        #expect(error?.line == 3)
        #expect(error?.problem.contains("header") == true)
        #expect(error?.description.hasPrefix("bad.tsv:3: ") == true)
    }

    @Test func rejectsAMissingHeader() {
        let error = Self.error(parsing: "ann\t2024-03-04T09:00:00Z\tA\topen\n")
        #expect(error?.line == 1)
    }

    @Test(arguments: [
        ("ann\t2024-03-04T09:00:00Z\tA", 3),
        ("ann\t2024-03-04T09:00:00Z\tA\topen\textra", 5),
        ("ann 2024-03-04T09:00:00Z A open", 1),
    ])
    func rejectsAWrongFieldCount(row: String, fields: Int) {
        let text = Self.log(["ann\t2024-03-04T08:00:00Z\tA\topen", row])
        let error = Self.error(parsing: text)
        #expect(error?.line == 3)
        #expect(error?.problem.contains("found \(fields)") == true)
    }

    @Test(arguments: [
        "2024-03-04T09:00:00",  // no offset
        "2024-03-04 09:00",
        "2024-02-30T09:00:00Z",
        "yesterday",
        "",
    ])
    func rejectsABadTime(time: String) {
        let text = Self.log(["# c", "ann\t\(time)\tA\topen"], preamble: ["# preamble"])
        let error = Self.error(parsing: text)
        #expect(error?.line == 4)
        #expect(error?.problem.contains("time") == true)
    }

    @Test(arguments: [
        ("ann\t2024-03-04T09:00:00Z\tA\tclose", "unknown event"),
        ("ann\t2024-03-04T09:00:00Z\tA\tOPEN", "unknown event"),
        ("ann\t2024-03-04T09:00:00Z\tA\thome", "home row"),
        ("ann\t2024-03-04T09:00:00Z\t\thome", "home row"),
        ("ann\t2024-03-04T09:00:00Z\t-\topen", "open row"),
        ("ann\t2024-03-04T09:00:00Z\t\topen", "open row"),
        ("\t2024-03-04T09:00:00Z\tA\topen", "empty user"),
    ])
    func rejectsABadRow(row: String, problem: String) {
        let error = Self.error(parsing: Self.log([row]))
        #expect(error?.line == 2)
        #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
    }

    @Test func rejectsRowsOutOfTimeOrderWithinAUser() {
        let text = Self.log(
            [
                "ann\t2024-03-04T09:00:00-08:00\tA\topen",
                "bo\t2024-03-04T08:00:00-08:00\tA\topen",  // another user may be earlier
                "",
                "ann\t2024-03-04T09:00:00-08:00\t-\thome",  // equal times are in order
                "# comment",
                // 16:59:59 UTC is a second before ann's previous row, 09:00-08:00 = 17:00 UTC.
                "ann\t2024-03-04T16:59:59Z\tB\topen",
            ], preamble: ["# smartstack-usage/1"])
        let error = Self.error(parsing: text)
        #expect(error?.line == 8)
        #expect(error?.problem.contains("line 6") == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("bad.tsv:8: ") == true)
    }

    @Test func comparesTimesByInstantNotByText() throws {
        // 10:00+02:00 is 08:00 UTC, after 07:30 UTC although its text is "later" either way; 09:00+02:00 is
        // 07:00 UTC and so earlier than the first row, although its wall clock reads later.
        let ordered = Self.log(["ann\t2024-03-04T07:30:00Z\tA\topen", "ann\t2024-03-04T10:00:00+02:00\tA\topen"])
        #expect(try UsageLog.parse(ordered, file: "ok.tsv").eventCount == 2)
        let unordered = Self.log(["ann\t2024-03-04T07:30:00Z\tA\topen", "ann\t2024-03-04T09:00:00+02:00\tA\topen"])
        #expect(Self.error(parsing: unordered)?.line == 3)
    }
}
