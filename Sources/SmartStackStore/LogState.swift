import SmartStackCore

/// One thing queued for the writer, in the order the engine's owner queued it.
enum PendingItem: Sendable {
    /// An event at its sequence number.
    case record(Int64, EngineEvent)
    /// Donations to delete, and the engine right after their deletion (stored as the snapshot through
    /// `through` in the same transaction).
    case delete([(app: AppID, id: String)], engine: Engine, through: Int64)
    /// A snapshot encoded in the background.
    case snapshot(StoredSnapshot)
    /// The uid an app id belongs to from now on (the first to claim it keeps it).
    case owner(AppID, UInt32)
    /// A claim given back (the claiming call failed): the app belongs to nobody again, if `uid` held it.
    case ownerReleased(AppID, UInt32)
}

/// The writer's queue and the log's lifecycle, behind one lock.
struct LogState: Sendable {
    /// Where the log is in its life.
    enum Phase: Sendable {
        /// Taking records.
        case open
        /// A commit failed; nothing is taken. `reloaded` once the engine's owner re-read the stored state, after
        /// which the writer probes storage and reopens.
        case failed(StoreFailure, reloaded: Bool)
        /// Closing: what is queued is committed, nothing new is taken.
        case closing
        /// Closed.
        case closed
    }

    var phase = Phase.open
    /// Items for the next transaction.
    var pending: [PendingItem] = []
    /// When each call in `pending` was queued (monotonic nanoseconds), for commit latency.
    var pendingCalls: [UInt64] = []
    /// The commit every call in `pending` waits for.
    var waiter = CommitWaiter()
    /// Whether the writer is waiting to be woken.
    var writerIdle = true
    /// The next record's sequence number.
    var nextSequence: Int64 = 1
    /// Bumped by every failure, so work queued before it (background snapshots) is dropped.
    var epoch = 0
    /// The stored snapshot's `through` (0 without one): an older snapshot never replaces it.
    var snapshotThrough: Int64 = 0
    /// Records queued since the last snapshot.
    var recordsSinceSnapshot = 0
    /// When the last snapshot was queued (monotonic nanoseconds).
    var lastSnapshotQueued: UInt64 = 0

    /// Queues `event` as the next record, under the next sequence number.
    mutating func appendRecord(_ event: EngineEvent) {
        pending.append(.record(nextSequence, event))
        nextSequence += 1
    }

    /// The failure new records fail with, if the log is not open.
    var refusal: StoreFailure? {
        switch phase {
        case .open: nil
        case .failed(let failure, _): failure
        case .closing, .closed: StoreFailure(reason: "the event log is closed")
        }
    }
}

/// What the log counts for statistics, behind its own lock (updated by the writer after each commit).
struct LogCounters: Sendable {
    var storedEvents = 0
    var storedDonations = 0
    var commits = 0
    var committedCalls = 0
    var lastSnapshot: Timestamp?
    var latencies = LatencyWindow()
    /// Times the writer held a commit back for company (`StoreOptions.commitDelayMicroseconds`).
    var companyWaits = 0
    /// Checkpoints of the write-ahead log the checkpointer finished (requested by record count or bytes).
    var checkpoints = 0
}

/// The latest call latencies (microseconds), for percentiles.
struct LatencyWindow: Sendable {
    static let capacity = 65_536
    private var samples: [UInt32] = []
    private var next = 0

    mutating func add(_ microseconds: UInt32) {
        if samples.count < Self.capacity {
            samples.append(microseconds)
        } else {
            samples[next] = microseconds
            next = (next + 1) % Self.capacity
        }
    }

    var summary: LatencySummary? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func percentile(_ p: Double) -> Double {
            let index = min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[max(0, index)]) / 1_000
        }
        return LatencySummary(
            p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99),
            max: Double(sorted[sorted.count - 1]) / 1_000, samples: sorted.count)
    }
}
