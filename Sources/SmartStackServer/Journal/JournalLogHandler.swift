public import Logging
public import SmartStackSystemd

/// A swift-log handler that turns every log message into a structured journal entry, at the service's
/// shared level, through the bounded ``JournalQueue`` (so logging never blocks).
///
/// `PRIORITY` follows the level, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC` are the logging call's, and each
/// metadata key becomes a `SMARTSTACK_*` field (`peer` → `SMARTSTACK_PEER`, `client.uid` →
/// `SMARTSTACK_CLIENT_UID`). Where there is no journal the queue writes the same entry as a line on stderr.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    let label: String
    let control: LogLevelControl
    let queue: JournalQueue

    public init(label: String, control: LogLevelControl, queue: JournalQueue) {
        self.label = label
        self.control = control
        self.queue = queue
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
        queue.enqueue(Self.item(for: event, metadata: metadata))
    }

    /// The queue item for one log event (pure, for tests).
    static func item(for event: LogEvent, metadata: Logger.Metadata) -> JournalQueue.Item {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var entry = JournalEntry(event.message.description, priority: JournalPriority(event.level))
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            guard let name = fieldName(for: key) else { continue }
            entry.append(name, "\(value)")
        }
        return JournalQueue.Item(entry, file: event.file, line: Int(event.line), function: event.function)
    }

    /// `SMARTSTACK_` and the key in upper case, anything but letters and digits as `_`; `nil` if still invalid.
    static func fieldName(for key: String) -> JournalFieldName? {
        var suffix = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "a"..."z": suffix += String(scalar).uppercased()
            case "A"..."Z", "0"..."9": suffix.unicodeScalars.append(scalar)
            default: suffix += "_"
            }
        }
        return JournalFieldName.smartstack(suffix)
    }
}

extension JournalPriority {
    /// The journal priority of a swift-log level (`trace` and `debug` are both debug).
    public init(_ level: Logger.Level) {
        switch level {
        case .trace, .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
