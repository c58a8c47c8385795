public import Logging
import Synchronization

/// The service's log level, shared by every logger and changed at run time by `SetLogLevel`.
public final class LogLevelControl: Sendable {
    private let current: Mutex<Logger.Level>

    public init(_ level: Logger.Level) { current = Mutex(level) }

    public var level: Logger.Level {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
