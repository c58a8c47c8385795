public import Logging
import Synchronization

/// The service's log level, shared by every logger and changed at run time by `SetLogLevel`.
///
/// An atomic, not a lock: every donation asks it (whether to log the donation at debug level).
public final class LogLevelControl: Sendable {
    private let current: Atomic<UInt8>

    public init(_ level: Logger.Level) { current = Atomic(Self.code(level)) }

    public var level: Logger.Level {
        get { Self.level(current.load(ordering: .relaxed)) }
        set { current.store(Self.code(newValue), ordering: .relaxed) }
    }

    private static func code(_ level: Logger.Level) -> UInt8 {
        switch level {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }

    private static func level(_ code: UInt8) -> Logger.Level {
        switch code {
        case 0: .trace
        case 1: .debug
        case 2: .info
        case 3: .notice
        case 4: .warning
        case 5: .error
        default: .critical
        }
    }
}
