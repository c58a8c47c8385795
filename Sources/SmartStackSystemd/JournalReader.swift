internal import CSystemd
public import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads entries from systemd journal files with libsystemd's `sd-journal` API: the local journal, a
/// directory of journal files, or single files (for example copied from another machine).
///
/// A thin layer over `sd_journal_open*`, `sd_journal_add_match`, `sd_journal_seek_realtime_usec` and
/// `sd_journal_next`: matches follow `sd_journal_add_match(3)` — matches on the same field are alternatives,
/// matches on different fields must all hold, ``addDisjunction()`` and ``addConjunction()`` combine groups.
/// The reader owns its `sd_journal` handle and closes it when it goes away; it is not shared across threads.
public struct JournalReader: ~Copyable {
    /// Which journal files to read.
    public enum Source: Sendable, Hashable {
        /// The machine's journal (`sd_journal_open`): system and user journals this user may read.
        case local(currentUserOnly: Bool = false)
        /// Every journal file in a directory (`sd_journal_open_directory`), such as `/var/log/journal/<machine-id>`
        /// or a directory copied from another machine.
        case directory(String)
        /// These journal files (`sd_journal_open_files`).
        case files([String])
    }

    /// One journal entry: its fields and when journald received it.
    public struct Entry: Sendable, Hashable {
        /// `__REALTIME_TIMESTAMP`: microseconds since the Unix epoch (UTC).
        public var realtimeMicroseconds: UInt64
        /// Every field, `NAME` to value; for a field that repeats, the first value. Binary values are decoded
        /// as UTF-8 with replacement characters.
        public var fields: [String: String]

        public init(realtimeMicroseconds: UInt64, fields: [String: String]) {
            self.realtimeMicroseconds = realtimeMicroseconds
            self.fields = fields
        }

        /// The value of a field.
        public subscript(_ name: String) -> String? { fields[name] }
    }

    private let handle: OpaquePointer

    /// Opens `source`. Throws the `Errno` libsystemd reports (`ENOENT` for a missing file or directory).
    public init(_ source: Source) throws(Errno) {
        var journal: OpaquePointer?
        let result: Int32
        switch source {
        case .local(let currentUserOnly):
            result = sd_journal_open(&journal, currentUserOnly ? Int32(SD_JOURNAL_CURRENT_USER) : 0)
        case .directory(let path):
            result = sd_journal_open_directory(&journal, path, 0)
        case .files(let paths):
            result = Self.withCStringArray(paths) { sd_journal_open_files(&journal, $0, 0) }
        }
        if result < 0 { throw Errno(systemdReturn: result) }
        guard let journal else { throw Errno.noSuchFileOrDirectory }
        handle = journal
        // No cap on field sizes: smartstackd keeps its fields under 4096 bytes, and a copied journal may not.
        _ = sd_journal_set_data_threshold(handle, 0)
    }

    deinit {
        sd_journal_close(handle)
    }

    /// Adds the match `field=value` (`sd_journal_add_match`).
    public mutating func addMatch(_ field: String, _ value: String) throws(Errno) {
        var bytes = Array(field.utf8)
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value.utf8)
        let result = bytes.withUnsafeBytes { sd_journal_add_match(handle, $0.baseAddress, $0.count) }
        if result < 0 { throw Errno(systemdReturn: result) }
    }

    /// Ends the current group of matches: entries match it or the next group (`sd_journal_add_disjunction`).
    public mutating func addDisjunction() throws(Errno) {
        let result = sd_journal_add_disjunction(handle)
        if result < 0 { throw Errno(systemdReturn: result) }
    }

    /// Ends the current alternatives: entries must match them and the next ones (`sd_journal_add_conjunction`).
    public mutating func addConjunction() throws(Errno) {
        let result = sd_journal_add_conjunction(handle)
        if result < 0 { throw Errno(systemdReturn: result) }
    }

    /// Moves before the first entry at or after `microseconds` since the epoch; the oldest entry otherwise.
    public mutating func seek(realtimeMicroseconds: UInt64?) throws(Errno) {
        let result =
            if let realtimeMicroseconds { sd_journal_seek_realtime_usec(handle, realtimeMicroseconds) } else {
                sd_journal_seek_head(handle)
            }
        if result < 0 { throw Errno(systemdReturn: result) }
    }

    /// The next matching entry in time order, or `nil` at the end.
    public mutating func next() throws(Errno) -> Entry? {
        let moved = sd_journal_next(handle)
        if moved < 0 { throw Errno(systemdReturn: moved) }
        guard moved > 0 else { return nil }
        var realtime: UInt64 = 0
        let timeResult = sd_journal_get_realtime_usec(handle, &realtime)
        if timeResult < 0 { throw Errno(systemdReturn: timeResult) }
        var fields: [String: String] = [:]
        sd_journal_restart_data(handle)
        var data: UnsafeRawPointer?
        var length = 0
        while true {
            let found = sd_journal_enumerate_available_data(handle, &data, &length)
            if found < 0 { throw Errno(systemdReturn: found) }
            guard found > 0, let data else { break }
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if fields[name] == nil {
                fields[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
            }
        }
        return Entry(realtimeMicroseconds: realtime, fields: fields)
    }

    /// Calls `body` with a NULL-terminated array of C strings, copies that live for the call.
    private static func withCStringArray<Result>(
        _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        pointers.append(nil)
        return pointers.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { preconditionFailure("an array of at least one element") }
            return body(base)
        }
    }
}
