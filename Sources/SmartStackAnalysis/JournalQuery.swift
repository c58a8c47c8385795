public import SmartStackSystemd
public import SystemPackage

/// Which journal entries `analyze` reads: the journal files, whose entries (smartstackd's identifier, a
/// system unit or a user unit), and the time range.
public struct JournalQuery: Sendable {
    /// Whose entries.
    public enum Scope: Sendable, Hashable {
        /// Entries with this `SYSLOG_IDENTIFIER` (smartstackd's own: `smartstackd`).
        case identifier(String)
        /// Entries of a system unit (`_SYSTEMD_UNIT`).
        case unit(String)
        /// Entries of a user unit (`_SYSTEMD_USER_UNIT`).
        case userUnit(String)
    }

    public var source: JournalReader.Source
    public var scope: Scope
    /// Read entries at or after this time (µs since the epoch).
    public var since: Int64?
    /// Read entries at or before this time (µs since the epoch).
    public var until: Int64?

    public init(
        source: JournalReader.Source = .local(), scope: Scope = .identifier("smartstackd"), since: Int64? = nil,
        until: Int64? = nil
    ) {
        self.source = source
        self.scope = scope
        self.since = since
        self.until = until
    }

    /// A unit name as `journalctl -u` takes it: `.service` added when it has no type suffix.
    public static func unitName(_ name: String) -> String {
        let types = [
            ".service", ".socket", ".target", ".timer", ".mount", ".scope", ".slice", ".path", ".swap", ".device",
            ".automount",
        ]
        return types.contains { name.hasSuffix($0) } ? name : name + ".service"
    }

    /// The matches, as `journalctl` would take them: `(MESSAGE_ID=… or SMARTSTACK_ENGAGEMENT=…) and scope`.
    public var matches: [[(field: String, value: String)]] {
        let events = DecisionRecord.events.map { (field: "MESSAGE_ID", value: $0.messageID.hex) }
        let engagement = DecisionRecord.engagementKinds.map { (field: DecisionRecord.Field.engagement, value: $0) }
        let scopeMatch: (field: String, value: String)
        switch scope {
        case .identifier(let identifier): scopeMatch = ("SYSLOG_IDENTIFIER", identifier)
        case .unit(let unit): scopeMatch = ("_SYSTEMD_UNIT", Self.unitName(unit))
        case .userUnit(let unit): scopeMatch = ("_SYSTEMD_USER_UNIT", Self.unitName(unit))
        }
        return [events, engagement, [scopeMatch]]
    }

    /// What was read: the decision records, and how many matching entries could not be read as one.
    public struct Result: Sendable {
        public var records: [DecisionRecord]
        public var unreadable: Int
    }

    /// Reads the matching entries in time order.
    public func read() throws(Errno) -> Result {
        var reader = try JournalReader(source)
        let groups = matches
        // (event IDs) OR (engagement kinds), AND the scope.
        for match in groups[0] { try reader.addMatch(match.field, match.value) }
        try reader.addDisjunction()
        for match in groups[1] { try reader.addMatch(match.field, match.value) }
        try reader.addConjunction()
        for match in groups[2] { try reader.addMatch(match.field, match.value) }
        // The range is over each entry's engine time (`SMARTSTACK_ENGINE_TIME`, which a replay sets to the log's
        // times, long before the journal received them), so every matching entry is read and filtered by it.
        try reader.seek(realtimeMicroseconds: nil)
        var records: [DecisionRecord] = []
        var unreadable = 0
        while let entry = try reader.next() {
            guard let record = DecisionRecord(entry) else {
                unreadable += 1
                continue
            }
            if let since, record.time < since { continue }
            if let until, record.time > until { continue }
            records.append(record)
        }
        records.sort { $0.time < $1.time }
        return Result(records: records, unreadable: unreadable)
    }
}
