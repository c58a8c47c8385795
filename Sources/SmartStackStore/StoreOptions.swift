/// How the SQLite event log stores: durability, batching and snapshot policy. A `Sendable` value with defaults.
public struct StoreOptions: Sendable, Hashable {
    /// What an acknowledged write survives.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// `synchronous=NORMAL` in WAL mode: a commit is written to the write-ahead log (the OS page cache)
        /// before it is acknowledged, and the log is fsynced at checkpoints. Survives the service crashing or
        /// being killed (`kill -9`); the last commits before a power loss or kernel crash may be lost (the
        /// database stays consistent).
        case process
        /// `synchronous=FULL`: every commit is fsynced before it is acknowledged. Survives power loss too, at
        /// the cost of one fsync per group commit.
        case power
    }

    /// What an acknowledged write survives (default: the process crashing).
    public var durability = Durability.process
    /// The longest a commit waits for more calls to share it, in microseconds, when the previous commit was
    /// shared (a lone caller never waits). 0 commits whenever the writer is free.
    public var commitDelayMicroseconds = 0
    /// A snapshot is due after this many records...
    public var snapshotEveryRecords = 20_000
    /// ...or this many seconds after the last one when anything was recorded since.
    public var snapshotEverySeconds = 600.0
    /// The write-ahead log is checkpointed into the database (off the writer thread) after this many records.
    public var checkpointRecords = 16_384
    /// ...or after this many bytes of records, whichever comes first: large records (a 1,000-entry timeline is
    /// 26 KB) would otherwise grow the log to hundreds of megabytes before 16,384 of them came. Donations (about
    /// 100 bytes) reach the record count first.
    public var checkpointBytes = 4 << 20
    /// The write-ahead log's file is cut back to this many bytes when the log starts again from its beginning
    /// (`PRAGMA journal_size_limit`). Between checkpoints the log holds what was committed since the last one (about
    /// 15 MB after 16,384 donations committed 10 to a transaction, each transaction writing its pages afresh).
    public var writeAheadLogBytesKept = 64 << 20
    /// Donation keys (app and id) are written to the store's key table once this many are waiting (until then
    /// the log keeps them in memory, about 100 bytes each, and reads them back at start); see `DonationKeyTail`.
    public var donationKeyBatch = 16_384
    /// ...copying the oldest this many at a time in key order (a chunk: each leaf of the key table is written about
    /// once per chunk)...
    public var donationKeyChunk = 8_192
    /// ...this many keys per transaction, whenever the writer has no commit to make (a commit waits behind one
    /// slice at most, well under a millisecond, not a whole chunk).
    public var donationKeySlice = 256

    /// After a failed commit, storage is tried again (a test write) only once the file system holding the database
    /// has this many bytes free for the service (`statvfs`'s `f_bavail`). A test write needs a page or two, which a
    /// nearly full disk often still has: on its own it let the log take records again at once, the next commit
    /// failed, and every second the engine rolled back. 0: the test write alone.
    public var resumeFreeBytes = 4 << 20

    /// The largest the database may grow, in pages (`PRAGMA max_page_count`); beyond it commits fail as on a full
    /// disk. Nil: no limit but the disk's.
    public var maximumPages: Int?

    public init() {}
}

/// Why the event log could not be opened: every case names the database file, and nothing was changed.
public struct StoreOpenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is (the daemon's exit code follows from it).
    public enum Kind: String, Sendable, Hashable {
        /// The file is not a readable smartstackd database (damaged, or another program's file).
        case unreadable
        /// The database was written by a newer smartstackd (a schema this version does not know).
        case newerSchema
        /// The state directory or the file cannot be written.
        case notWritable
        /// Another smartstackd holds the database.
        case locked
        /// Anything else SQLite or the system reported.
        case failed
    }

    public var kind: Kind
    /// The database file.
    public var path: String
    public var reason: String

    public init(_ kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }

    /// The exit status a service that cannot start for this reason ends with (sysexits.h).
    public var exitCode: Int32 {
        switch kind {
        case .unreadable, .newerSchema: 65  // EX_DATAERR
        case .notWritable: 73  // EX_CANTCREAT
        case .locked: 75  // EX_TEMPFAIL
        case .failed: 74  // EX_IOERR
        }
    }
}
