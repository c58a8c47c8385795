import SmartStackAnalysis
import SmartStackCore
import SmartStackCtlKit
import Testing

struct FormatTests {
    @Test(arguments: [
        (0.0000125, "13µs"), (0.85, "850ms"), (4.25, "4.3s"), (42, "42s"), (252, "4min 12s"), (3_600, "1h"),
        (3_660, "1h 1min"), (90_061, "1d 1h"), (-30, "-30s"), (0, "0s"), (0.000_000_1, "0s"),
    ])
    func durations(seconds: Double, text: String) {
        #expect(Format.duration(seconds) == text)
    }

    @Test func numbers() {
        #expect(Format.number(0.78698) == "0.787")
        #expect(Format.number(-0.0001) == "0.000")
        #expect(Format.number(2, decimals: 0) == "2")
        #expect(Format.signed(1.3333) == "+1.33")
        #expect(Format.signed(-0.666) == "-0.67")
        #expect(Format.percent(0.4567) == "45.7%")
        #expect(Format.count(21_088) == "21,088")
        #expect(Format.count(999) == "999")
        #expect(Format.count(-1_000_000) == "-1,000,000")
        #expect(Format.bar(0.5, width: 4) == "██")
        #expect(Format.bar(1 / 16, width: 4) == "▎")
        #expect(Format.bar(0, width: 4) == "")
    }

    @Test func times() throws {
        let reference = try Timestamp(rfc3339: "2026-11-21T09:00:00.000+01:00")
        let later = try Timestamp(rfc3339: "2026-11-21T09:05:00.000+01:00")
        #expect(Format.time(later, reference: reference) == "09:05:00")
        #expect(Format.time(later) == "2026-11-21 09:05:00")
        #expect(Format.relative(later, from: reference) == "in 5min")
        #expect(Format.relative(reference, from: later) == "5min ago")
        #expect(Format.relative(reference, from: reference) == "now")
        let otherDay = try Timestamp(rfc3339: "2026-11-19T23:30:00.000+01:00")
        #expect(Format.time(otherDay, reference: reference) == "2026-11-19 23:30")
        // A time written on another offset is shown on the reference's clock (it was 13:05:00, on +05:00's).
        let elsewhere = try Timestamp(rfc3339: "2026-11-21T13:05:00.000+05:00")
        #expect(Format.time(elsewhere, reference: reference) == "09:05:00")
        #expect(Format.timeAndRelative(elsewhere, reference: reference) == "09:05:00 (in 5min)")
    }

    @Test func tableAlignsColumnsAndIgnoresEscapes() {
        var table = Table([.init("name"), .init("count", .right), .init("note")])
        table.append(["a", "1", "x"])
        table.append([Style(enabled: true).bold("long-name"), "1234", ""])
        let lines = table.render().split(separator: "\n").map(String.init)
        #expect(lines[0] == "NAME       COUNT  NOTE")
        #expect(lines[1] == "a              1  x")
        #expect(lines[2] == "\u{1B}[1mlong-name\u{1B}[0m   1234")
    }

    @Test func styleIsSilentWhenOff() {
        #expect(Style.plain.bold("x") == "x")
        #expect(Style(enabled: true).bad("x") == "\u{1B}[31;1mx\u{1B}[0m")
        #expect(Style.visibleWidth("\u{1B}[1mabc\u{1B}[0m") == 3)
        let terminal = Terminal(outputIsTerminal: true, errorIsTerminal: false, colourRefused: false)
        #expect(terminal.outputStyle.enabled)
        #expect(!terminal.errorStyle.enabled)
        #expect(!Terminal(outputIsTerminal: true, errorIsTerminal: true, colourRefused: true).outputStyle.enabled)
    }

    @Test func timeExpressions() throws {
        let now: Int64 = 1_763_712_000_000_000  // 2025-11-21T08:00:00Z
        let hour: Int64 = 3_600_000_000
        func parse(_ text: String, offset: Int32 = 0) throws -> Int64 {
            try TimeExpression.parse(text, now: now, utcOffsetSeconds: offset)
        }
        #expect(try parse("now") == now)
        #expect(try parse("-1h") == now - hour)
        #expect(try parse("+30min") == now + hour / 2)
        #expect(try parse("2d ago") == now - 48 * hour)
        #expect(try parse("1h 30min ago") == now - 3 * hour / 2)
        #expect(try parse("today") == now - 8 * hour)
        #expect(try parse("yesterday") == now - 32 * hour)
        #expect(try parse("today", offset: 3_600) == now - 9 * hour)
        #expect(try parse("2025-11-21T09:00:00+01:00") == now)
        #expect(try parse("2025-11-21 08:30") == now + hour / 2)
        #expect(try parse("2025-11-21 09:30:00", offset: 3_600) == now + hour / 2)
        #expect(try parse("2025-11-20") == now - 32 * hour)
        #expect(throws: TimeExpression.ParseError.self) { try parse("soon") }
        #expect(throws: TimeExpression.ParseError.self) { try parse("-1 fortnight") }
        #expect(throws: TimeExpression.ParseError.self) { try parse("2025-13-01") }
        // Days that the month does not have, signs, years out of range and sums that would overflow are errors,
        // not crashes or other dates.
        #expect(try parse("2024-02-29") == 1_709_164_800_000_000)
        for bad in [
            "2025-02-29", "2025-04-31", "1900-02-29", "-2025-01-01", "2025--01-01", "0000-01-01", "10000-01-01",
            "-99999999999w", "+99999999999999999999d", "1e300s ago", "9999-12-31 23:59 +1d",
        ] {
            #expect(throws: TimeExpression.ParseError.self, "\(bad)") { try parse(bad) }
        }
        // 400,000 weeks ahead is the year 9696; 500,000 would be 11,608.
        #expect(try parse("+400000w") == now + 400_000 * 168 * hour)
        #expect(throws: TimeExpression.ParseError.self) { try parse("+500000w") }
        #expect(try parse("9999-12-31 23:59") == 253_402_300_740_000_000)
    }

