import Dispatch
import GRDB
import GRDBSQLite
import Logging
import SmartStackCore
import Synchronization

/// One transaction's worth of queued work.
struct Batch: Sendable {
    var items: [PendingItem]
    /// When each call in it was queued (monotonic nanoseconds).
    var calls: [UInt64]
    var waiter: CommitWaiter
    /// The latest stored snapshot's `through` when the batch was taken.
    var snapshotThrough: Int64
}

/// What a committed transaction changed, for the counters.
struct CommitResult {
    var insertedEvents = 0
    /// The bytes of the inserted events' bodies.
    var insertedBytes = 0
    var insertedDonations = 0
    var deletedEvents = 0
    var snapshot: StoredSnapshot?
    /// The donation keys this transaction stored that are not in `donation_key` (they join the tail once it
    /// commits).
    var newKeys: [(app: String, id: String, sequence: Int64)] = []
    /// Set when the transaction wrote the whole tail to `donation_key` (before a deletion): the last sequence
    /// number it covers.
    var keysFlushedThrough: Int64?
}

/// What the writer thread does next.
private enum WriterStep {
    case commit(Batch)
    /// Nothing to commit: a slice of the donation keys waiting to be copied.
    case copyKeys
    case sleep
    case probeLater
    case stop
}

extension SQLiteEventLog {
    /// The writer thread: commits whatever is queued whenever it is free, one transaction per batch.
    func runWriter() {
        var previousCalls = 0
        while true {
            switch nextStep(previousCalls: previousCalls) {
            case .commit(let batch):
                previousCalls = batch.calls.count
                commit(batch)
            case .copyKeys:
                copyKeySlice()
            case .sleep:
                wake.wait()
            case .probeLater:
                _ = wake.wait(timeout: .now() + .seconds(1))
                probe()
            case .stop:
                writerStopped.signal()
                return
            }
        }
    }

    private func nextStep(previousCalls: Int) -> WriterStep {
        // Waiting for company: only after a shared commit, and never longer than the configured delay.
        if options.commitDelayMicroseconds > 0, previousCalls > 1 {
            let deadline = Monotonic.nanoseconds() + UInt64(options.commitDelayMicroseconds) * 1_000
            var waited = false
            while Monotonic.nanoseconds() < deadline {
                let waiting = state.withLock { $0.pendingCalls.count }
                if waiting == 0 || waiting >= previousCalls { break }
                waited = true
                Monotonic.sleep(microseconds: 20)
            }
            if waited { counters.withLock { $0.companyWaits += 1 } }
        }
        // The next batch's queues, sized like this one's and allocated before the lock is taken: the event loop
        // then appends to them without regrowing them (at 50 x 64, regrowing was 2 % of the loop's time).
        var items: [PendingItem] = []
        var calls: [UInt64] = []
        // Donation keys are copied when nothing else is to be done (read before the state's lock: the tail has its
        // own).
        let copyKeys =
            !writer.keyCopyFailed
            && (writer.keyCopy != nil || writer.keys.withLock { $0.count } >= options.donationKeyBatch)
        if previousCalls > 1 {
            items.reserveCapacity(previousCalls)
            calls.reserveCapacity(previousCalls)
        }
        return state.withLock { state -> WriterStep in
            switch state.phase {
            case .closed:
                return .stop
            case .failed(_, let reloaded):
                state.writerIdle = true
                return reloaded ? .probeLater : .sleep
            case .open, .closing:
                guard !state.pending.isEmpty else {
                    if state.phaseIsClosing { return .stop }
                    if copyKeys { return .copyKeys }
                    state.writerIdle = true
                    return .sleep
                }
                swap(&items, &state.pending)
                swap(&calls, &state.pendingCalls)
                let batch = Batch(
                    items: items, calls: calls, waiter: state.waiter, snapshotThrough: state.snapshotThrough)
                state.waiter = CommitWaiter()
                return .commit(batch)
            }
        }
    }

