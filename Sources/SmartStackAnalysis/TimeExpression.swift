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

    /// Parses `text`; `now` is µs since the epoch and `utcOffsetSeconds` the local clock's offset.
    public static func parse(_ text: String, now: Int64, utcOffsetSeconds: Int32) throws(ParseError) -> Int64 {
        let trimmed = text.trimmingSpaces
        if let timestamp = try? Timestamp(rfc3339: trimmed) { return timestamp.microseconds }
        let lower = trimmed.lowercased()
        let offset = Int64(utcOffsetSeconds) * 1_000_000
        let day: Int64 = 86_400_000_000
        // Midnight on the local clock of the day `now` falls on.
        let localNow = now + offset
        let midnight = (localNow >= 0 ? localNow / day : (localNow - day + 1) / day) * day - offset
        switch lower {
        case "now": return now
        case "today": return midnight
        case "yesterday": return midnight - day
        case "tomorrow": return midnight + day
        default: break
        }
        if let relative = relative(lower) { return now + relative }
        if let local = localDate(trimmed) { return local - offset }
        throw ParseError(text: text)
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
            total += Int64(value * Double(size))
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

    /// `YYYY-MM-DD[ HH:MM[:SS]]` as µs since the epoch on a UTC clock (the caller subtracts the offset).
    static func localDate(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").map { Int64($0) }
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2], (1...12).contains(month),
            (1...31).contains(day)
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