    @Test("a local date is read with the offset in force on it, not today's (daylight saving)")
    func localTimesAcrossDaylightSaving() throws {
        let now: Int64 = 1_763_712_000_000_000  // 2025-11-21T08:00:00Z, winter: +01:00
        // A zone at +02:00 from 2025-03-30T01:00Z to 2025-10-26T01:00Z, +01:00 otherwise (Europe/Berlin's 2025).
        let summer: ClosedRange<Int64> = 1_743_296_400...1_761_440_399
        let berlin: (Int64) -> Int32 = { summer.contains($0) ? 7_200 : 3_600 }
        let july = try TimeExpression.parse("2025-07-01 09:00", now: now, utcOffsetSeconds: 3_600, offsetAt: berlin)
        #expect(try july == Timestamp(rfc3339: "2025-07-01T07:00:00Z").microseconds)
        let december = try TimeExpression.parse(
            "2025-12-01 09:00", now: now, utcOffsetSeconds: 3_600, offsetAt: berlin)
        #expect(try december == Timestamp(rfc3339: "2025-12-01T08:00:00Z").microseconds)
        // Without the zone, today's offset for both (what a fixed offset means).
        #expect(
            try TimeExpression.parse("2025-07-01 09:00", now: now, utcOffsetSeconds: 3_600)
                == (try Timestamp(rfc3339: "2025-07-01T08:00:00Z").microseconds))
    }
}

/// Without `--address`: the user's socket when it exists, else the system service's when that exists.
struct DefaultSocketTests {
    static let user = "/run/user/1000/smartstack/io.smartstack"
    static let system = "/run/smartstack/io.smartstack"

    @Test(arguments: [
        ([user, system], user), ([user], user), ([system], system), ([], user),
    ])
    func choice(existing: [String], chosen: String) {
        #expect(DefaultSocket.path(userSocket: Self.user, exists: existing.contains) == chosen)
    }

    @Test func rootsSocketIsTheSystemOne() {
        #expect(DefaultSocket.path(userSocket: Self.system, exists: { _ in false }) == Self.system)
    }
}

/// A socket the user may not open: the system service's names its group; another says to name one the user may open.
struct PermissionDeniedMessageTests {
    @Test func theSystemSocketNamesItsGroup() {
        let reason = "Permission denied (errno: 13)"
        let system = CtlFailure.unreachable(address: "unix:/run/smartstack/io.smartstack", reason: reason).message()
        #expect(system.contains("usermod -aG smartstack") && !system.contains("Is the service running?"))
        let other = CtlFailure.unreachable(address: "unix:/tmp/x/io.smartstack", reason: reason).message()
        #expect(other.contains("This user may not open the socket") && !other.contains("usermod"))
        let missing = CtlFailure.unreachable(address: "unix:/tmp/x/io.smartstack", reason: "No such file").message()
        #expect(missing.contains("Is the service running?"))
    }
}

/// What an app chose (a Live Activity's id may be any bytes but NUL) reaches the analyst's terminal escaped.
struct PrintableTests {
    @Test func controlCharactersAreEscaped() {
        #expect(Format.printable("mail") == "mail")
        #expect(Format.printable("a\\b") == "a\\b")
        #expect(Format.printable("x\n\u{1b}[2J") == "x\\n\\x1b[2J")
        #expect(Format.printable("t\tr\r\u{7f}\u{9b}é") == "t\\tr\\r\\x7f\\u{9b}é")
        #expect(Format.printable("a\\b\n") == "a\\\\b\\n")
    }

    @Test func analyzeEscapesIdsInEveryTable() {
        let evil = "x\n\u{1b}[2J\u{1b}[Hmail 100.0% <- forged row\u{1b}[8m"
        let records = [
            DecisionRecord(
                time: 1_763_712_000_000_000,
                event: .orderChanged(
                    .init(
                        stack: "home\u{1b}[2J", order: [evil, "mail"], previousOrder: [], reason: "liveActivity",
                        count: 1))),
            DecisionRecord(
                time: 1_763_712_060_000_000,
                event: .orderChanged(
                    .init(
                        stack: "home\u{1b}[2J", order: ["mail"], previousOrder: [evil, "mail"], reason: "behaviour",
                        count: 1))),
        ]
        let text = AnalysisRenderer.render(Analyzer().analyze(records), source: "j\u{1b}")
        #expect(!text.unicodeScalars.contains { $0.value == 0x1b })
        #expect(text.contains("x\\n\\x1b[2J"))
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("mail 100.0%") })
    }
}