    private func commit(_ batch: Batch) {
        var result = CommitResult()
        do {
            try writerDatabase.writeWithoutTransaction { db in
                try writer.transaction(db) { try writer.write(batch, db, into: &result) }
            }
        } catch {
            fail(batch, error)
            return
        }
        let end = Monotonic.nanoseconds()
        if let snapshot = result.snapshot {
            state.withLock { $0.snapshotThrough = max($0.snapshotThrough, snapshot.through) }
        }
        // Counted before the calls are woken, so statistics never lag behind acknowledgements.
        counters.withLock { counters in
            counters.commits += 1
            counters.committedCalls += batch.calls.count
            counters.storedEvents += result.insertedEvents - result.deletedEvents
            counters.storedDonations += result.insertedDonations - result.deletedEvents
            if let snapshot = result.snapshot { counters.lastSnapshot = snapshot.taken }
            for queued in batch.calls { counters.latencies.add(UInt32(clamping: (end &- queued) / 1_000)) }
        }
        // The keys join the tail before the calls are woken: a lookup after an acknowledgement finds them.
        var tailCount = 0
        if result.keysFlushedThrough != nil || !result.newKeys.isEmpty {
            tailCount = writer.keys.withLock { tail in
                if let through = result.keysFlushedThrough { tail.flushed(through: through) }
                for key in result.newKeys { tail.add(app: key.app, id: key.id, sequence: key.sequence) }
                return tail.count
            }
        }
        batch.waiter.resolve(nil)
        writer.keyCopyFailed = false
        // Behind a backlog (the writer seldom idle), after every commit a slice at least as large as the commit's
        // donations, so the tail stops growing.
        if tailCount >= 2 * options.donationKeyBatch { copyKeySlice(atLeast: result.insertedDonations) }
        writer.recordsSinceCheckpoint += result.insertedEvents
        // A snapshot is the whole engine (tens of megabytes for large timelines), written afresh each time.
        writer.bytesSinceCheckpoint += result.insertedBytes + (result.snapshot?.bytes.count ?? 0)
        if result.deletedEvents > 0
            || (truncateRequested.load(ordering: .relaxed) && end &- writer.lastTruncateAttempt >= 500_000_000)
        {
            // Deleted donations may still be in old log frames: checkpoint and truncate the log (again, when the
            // last truncation found a reader on old frames).
            writer.recordsSinceCheckpoint = 0
            writer.bytesSinceCheckpoint = 0
            writer.lastTruncateAttempt = end
            requestCheckpoint(truncate: true)
        } else if writer.recordsSinceCheckpoint >= options.checkpointRecords
            || writer.bytesSinceCheckpoint >= options.checkpointBytes, requestCheckpoint(truncate: false)
        {
            writer.recordsSinceCheckpoint = 0
            writer.bytesSinceCheckpoint = 0
        }
        if checkpointResidue.exchange(false, ordering: .acquiring) {
            checkpointResidueNow()
            checkpointScheduled.store(false, ordering: .releasing)
        }
    }

