/// A syslog priority, the journal's `PRIORITY=` field (`0` emergency … `7` debug).
public enum JournalPriority: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// The system is unusable.
    case emergency = 0
    /// Action must be taken immediately.
    case alert = 1
    /// A critical condition.
    case critical = 2
    /// An error condition.
    case error = 3
    /// A warning condition.
    case warning = 4
    /// Normal but significant.
    case notice = 5
    /// Informational.
    case info = 6
    /// Debug-level detail (per-donation entries).
    case debug = 7

    /// The short name used in the stderr line format (`err`, `info`, …), as syslog spells it.
    public var name: String {
        switch self {
        case .emergency: "emerg"
        case .alert: "alert"
        case .critical: "crit"
        case .error: "err"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// Orders by severity, most severe first (as the raw values do).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
