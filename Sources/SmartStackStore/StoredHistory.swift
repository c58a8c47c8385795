public import SmartStackCore

/// The engine's state as stored, and through which record it has applied the log.
public struct StoredSnapshot: Sendable, Hashable {
    /// The last record the snapshot includes; records after it are replayed on top.
    public var through: Int64
    /// When it was taken (the service's clock).
    public var taken: Timestamp
    /// `Engine.snapshot()`'s bytes.
    public var bytes: [UInt8]

    public init(through: Int64, taken: Timestamp, bytes: [UInt8]) {
        self.through = through
        self.taken = taken
        self.bytes = bytes
    }
}

/// What a log holds: the latest snapshot and every stored event (publish marks included), in order.
///
/// The engine is the snapshot plus the events after it; the history of record (for listing, deleting and
/// rebuilding) is every event.
public struct StoredHistory: Sendable {
    public var snapshot: StoredSnapshot?
    /// Every stored event in the order the engine applied them.
    public var events: [EngineEvent]
    /// Each event's sequence number (strictly increasing; deleted rows leave gaps).
    public var sequences: [Int64]
    /// How many donations each app has among `events` (to size indexes before filling them).
    public var donationsPerApp: [AppID: Int]
    /// The uid each claimed app id belongs to (see ``EventLog/recordOwner(app:uid:)``).
    public var owners: [AppID: UInt32] = [:]

    public init(
        snapshot: StoredSnapshot? = nil, events: [EngineEvent] = [], sequences: [Int64] = [],
        donationsPerApp: [AppID: Int] = [:]
    ) {
        self.snapshot = snapshot
        self.events = events
        self.sequences = sequences
        self.donationsPerApp = donationsPerApp
    }
}

/// What `GetStatistics` reports about storage.
public struct EventLogStatistics: Sendable, Hashable {
    /// Event rows stored (donations and publish marks included).
    public var storedEvents: Int
    /// Donation rows stored.
    public var storedDonations: Int
    /// Bytes of the database file and its write-ahead log.
    public var databaseBytes: Int
    /// When the last snapshot was taken, if there is one.
    public var lastSnapshot: Timestamp?
    /// Transactions committed since the service started.
    public var commits: Int
    /// Calls acknowledged since start.
    public var committedCalls: Int
    /// Commit latency percentiles over recent calls, from enqueue to commit.
    public var latency: LatencySummary?

    public init(
        storedEvents: Int, storedDonations: Int, databaseBytes: Int, lastSnapshot: Timestamp?, commits: Int,
        committedCalls: Int, latency: LatencySummary?
    ) {
        self.storedEvents = storedEvents
        self.storedDonations = storedDonations
        self.databaseBytes = databaseBytes
        self.lastSnapshot = lastSnapshot
        self.commits = commits
        self.committedCalls = committedCalls
        self.latency = latency
    }
}
