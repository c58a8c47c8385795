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

/// A log handler writing one line per message to standard error, at the shared level.
///
/// Used when no journal is reachable (running by hand, in tests); metadata is printed as `key=value`.
public struct StderrLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    let label: String
    let control: LogLevelControl

    public init(label: String, control: LogLevelControl) {
        self.label = label
        self.control = control
    }

    public var logLevel: Logger.Level {
        get { control.level }
        set { control.level = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line = "\(event.level): \(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += "\n"
        StandardError.write(line)
    }
}

#if canImport(Glibc)
    import Glibc
#endif

enum StandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