    /// Checkpoints, on the writer's own connection and between two of its transactions, the frames committed while
    /// the checkpointer ran; with every frame in the database, the next commit starts the log again from its
    /// beginning. SQLite restarts the log only when a writer finds it wholly checkpointed, which a checkpoint on
    /// another connection never leaves it under a steady stream of commits: the log grew by every commit's pages,
    /// without end (970 MB after 20 s of donations from 50 clients). What is left is small (the commits of one
    /// checkpoint's run), so the writer pauses for a short checkpoint, not a whole one.
    private func checkpointResidueNow() {
        do {
            try writerDatabase.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        } catch {
            // Busy: a truncating checkpoint is running; it copies the residue too.
            logger.debug("checkpoint failed", metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
        }
    }

    /// Writes the next slice (`donationKeySlice`) of the donation keys being copied to `donation_key`, in a
    /// transaction of its own; first takes the tail's oldest `donationKeyChunk` keys when no copy is under way. The
    /// last slice records `donationKeysThrough`, and the chunk leaves the tail. Called when the writer has no commit
    /// to make (a commit waits behind one slice at most, not a whole chunk), and after every commit while the tail
    /// holds two batches (then at least `keys` of them). On failure the copy starts again from the tail after a later
    /// commit.
    private func copyKeySlice(atLeast keys: Int = 0) {
        if writer.keyCopy == nil {
            let (after, end) = writer.keys.withLock { ($0.through, $0.end(ofOldest: options.donationKeyChunk)) }
            guard let end else { return }
            writer.keyCopy = DonationKeyCopy(after: after, through: max(after, end))
        }
        guard var copy = writer.keyCopy else { return }
        do {
            try writerDatabase.writeWithoutTransaction { db in
                try writer.transaction(db) {
                    try writer.copyKeys(&copy, slice: max(1, options.donationKeySlice, keys), db)
                }
            }
        } catch {
            writer.keyCopy = nil
            writer.keyCopyFailed = true
            logger.warning(
                "cannot write donation keys yet; kept in memory",
                metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
            return
        }
        if copy.isFinished {
            writer.keyCopy = nil
            writer.keys.withLock { $0.flushed(through: copy.through) }
        } else {
            writer.keyCopy = copy
        }
    }

    /// A failed commit fails its calls and everything queued after them, and stops the log until its owner has
    /// rolled back to the stored state.
    private func fail(_ batch: Batch, _ error: any Error) {
        let failure = StoreFailure(reason: "cannot store in \(path): \(Self.describe(error))")
        logger.error("commit failed", metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
        let queued = state.withLock { state -> CommitWaiter in
            state.epoch += 1
            if !state.phaseIsClosing { state.phase = .failed(failure, reloaded: false) }
            let waiter = state.waiter
            state.pending = []
            state.pendingCalls = []
            state.waiter = CommitWaiter()
            return waiter
        }
        // The owner reloads the tail from the store; a copy under way starts again from it.
        writer.keyCopy = nil
        batch.waiter.resolve(failure)
        queued.resolve(failure)
    }

    /// After a failure and the owner's rollback: a test write; when it succeeds the log takes records again.
    private func probe() {
        if let free = FreeSpace.bytesAvailable(near: path), free < options.resumeFreeBytes {
            let metadata: Logger.Metadata = [
                "file": "\(path)", "freeBytes": "\(free)", "neededBytes": "\(options.resumeFreeBytes)",
            ]
            if writer.waitingForSpace {
                logger.debug("storage still failing: too little free space", metadata: metadata)
            } else {
                logger.warning("storage is tried again once the disk has more free space", metadata: metadata)
            }
            writer.waitingForSpace = true
            return
        }
        writer.waitingForSpace = false
        do {
            try writerDatabase.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try db.execute(sql: "PRAGMA user_version = \(StoreSchema.version)")
                    return .commit
                }
            }
        } catch {
            logger.debug("storage still failing", metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
            return
        }
        let reopened = state.withLock { state -> Bool in
            guard case .failed(_, reloaded: true) = state.phase else { return false }
            state.phase = .open
            return true
        }
        if reopened { logger.notice("storage works again; taking records", metadata: ["file": "\(path)"]) }
    }

    /// Checkpoints the write-ahead log into the database on the reader connection, off the writer thread. A copying
    /// checkpoint is one cycle at a time: it ends when the writer has checkpointed its residue, and until then a new
    /// one is refused (false; the writer asks again after its next commit). A truncating one is queued behind it.
    @discardableResult
    func requestCheckpoint(truncate: Bool) -> Bool {
        if truncate {
            truncateRequested.store(true, ordering: .relaxed)
            guard
                truncateScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                    .exchanged
            else { return true }
            checkpointer.async { [self] in
                truncateScheduled.store(false, ordering: .releasing)
                guard truncateRequested.exchange(false, ordering: .relaxed) else { return }
                checkpointTruncating()
            }
            return true
        }
        guard
            checkpointScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                .exchanged
        else { return false }
        checkpointer.async { [self] in
            do {
                try readerDatabase.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
                counters.withLock { $0.checkpoints += 1 }
                // The cycle ends with the writer's checkpoint of what was committed meanwhile.
                checkpointResidue.store(true, ordering: .releasing)
            } catch {
                checkpointScheduled.store(false, ordering: .releasing)
                logger.debug("checkpoint failed", metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
            }
        }
        return true
    }

    /// Copies the log into the database and truncates it (after deletions: their donations may still be in old
    /// frames).
    private func checkpointTruncating() {
        do {
            try readerDatabase.writeWithoutTransaction { db in
                // A truncating checkpoint waits for every reader while holding the writer's lock: behind a rebuild's
                // replay (a read of the whole log, seconds long) every commit then waited too (the soak's commit
                // latency reached 1.3 s). Without waiting, it checkpoints what it can; while a reader holds old
                // frames it is tried again after a later commit, until the log is truncated.
                sqlite3_busy_timeout(db.sqliteConnection, 0)
                defer { sqlite3_busy_timeout(db.sqliteConnection, Self.busyTimeoutMilliseconds) }
                do {
                    _ = try db.checkpoint(.truncate)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                    // Tried again after a later commit (the writer asks at most every half second).
                    truncateRequested.store(true, ordering: .relaxed)
                }
            }
        } catch {
            logger.debug("checkpoint failed", metadata: ["file": "\(path)", "error": "\(Self.describe(error))"])
        }
    }

    /// The busy timeout of the store's connections (GRDB's `busyMode = .timeout(10)`), in milliseconds.
    static let busyTimeoutMilliseconds: Int32 = 10_000

    /// An error's message without GRDB's SQL echo.
    static func describe(_ error: any Error) -> String {
        if let database = error as? DatabaseError { return database.message ?? "\(database.resultCode)" }
        return "\(error)"
    }
}
