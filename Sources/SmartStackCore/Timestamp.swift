/// A point in time with the UTC offset of the wall clock it was observed on.
///
/// The instant (`microseconds` since the Unix epoch, UTC) orders events; the offset only gives the
/// local wall clock for time-of-day and day-of-week signals. Two timestamps compare by instant alone,
/// so `2022-12-12T09:00:00-08:00` and `2022-12-12T17:00:00Z` are equal.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64
    /// Offset of the local wall clock from UTC, in seconds (east positive): RFC 3339 text gives it within
    /// ±23:59 (real zones stay within ±14 hours).
    public var utcOffsetSeconds: Int32

    public init(microseconds: Int64, utcOffsetSeconds: Int32 = 0) {
        self.microseconds = microseconds
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// Seconds since the epoch.
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    public static func == (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds == rhs.microseconds }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds < rhs.microseconds }
    public func hash(into hasher: inout Hasher) { hasher.combine(microseconds) }

    /// This instant moved by `seconds` (the offset is kept).
    public func adding(seconds: Double) -> Timestamp {
        Timestamp(
            microseconds: microseconds &+ Int64((seconds * 1_000_000).rounded()), utcOffsetSeconds: utcOffsetSeconds)
    }

    /// Seconds from `other` to `self` (positive when `self` is later).
    public func seconds(since other: Timestamp) -> Double {
        Double(microseconds &- other.microseconds) / 1_000_000
    }

    /// The same instant seen on a wall clock with another offset.
    public func withOffset(_ seconds: Int32) -> Timestamp {
        Timestamp(microseconds: microseconds, utcOffsetSeconds: seconds)
    }

    /// Seconds since the epoch on the local wall clock (the instant plus the offset).
    var localSeconds: Int64 { Self.floorDiv(microseconds, 1_000_000) + Int64(utcOffsetSeconds) }

    /// Whole local calendar days since 1970-01-01 on the local wall clock.
    public var localDay: Int64 { Self.floorDiv(localSeconds, 86_400) }

    /// Local hour of day, 0–23.
    public var localHour: Int { Int(Self.floorMod(localSeconds, 86_400) / 3_600) }

    /// Local day of the week, 0 = Monday … 6 = Sunday (ISO 8601 order).
    public var localWeekday: Int { Int(Self.floorMod(localDay + 3, 7)) }

    public var description: String { rfc3339 }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { a - floorDiv(a, b) * b }
}

/// Why a string is not an RFC 3339 timestamp.
public struct TimestampParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text that failed to parse.
    public var text: String
    /// What was wrong with it.
    public var problem: String
    public var description: String { "invalid RFC 3339 time '\(text)': \(problem)" }
}

extension Timestamp {
    /// Parses RFC 3339 (`2022-12-12T09:13:05.120-08:00`, `...Z`); a UTC offset is required.
    public init(rfc3339 text: some StringProtocol) throws(TimestampParseError) {
        var parser = RFC3339Parser(bytes: Array(text.utf8))
        guard let value = parser.parse() else {
            throw TimestampParseError(text: String(text), problem: parser.problem)
        }
        self = value
    }

    /// RFC 3339 text with milliseconds, or microseconds when it has any, and the timestamp's own offset (`Z` for
    /// UTC): the text reads back as the same instant. (With milliseconds only, a time the service stamped, in
    /// microseconds, read back earlier: a `GetStack` asked `at` its own reply's `date` missed what came within that
    /// millisecond, and a donation retried with the date `ListDonations` listed was another donation.)
    public var rfc3339: String {
        let local = localSeconds
        let days = Self.floorDiv(local, 86_400)
        let secondOfDay = Self.floorMod(local, 86_400)
        let (year, month, day) = Self.civilFromDays(days)
        let fraction = Self.floorMod(microseconds, 1_000_000)
        var out = ""
        out.reserveCapacity(29)
        func pad(_ value: Int64, _ width: Int) {
            let digits = String(value)
            out += String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        pad(year, 4); out += "-"; pad(month, 2); out += "-"; pad(day, 2); out += "T"
        pad(secondOfDay / 3_600, 2); out += ":"; pad(secondOfDay % 3_600 / 60, 2); out += ":"
        pad(secondOfDay % 60, 2); out += "."
        if fraction % 1_000 == 0 { pad(fraction / 1_000, 3) } else { pad(fraction, 6) }
        if utcOffsetSeconds == 0 {
            out += "Z"
        } else {
            let magnitude = Int64(abs(utcOffsetSeconds))
            out += utcOffsetSeconds < 0 ? "-" : "+"
            pad(magnitude / 3_600, 2); out += ":"; pad(magnitude % 3_600 / 60, 2)
        }
        return out
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Year, month and day of a day count since 1970-01-01 (proleptic Gregorian, Howard Hinnant's algorithm).
    public static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        civilFromDays(days)
    }

    static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// A byte-level RFC 3339 parser: Foundation's date formatters are far too slow for replaying logs.
private struct RFC3339Parser {
    let bytes: [UInt8]
    var index = 0
    var problem = ""

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func fail(_ message: String) -> Timestamp? {
        problem = message
        return nil
    }

    mutating func digits(_ count: Int) -> Int64? {
        guard index + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for _ in 0..<count {
            let byte = bytes[index]
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int64(byte - 48)
            index += 1
        }
        return value
    }

    mutating func expect(_ byte: UInt8, or other: UInt8? = nil) -> Bool {
        guard index < bytes.count, bytes[index] == byte || bytes[index] == other else { return false }
        index += 1
        return true
    }

    mutating func parse() -> Timestamp? {
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return fail("expected a date YYYY-MM-DD") }
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year, month) else {
            return fail("no such date")
        }
        guard expect(UInt8(ascii: "T"), or: UInt8(ascii: "t")) || expect(UInt8(ascii: " ")) else {
            return fail("expected 'T' between date and time")
        }
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return fail("expected a time HH:MM:SS") }
        guard hour < 24, minute < 60, second < 61 else { return fail("time out of range") }
        var micros: Int64 = 0
        if expect(UInt8(ascii: ".")) || expect(UInt8(ascii: ",")) {
            var scale: Int64 = 100_000
            var count = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                micros += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
                count += 1
            }
            if count == 0 { return fail("expected digits after the decimal point") }
        }
        var offset: Int64 = 0
        if expect(UInt8(ascii: "Z"), or: UInt8(ascii: "z")) {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let oh = digits(2), expect(UInt8(ascii: ":")), let om = digits(2), oh < 24, om < 60 else {
                return fail("expected a UTC offset ±HH:MM")
            }
            offset = sign * (oh * 3_600 + om * 60)
        } else {
            return fail("a UTC offset (Z or ±HH:MM) is required")
        }
        guard index == bytes.count else { return fail("unexpected text after the time") }
        let days = Timestamp.daysFromCivil(year, month, day)
        let localSeconds = days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)
        return Timestamp(microseconds: (localSeconds - offset) * 1_000_000 + micros, utcOffsetSeconds: Int32(offset))
    }

    static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
