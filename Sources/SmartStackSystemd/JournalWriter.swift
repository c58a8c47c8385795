internal import CSystemd
public import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes ``JournalEntry`` values to the systemd journal over its native protocol
/// (`sd_journal_sendv(3)`), or as plain lines on stderr where there is no journal.
///
/// Sending is a blocking datagram write (journald applies back-pressure when it falls behind), so a
/// server calls it from its own logging task, never from an event loop; a bounded queue in front of it
/// is the caller's. The writer holds no mutable state and may be used from any thread.
public struct JournalWriter: Sendable {
    /// Where entries go.
    public enum Destination: String, Sendable, Hashable {
        /// journald's native socket, every field kept.
        case journal
        /// One line per entry on stderr (``plainLine(_:identifier:processID:time:)``).
        case standardError
    }

    /// journald's native protocol socket.
    public static let journalSocketPath = "/run/systemd/journal/socket"
    /// smartstackd's `SYSLOG_IDENTIFIER`.
    public static let defaultIdentifier = "smartstackd"

    /// Where this writer sends entries.
    public let destination: Destination
    /// The `SYSLOG_IDENTIFIER` of every entry (and the name in stderr lines).
    public let identifier: String

    /// A writer for a fixed destination.
    public init(destination: Destination, identifier: String = JournalWriter.defaultIdentifier) {
        self.destination = destination
        self.identifier = identifier
    }

    /// A writer for ``detectDestination()``: the journal when systemd connected stderr to it.
    public static func automatic(identifier: String = JournalWriter.defaultIdentifier) -> JournalWriter {
        JournalWriter(destination: detectDestination(), identifier: identifier)
    }

    /// The journal when this process's stderr is a journal stream (`JOURNAL_STREAM` names its device
    /// and inode, as systemd sets it for `StandardError=journal`) and journald's socket exists;
    /// stderr otherwise — so a daemon run by hand in a terminal logs to that terminal.
    public static func detectDestination() -> Destination {
        var socketStatus = stat()
        let socketExists = stat(journalSocketPath, &socketStatus) == 0 && (socketStatus.st_mode & S_IFMT) == S_IFSOCK
        return chooseDestination(
            journalStream: getenv("JOURNAL_STREAM").map { String(cString: $0) },
            standardError: identity(of: STDERR_FILENO),
            journalSocketExists: socketExists
        )
    }

    /// Whether `descriptor` is the journal stream `JOURNAL_STREAM` names (standard output under systemd's
    /// `StandardOutput=journal`, for one).
    public static func isJournalStream(_ descriptor: Int32) -> Bool {
        guard let identity = identity(of: descriptor) else { return false }
        return names(getenv("JOURNAL_STREAM").map { String(cString: $0) }, identity)
    }

    /// The device and inode of an open descriptor.
    private static func identity(of descriptor: Int32) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? (UInt64(status.st_dev), UInt64(status.st_ino)) : nil
    }

    /// Whether `journalStream` (`DEVICE:INODE`) names the file `identity`.
    private static func names(_ journalStream: String?, _ identity: (device: UInt64, inode: UInt64)) -> Bool {
        guard let parts = journalStream?.split(separator: ":", omittingEmptySubsequences: false), parts.count == 2,
            let device = UInt64(parts[0]), let inode = UInt64(parts[1])
        else { return false }
        return device == identity.device && inode == identity.inode
    }

    /// The decision of ``detectDestination()`` from its inputs, without touching the system.
    public static func chooseDestination(
        journalStream: String?, standardError: (device: UInt64, inode: UInt64)?, journalSocketExists: Bool
    ) -> Destination {
        guard journalSocketExists, let standardError else { return .standardError }
        return names(journalStream, standardError) ? .journal : .standardError
    }

    /// Writes `entry`, with the caller's source location as `CODE_FILE`, `CODE_LINE` and `CODE_FUNC`.
    ///
    /// Throws the `Errno` of the failed send (for the journal, e.g. `ENOENT` or `ECONNREFUSED` when
    /// journald is gone, `EAGAIN` never: the socket blocks). Nothing is written elsewhere on failure;
    /// a caller that must not lose the entry writes it with a ``standardError`` writer.
    public func send(
        _ entry: JournalEntry, file: String = #fileID, line: Int = #line, function: String = #function
    ) throws(Errno) {
        switch destination {
        case .journal:
            try Self.sendToJournal(
                entry.journalFields(identifier: identifier, file: file, line: line, function: function))
        case .standardError:
            let text = Self.plainLine(entry, identifier: identifier, processID: getpid(), time: .now)
            try Self.writeAll(Array(text.utf8), to: STDERR_FILENO)
        }
    }

    /// One `sd_journal_sendv()` call with an iovec per `NAME=value` field; values may hold newlines
    /// and any bytes (libsystemd switches to the binary field format for them).
    static func sendToJournal(_ fields: [(name: String, value: String)]) throws(Errno) {
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = storage.count
            storage.append(contentsOf: field.name.utf8)
            storage.append(UInt8(ascii: "="))
            storage.append(contentsOf: field.value.utf8)
            ranges.append(start..<storage.count)
        }
        let result: Int32 = storage.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return -Errno.invalidArgument.rawValue }
            let vectors = ranges.map {
                iovec(iov_base: UnsafeMutableRawPointer(base + $0.lowerBound), iov_len: $0.count)
            }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
        if result < 0 { throw Errno(systemdReturn: result) }
    }

    /// Writes every byte, retrying on short writes and `EINTR`.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                let error = Errno.current
                if error == .interrupted { continue }
                throw error
            }
            offset += written
        }
    }
}
