public import SmartStackCore

extension Timestamp {
    /// The RFC 3339 text with the timestamp's own offset (as `rfc3339`: milliseconds, or microseconds when it has any, `Z` for UTC), or `null`
    /// when the local date is outside the years 0000–9999 RFC 3339 can write (a budget that never frees up is
    /// "the far future").
    public var wireValue: JSONValue {
        withWireText { text in text.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null }
    }

    /// Writes the wire value (a JSON string or `null`) without building a `String`.
    func writeWire(to output: inout RawOutput) {
        withWireText { text in
            guard let text else {
                output.literal("null")
                return
            }
            output.byte(Byte.quote)
            output.bytes(text)
            output.byte(Byte.quote)
        }
    }

    /// The most bytes `writeWire` writes.
    static let wireBound = 34

    /// Calls `body` with the RFC 3339 bytes (`YYYY-MM-DDTHH:MM:SS.mmm[uuu]` and `Z` or `±HH:MM`), or `nil` when out of
    /// range. The same text as Core's `rfc3339`, formatted on the stack: this runs for every date of every reply.
    func withWireText<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        let local = Self.floorDivide(microseconds, 1_000_000) + Int64(utcOffsetSeconds)
        guard local >= Self.earliestWireSecond, local <= Self.latestWireSecond else { return body(nil) }
        let days = Self.floorDivide(local, 86_400)
        let secondOfDay = local - days * 86_400
        let (year, month, day) = Self.civil(fromDays: days)
        let fraction = microseconds - Self.floorDivide(microseconds, 1_000_000) * 1_000_000
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var index = 0
            func digits(_ value: Int64, _ width: Int) {
                var value = value
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    buffer[index + offset] = Byte.zero + UInt8(value % 10)
                    value /= 10
                }
                index += width
            }
            func put(_ character: Unicode.Scalar) {
                buffer[index] = UInt8(ascii: character)
                index += 1
            }
            digits(year, 4); put("-"); digits(month, 2); put("-"); digits(day, 2); put("T")
            digits(secondOfDay / 3_600, 2); put(":"); digits(secondOfDay % 3_600 / 60, 2); put(":")
            digits(secondOfDay % 60, 2); put(".")
            if fraction % 1_000 == 0 { digits(fraction / 1_000, 3) } else { digits(fraction, 6) }
            if utcOffsetSeconds == 0 {
                put("Z")
            } else {
                let magnitude = Int64(utcOffsetSeconds.magnitude)
                put(utcOffsetSeconds < 0 ? "-" : "+")
                digits(magnitude / 3_600 % 100, 2); put(":"); digits(magnitude % 3_600 / 60, 2)
            }
            return body(UnsafeBufferPointer(rebasing: buffer[..<index]))
        }
    }

    /// 0000-01-01T00:00:00 and 9999-12-31T23:59:59, in seconds since the epoch.
    private static let earliestWireSecond: Int64 = -62_167_219_200
    private static let latestWireSecond: Int64 = 253_402_300_799

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    /// Year, month and day of a day count since 1970-01-01 (Core's proleptic Gregorian conversion).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) { Timestamp.civilDate(fromDays: days) }
}

extension Optional where Wrapped == Timestamp {
    /// The timestamp's wire value, or `null`.
    var wireValue: JSONValue { self?.wireValue ?? .null }
}
