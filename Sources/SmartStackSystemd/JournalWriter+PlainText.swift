#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension JournalWriter {
    /// A wall-clock instant for stderr lines: seconds and nanoseconds since the Unix epoch, UTC.
    public struct WallTime: Sendable, Hashable {
        /// Whole seconds since 1970-01-01T00:00:00Z.
        public var seconds: Int64
        /// Nanoseconds past `seconds`, `0..<1_000_000_000`.
        public var nanoseconds: Int64

        /// An instant from its parts.
        public init(seconds: Int64, nanoseconds: Int64 = 0) {
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }

        /// The current time (`CLOCK_REALTIME`).
        public static var now: WallTime {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return WallTime(seconds: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec))
        }

        /// RFC 3339 in UTC with milliseconds: `2025-11-21T08:00:00.123Z`.
        public var rfc3339: String {
            let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            let secondOfDay = seconds - days * 86_400
            let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
                + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(nanoseconds / 1_000_000, 3))Z"
        }

        /// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day count.
        private static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
            let z = daysSinceEpoch + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthPrime = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
            let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
            return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
        }

        private func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
    }

    /// The stderr form of an entry, one line ending in a newline:
    ///
    ///     2025-11-21T08:00:00.123Z smartstackd[42] info: Order changed. MESSAGE_ID=040d… SMARTSTACK_STACK=home
    ///
    /// Values are capped as in the journal; a value that is empty or holds a space, `"`, `=`, `\` or a
    /// control character is quoted, with `\\`, `\"`, `\n`, `\t` and `\xHH` escapes. Newlines in the
    /// message are escaped too, so each entry stays one line.
    public static func plainLine(
        _ entry: JournalEntry, identifier: String, processID: Int32, time: WallTime
    ) -> String {
        let fields = entry.journalFields(identifier: identifier)
        var line = "\(time.rfc3339) \(identifier)[\(processID)] \(entry.priority.name): "
        line += escaped(fields.first { $0.name == "MESSAGE" }?.value ?? entry.message, quotes: false)
        for field in fields where !["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"].contains(field.name) {
            line += " \(field.name)=\(quoted(field.value))"
        }
        return line + "\n"
    }

    private static func quoted(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains {
                $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.properties.generalCategory == .control
            }
        return needsQuotes ? "\"" + escaped(value, quotes: true) + "\"" : value
    }

    /// Escapes control characters; inside quotes also `\` and `"`.
    private static func escaped(_ value: String, quotes: Bool) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\" where quotes: result += "\\\\"
            case "\"" where quotes: result += "\\\""
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case _ where scalar.properties.generalCategory == .control:
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
