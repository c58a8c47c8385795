/// One structured journal entry: a message, its priority, an optional `MESSAGE_ID` and
/// `SMARTSTACK_*` fields.
///
/// Every field is kept under 4096 bytes as a whole, `NAME=value` (``maximumFieldBytes``): a longer
/// value is cut at a character boundary and ends in ``truncationMarker``, and the entry then names
/// the cut fields in `SMARTSTACK_TRUNCATED`, so an analyst can tell a cut value from a short one.
/// The limit is the field, not just the value, because `journalctl` shows a field of 4096 bytes or
/// more only with `--all` (`null` in `-o json`, `[… blob data]` otherwise). DESIGN.md's "values under
/// 4096 bytes" follows, whatever a client sent.
public struct JournalEntry: Sendable, Hashable {
    /// One `NAME=value` field.
    public struct Field: Sendable, Hashable {
        /// The field's name.
        public let name: JournalFieldName
        /// The value as given; capped when written.
        public var value: String

        /// A field named `name` with `value`.
        public init(_ name: JournalFieldName, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The longest field written, `NAME=value` in UTF-8 bytes, marker included.
    public static let maximumFieldBytes = 4095
    /// What a cut value ends with.
    public static let truncationMarker = "…[truncated]"

    /// `MESSAGE=`: one human-readable sentence.
    public var message: String
    /// `PRIORITY=`.
    public var priority: JournalPriority
    /// `MESSAGE_ID=`, when the entry is one of smartstackd's event types.
    public var messageID: MessageID?
    /// The other fields, in the order added; a name may repeat (journald keeps every value).
    public var fields: [Field]

    /// An entry with a message and optional ID and fields.
    public init(
        _ message: String, priority: JournalPriority = .info, messageID: MessageID? = nil,
        fields: KeyValuePairs<JournalFieldName, String> = [:]
    ) {
        self.message = message
        self.priority = priority
        self.messageID = messageID
        self.fields = fields.map { Field($0.key, $0.value) }
    }

    /// An entry for one of smartstackd's event types, carrying its `MESSAGE_ID`.
    public init(
        _ event: SmartStackEvent, _ message: String, priority: JournalPriority = .info,
        fields: KeyValuePairs<JournalFieldName, String> = [:]
    ) {
        self.init(message, priority: priority, messageID: event.messageID, fields: fields)
    }

    /// Adds `NAME=value`.
    public mutating func append(_ name: JournalFieldName, _ value: String) {
        fields.append(Field(name, value))
    }

    /// Adds `NAME=value` for a number, in decimal.
    public mutating func append(_ name: JournalFieldName, _ value: some BinaryInteger) {
        fields.append(Field(name, String(value)))
    }

    /// The first value of the field `name`, if the entry has one.
    public func value(of name: JournalFieldName) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// Every field as written, values capped: `MESSAGE`, `PRIORITY`, `MESSAGE_ID`, `SYSLOG_IDENTIFIER`,
    /// `CODE_FILE`, `CODE_LINE`, `CODE_FUNC`, the entry's fields, then `SMARTSTACK_TRUNCATED` if any
    /// value was cut.
    public func journalFields(
        identifier: String, file: String? = nil, line: Int? = nil, function: String? = nil
    ) -> [(name: String, value: String)] {
        var truncated: [String] = []
        var result: [(name: String, value: String)] = []
        func add(_ name: String, _ value: String) {
            let (capped, wasCut) = Self.capped(value, forField: name)
            if wasCut { truncated.append(name) }
            result.append((name, capped))
        }
        add("MESSAGE", message)
        add("PRIORITY", String(priority.rawValue))
        if let messageID { add("MESSAGE_ID", messageID.hex) }
        add("SYSLOG_IDENTIFIER", identifier)
        if let file { add("CODE_FILE", file) }
        if let line { add("CODE_LINE", String(line)) }
        if let function { add("CODE_FUNC", function) }
        for field in fields { add(field.name.rawValue, field.value) }
        if !truncated.isEmpty { result.append((JournalFieldName.truncated.rawValue, truncated.joined(separator: ","))) }
        return result
    }

    /// `value` cut so that `name=value` takes at most ``maximumFieldBytes`` UTF-8 bytes, marker
    /// included, at a Unicode scalar boundary; and whether it was cut.
    public static func capped(_ value: String, forField name: String) -> (value: String, truncated: Bool) {
        let limit = maximumFieldBytes - name.utf8.count - 1
        guard value.utf8.count > limit else { return (value, false) }
        let budget = max(0, limit - truncationMarker.utf8.count)
        var kept = String.UnicodeScalarView()
        var used = 0
        for scalar in value.unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > budget { break }
            kept.append(scalar)
            used += size
        }
        return (String(kept) + truncationMarker, true)
    }
}
