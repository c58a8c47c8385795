public import SmartStackCore

extension Timestamp {
    /// The RFC 3339 text with the timestamp's own offset, or `null` when the local date is outside the years
    /// 0000–9999 RFC 3339 can write (a budget that never frees up is "the far future").
    public var wireValue: JSONValue {
        let local = microseconds / 1_000_000 + Int64(utcOffsetSeconds)
        guard local >= Self.earliestWireSecond, local <= Self.latestWireSecond else { return .null }
        return .string(rfc3339)
    }

    /// 0000-01-01T00:00:00 and 9999-12-31T23:59:59, in seconds since the epoch.
    private static let earliestWireSecond: Int64 = -62_167_219_200
    private static let latestWireSecond: Int64 = 253_402_300_799
}

extension Optional where Wrapped == Timestamp {
    /// The timestamp's wire value, or `null`.
    var wireValue: JSONValue { self?.wireValue ?? .null }
}
