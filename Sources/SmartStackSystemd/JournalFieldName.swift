/// The name of a journal field an entry may carry: `A`–`Z`, `0`–`9` and `_`, at most 64 bytes,
/// starting with a letter.
///
/// journald drops fields named otherwise (`systemd.journal-fields(7)`); a leading underscore marks
/// fields only journald itself may set. The names ``JournalEntry`` and ``JournalWriter`` write
/// themselves (`MESSAGE`, `PRIORITY`, `MESSAGE_ID`, `SYSLOG_IDENTIFIER`, `CODE_*`) are refused so
/// that no entry carries them twice.
public struct JournalFieldName: Sendable, Hashable, CustomStringConvertible {
    /// The field name as written to the journal.
    public let rawValue: String

    /// The longest field name journald accepts.
    public static let maximumLength = 64

    /// The fields an entry or the writer sets itself.
    public static let reserved: Set<String> = [
        "MESSAGE", "PRIORITY", "MESSAGE_ID", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    /// Validates `name`; `nil` when journald would drop it or it is one of the ``reserved`` names.
    public init?(_ name: String) {
        guard Self.problem(with: name) == nil else { return nil }
        self.rawValue = name
    }

    /// `SMARTSTACK_` followed by `suffix`, e.g. `smartstack("STACK")`; `nil` when not a valid name.
    public static func smartstack(_ suffix: String) -> JournalFieldName? {
        JournalFieldName("SMARTSTACK_" + suffix)
    }

    /// Why `name` is not a usable field name, or `nil` when it is.
    public static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return "empty" }
        guard bytes.count <= maximumLength else { return "longer than \(maximumLength) bytes" }
        guard first != UInt8(ascii: "_") else { return "starts with an underscore (reserved for journald)" }
        guard !isDigit(first) else { return "starts with a digit" }
        guard bytes.allSatisfy({ isUppercase($0) || isDigit($0) || $0 == UInt8(ascii: "_") }) else {
            return "has characters other than A-Z, 0-9 and _"
        }
        guard !reserved.contains(name) else { return "is set by the journal writer itself" }
        return nil
    }

    /// For the constants below, which are valid by construction (a test checks each).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    private static func isUppercase(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
}

extension JournalFieldName {
    /// `SMARTSTACK_STACK`: the stack's id.
    public static let stack = JournalFieldName(unchecked: "SMARTSTACK_STACK")
    /// `SMARTSTACK_REVISION`: the stack's order revision after the change.
    public static let revision = JournalFieldName(unchecked: "SMARTSTACK_REVISION")
    /// `SMARTSTACK_ENGINE_TIME`: the engine time a decision was decided for (RFC 3339): the service's time, or
    /// for a decision that follows backfilled events (a replay) the latest of their dates.
    public static let engineTime = JournalFieldName(unchecked: "SMARTSTACK_ENGINE_TIME")
    /// `SMARTSTACK_ORDER`: the new order, widget ids separated by commas.
    public static let order = JournalFieldName(unchecked: "SMARTSTACK_ORDER")
    /// `SMARTSTACK_PREVIOUS_ORDER`: the order before the change.
    public static let previousOrder = JournalFieldName(unchecked: "SMARTSTACK_PREVIOUS_ORDER")
    /// `SMARTSTACK_TOP`: the widget now on top.
    public static let top = JournalFieldName(unchecked: "SMARTSTACK_TOP")
    /// `SMARTSTACK_REASON`: why, in the engine's words.
    public static let reason = JournalFieldName(unchecked: "SMARTSTACK_REASON")
    /// `SMARTSTACK_SCORES`: the scores behind the order, `widget=score` separated by commas.
    public static let scores = JournalFieldName(unchecked: "SMARTSTACK_SCORES")
    /// `SMARTSTACK_WIDGET`: the widget an entry is about.
    public static let widget = JournalFieldName(unchecked: "SMARTSTACK_WIDGET")
    /// `SMARTSTACK_KIND`: the widget kind an entry is about.
    public static let kind = JournalFieldName(unchecked: "SMARTSTACK_KIND")
    /// `SMARTSTACK_APP`: the provider's app id.
    public static let app = JournalFieldName(unchecked: "SMARTSTACK_APP")
    /// `SMARTSTACK_COUNT`: how many events one entry stands for (coalesced bursts, summaries).
    public static let count = JournalFieldName(unchecked: "SMARTSTACK_COUNT")
    /// `SMARTSTACK_CLIENT_UID`: the peer's uid (`SO_PEERCRED`).
    public static let clientUID = JournalFieldName(unchecked: "SMARTSTACK_CLIENT_UID")
    /// `SMARTSTACK_CLIENT_PID`: the peer's pid (`SO_PEERCRED`).
    public static let clientPID = JournalFieldName(unchecked: "SMARTSTACK_CLIENT_PID")
    /// `SMARTSTACK_METHOD`: the Varlink method an entry is about.
    public static let method = JournalFieldName(unchecked: "SMARTSTACK_METHOD")
    /// `SMARTSTACK_ERROR`: the Varlink error returned.
    public static let error = JournalFieldName(unchecked: "SMARTSTACK_ERROR")
    /// `SMARTSTACK_TRUNCATED`: the fields whose values were cut to fit, separated by commas.
    public static let truncated = JournalFieldName(unchecked: "SMARTSTACK_TRUNCATED")
    /// `SMARTSTACK_UNIT`: the service manager's unit an entry is about (smartstack-desktop).
    public static let unit = JournalFieldName(unchecked: "SMARTSTACK_UNIT")
    /// `SMARTSTACK_INVOCATION`: the unit's invocation id.
    public static let invocation = JournalFieldName(unchecked: "SMARTSTACK_INVOCATION")
    /// `SMARTSTACK_DATE`: when the event happened (RFC 3339).
    public static let date = JournalFieldName(unchecked: "SMARTSTACK_DATE")
    /// `SMARTSTACK_SESSION`: the logind session.
    public static let session = JournalFieldName(unchecked: "SMARTSTACK_SESSION")
    /// `SMARTSTACK_BUS`: the bus watched (user or system).
    public static let bus = JournalFieldName(unchecked: "SMARTSTACK_BUS")

    /// The named constants above, for the test that validates them.
    static let constants: [JournalFieldName] = [
        stack, revision, order, previousOrder, top, reason, scores, widget, kind, app, count, clientUID, clientPID,
        method, error, truncated, unit, invocation, date, session, bus,
    ]
}
