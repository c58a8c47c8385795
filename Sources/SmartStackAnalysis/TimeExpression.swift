import SmartStackCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The times `--since` and `--until` take, as `journalctl` takes them: RFC 3339 (`2025-11-21T08:00:00Z`),
/// `YYYY-MM-DD[ HH:MM[:SS]]` on the local clock, `now`, `today`, `yesterday`, `tomorrow`, and relative times
/// (`-1h`, `+30min`, `2d ago`) with the units `us ms s sec min m h hour d day w week` (plural too).
public enum TimeExpression {
    /// Why a time did not parse.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var text: String
        public var description: String {
            "'\(text)' is not a time: use \(TimeExpression.forms)"
        }
    }

    /// The forms a time takes, for help texts and errors.
    public static let forms =
        "RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, yesterday, tomorrow, -1h, +30min or '2d ago'"

    /// The earliest and latest times a command line may name: the years 0001 to 9999, as RFC 3339 writes them.
    static let earliest: Int64 = -62_135_596_800_000_000
    static let latest: Int64 = 253_402_300_799_999_999

    /// Parses `text`; `now` is µs since the epoch and `utcOffsetSeconds` the local clock's offset now.
    ///
    /// `offsetAt` gives the local clock's offset at a time (seconds since the epoch; `localOffset(atSeconds:)` for
    /// the system's zone): a local date or time (`2025-07-01 09:00`, `today`) is read with the offset in force
    /// *then*, which differs from today's across a daylight-saving change. Without it every local time is read
    /// with `utcOffsetSeconds`. A time outside the years 0001–9999 is an error, as is a relative time that large.
    public static func parse(
        _ text: String, now: Int64, utcOffsetSeconds: Int32, offsetAt: ((Int64) -> Int32)? = nil
    ) throws(ParseError) -> Int64 {
        let trimmed = text.trimmingSpaces
        if let timestamp = try? Timestamp(rfc3339: trimmed) { return try bounded(timestamp.microseconds, text) }
        let lower = trimmed.lowercased()
        let offset = Int64(utcOffsetSeconds) * 1_000_000
        let day: Int64 = 86_400_000_000
        /// A time on the local clock (µs on a UTC clock) as µs since the epoch, with the offset in force then.
        func fromLocal(_ local: Int64) -> Int64 {
            guard let offsetAt else { return local - offset }
            let guess = local - offset
            return local - Int64(offsetAt(guess / 1_000_000)) * 1_000_000
        }
        // Midnight on the local clock of the day `now` falls on.
        let localNow = now + offset
        let localMidnight = (localNow >= 0 ? localNow / day : (localNow - day + 1) / day) * day
        switch lower {
        case "now": return try bounded(now, text)
        case "today": return try bounded(fromLocal(localMidnight), text)
        case "yesterday": return try bounded(fromLocal(localMidnight - day), text)
        case "tomorrow": return try bounded(fromLocal(localMidnight + day), text)
        default: break
        }
        if let relative = relative(lower) {
            let (sum, overflow) = now.addingReportingOverflow(relative)
            guard !overflow else { throw ParseError(text: text) }
            return try bounded(sum, text)
        }
        if let local = localDate(trimmed) { return try bounded(fromLocal(local), text) }
        throw ParseError(text: text)
    }

    /// `microseconds` when it is within the years 0001–9999.
    private static func bounded(_ microseconds: Int64, _ text: String) throws(ParseError) -> Int64 {
        guard (earliest...latest).contains(microseconds) else { throw ParseError(text: text) }
        return microseconds
    }

    /// The local clock's offset from UTC at `seconds` since the epoch (`localtime_r`'s `tm_gmtoff`).
    public static func localOffset(atSeconds seconds: Int64) -> Int32 {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Int32(parts.tm_gmtoff)
    }

    /// `-1h`, `+30min`, `2d ago`, `1h 30min ago` in µs.
    static func relative(_ text: String) -> Int64? {
        var body = text
        var sign: Int64 = 1
        if body.hasSuffix(" ago") {
            body = String(body.dropLast(4))
            sign = -1
        } else if body.hasPrefix("-") {
            body = String(body.dropFirst())
            sign = -1
        } else if body.hasPrefix("+") {
            body = String(body.dropFirst())
        } else {
            return nil
        }
        var total: Int64 = 0
        var number = ""
        var unit = ""
        func flush() -> Bool {
            guard !number.isEmpty, let value = Double(number), let size = unitSize(unit.isEmpty ? "s" : unit) else {
                return number.isEmpty && unit.isEmpty
            }
            // Beyond ±10^18 µs (31,000 years) no time is meant; the sum is checked too.
            let part = value * Double(size)
            guard part.isFinite, abs(part) < 1e18 else { return false }
            let (sum, overflow) = total.addingReportingOverflow(Int64(part))
            guard !overflow else { return false }
            total = sum
            number = ""
            unit = ""
            return true
        }
        for character in body {
            if character.isNumber || character == "." {
                if !unit.isEmpty { guard flush() else { return nil } }
                number.append(character)
            } else if character.isLetter {
                unit.append(character)
            } else if character == " " {
                continue
            } else {
                return nil
            }
        }
        guard !number.isEmpty, flush() else { return nil }
        return sign * total
    }

    static func unitSize(_ unit: String) -> Int64? {
        switch unit {
        case "us", "usec": 1
        case "ms", "msec": 1_000
        case "s", "sec", "second", "seconds": 1_000_000
        case "m", "min", "minute", "minutes": 60_000_000
        case "h", "hour", "hours": 3_600_000_000
        case "d", "day", "days": 86_400_000_000
        case "w", "week", "weeks": 604_800_000_000
        default: nil
        }
    }

    /// The days of `month` (1–12) in `year` of the proleptic Gregorian calendar.
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `YYYY-MM-DD[ HH:MM[:SS]]` as µs since the epoch on a UTC clock (the caller subtracts the offset).
    static func localDate(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        // Empty pieces kept: `-2025-01-01` is not a date.
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int64($0) }
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2], (1...9_999).contains(year),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds: Int64 = 0
        if parts.count == 2 {
            let clock = parts[1].split(separator: ":").map { Int64($0) }
            guard clock.count == 2 || clock.count == 3, let hour = clock[0], let minute = clock[1],
                (0..<24).contains(hour), (0..<60).contains(minute)
            else { return nil }
            let second = clock.count == 3 ? clock[2] : 0
            guard let second, (0..<61).contains(second) else { return nil }
            seconds = hour * 3_600 + minute * 60 + second
        }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return (days * 86_400 + seconds) * 1_000_000
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
