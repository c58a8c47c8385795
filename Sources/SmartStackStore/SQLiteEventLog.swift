import Dispatch
import GRDB
public import Logging
public import SmartStackCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The event log in SQLite: write-ahead log, one writer thread, group commit.
///
/// Calls queue their records in the engine's order (`enqueue`, inside the engine owner's isolation) and wait
/// for the transaction holding them. The writer takes everything queued when it is free and commits it as one
/// transaction, so concurrent calls share commits and a lone call is committed at once. After a failed commit
/// (a full disk) the log takes nothing until its owner re-read the stored state (`load()`) and a test write
/// succeeds; see docs/storage.md.
public final class SQLiteEventLog: EventLog {
    /// The database file's name in the state directory.
    public static let fileName = StoreSchema.fileName
    /// The database file.
    public let path: String
    let options: StoreOptions
    let logger: Logger
    /// The writer's connection (the only one that writes records).
    let writerDatabase: DatabaseQueue
    /// Loading, statistics and checkpoints.
    let readerDatabase: DatabaseQueue
    /// Point lookups and pages of donations (on the engine's loop, never held long).
    let queryDatabase: DatabaseQueue
    let lock: DirectoryLock
    let state = Mutex(LogState())
    let counters = Mutex(LogCounters())
    let due = Atomic<Bool>(false)
    /// Wakes the writer thread.
    let wake = DispatchSemaphore(value: 0)
    /// Signalled once by the writer thread when it has stopped.
    let writerStopped = DispatchSemaphore(value: 0)
    /// Encodes background snapshots, off the writer and off the engine's owner.
    let encoder = DispatchQueue(label: "smartstackd.store.snapshot", qos: .utility)
    /// Runs checkpoints on the reader connection.
    let checkpointer = DispatchQueue(label: "smartstackd.store.checkpoint", qos: .utility)
    /// A copying checkpoint's cycle is under way: queued or running off the writer thread, or its residue waiting for
    /// the writer.
    let checkpointScheduled = Atomic<Bool>(false)
    /// Whether the next checkpoint truncates the log (after deletions).
    let truncateRequested = Atomic<Bool>(false)
    /// A truncating checkpoint is queued.
    let truncateScheduled = Atomic<Bool>(false)
    /// Set when a checkpoint off the writer thread left frames behind (the commits made while it ran): the writer
    /// checkpoints them itself after its next commit, so the log can start again from its beginning.
    let checkpointResidue = Atomic<Bool>(false)
    let writer: StoreWriter

    /// Opens (or creates) `smartstack.sqlite` in `directory` and starts the writer.
    ///
    /// Refuses, naming the file and changing nothing, a file that is not a smartstackd database or is damaged, a
    /// database of a newer schema, a directory it cannot write and a database another process holds.
    public static func open(
        directory: String, options: StoreOptions = StoreOptions(), logger: Logger
    ) throws(StoreOpenError) -> SQLiteEventLog {
        let path = directory.hasSuffix("/") ? directory + StoreSchema.fileName : directory + "/" + StoreSchema.fileName
        let lock = try DirectoryLock.acquire(directory: directory, database: path)
        do {
            try StoreFiles.checkHeader(path)
            try StoreFiles.createPrivate(path)
            var configuration = Configuration()
            configuration.label = "smartstackd.store"
            configuration.busyMode = .timeout(10)
            configuration.foreignKeysEnabled = false
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY")
            }
            let writer = try DatabaseQueue(path: path, configuration: configuration)
            // Check before anything is written: a foreign or newer file is refused untouched.
            do {
                try writer.inDatabase { db in try StoreSchema.check(db, path: path) }
            } catch let error as StoreOpenError {
                throw error
            } catch {
                throw StoreOpenError.reading(path: path, error)
            }
            try writer.inDatabase { db in
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode?.lowercased() == "wal" else {
                    throw StoreOpenError(
                        .failed, path: path, reason: "cannot use write-ahead logging (mode \(mode ?? "?"))")
                }
                let synchronous = options.durability == .power ? "FULL" : "NORMAL"
                try db.execute(sql: "PRAGMA synchronous = \(synchronous); PRAGMA wal_autocheckpoint = 0")
                // When the log starts again from its beginning, a file grown larger (by a backlog, or a reader
                // holding old frames) is cut back to this size.
                try db.execute(sql: "PRAGMA journal_size_limit = \(options.writeAheadLogBytesKept)")
                if let pages = options.maximumPages { try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
            }
            let migrator = StoreSchema.migrator
            let pending = try writer.read { db in try migrator.appliedIdentifiers(db) }
            try migrator.migrate(writer)
            // An upgrade's migrations, in the journal (before, nothing said the file was changed in place, after
            // which an older build refuses it). A new file's are not news.
            let applied = migrator.migrations.filter { !pending.contains($0) }
            if !pending.isEmpty, !applied.isEmpty {
                logger.notice(
                    "migrated the state database",
                    metadata: [
                        "file": "\(path)", "migrations": "\(applied.joined(separator: ","))",
                        "schema": "\(StoreSchema.version)",
                    ])
            }
            var readerConfiguration = configuration
            readerConfiguration.label = "smartstackd.store.reader"
            // The reader and the query connection serve scans and the odd lookup off the loop: a smaller page cache
            // than the writer's (SQLite's default, 2 MiB) each, which is resident memory once filled (after the
            // writer's setup, which GRDB runs first: setups accumulate).
            readerConfiguration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -512") }
            let reader = try DatabaseQueue(path: path, configuration: readerConfiguration)
            var queryConfiguration = readerConfiguration
            queryConfiguration.label = "smartstackd.store.query"
            queryConfiguration.readonly = true
            let query = try DatabaseQueue(path: path, configuration: queryConfiguration)
            let log = SQLiteEventLog(
                path: path, options: options, logger: logger, writer: writer, reader: reader, query: query, lock: lock)
            _ = try reader.read { db in try log.loadKeyTail(db) }
            log.start()
            return log
        } catch let error as StoreOpenError {
            lock.release()
            throw error
        } catch {
            lock.release()
            throw StoreOpenError.reading(path: path, error)
        }
    }

    init(
        path: String, options: StoreOptions, logger: Logger, writer: DatabaseQueue, reader: DatabaseQueue,
        query: DatabaseQueue, lock: DirectoryLock
    ) {
        self.path = path
        self.options = options
        self.logger = logger
        self.writerDatabase = writer
        self.readerDatabase = reader
        self.queryDatabase = query
        self.lock = lock
        self.writer = StoreWriter(path: path)
        state.withLock { $0.lastSnapshotQueued = Monotonic.nanoseconds() }
    }

    private func start() {
        DispatchQueue(label: "smartstackd.store.writer", qos: .userInitiated).async { [self] in runWriter() }
    }

    // MARK: EventLog

    public func enqueue(_ events: [EngineEvent]) -> CommitTicket {
        queue(events.count, wake: true) { state in
            for event in events { state.appendRecord(event) }
        }
    }

    public func enqueueHeld(_ event: EngineEvent) -> CommitTicket {
        queue(1, wake: false) { state in state.appendRecord(event) }
    }

    public func delete(donations: [(app: AppID, id: String)], engine: Engine) -> CommitTicket {
        queue(0, wake: true) { state in
            state.pending.append(.delete(donations, engine: engine, through: state.nextSequence - 1))
            state.recordsSinceSnapshot = 0
            state.lastSnapshotQueued = Monotonic.nanoseconds()
            due.store(false, ordering: .relaxed)
        }
    }

    public func snapshot(_ engine: Engine) {
        let queued = state.withLock { state -> (through: Int64, epoch: Int)? in
            guard state.refusal == nil || state.phaseIsClosing else { return nil }
            state.recordsSinceSnapshot = 0
            state.lastSnapshotQueued = Monotonic.nanoseconds()
            due.store(false, ordering: .relaxed)
            return (state.nextSequence - 1, state.epoch)
        }
        guard let queued else { return }
        encoder.async { [self] in
            let snapshot = StoredSnapshot(through: queued.through, taken: Wallclock.now(), bytes: engine.snapshot())
            let wakeWriter = state.withLock { state -> Bool in
                guard state.epoch == queued.epoch, state.refusal == nil || state.phaseIsClosing else { return false }
                state.pending.append(.snapshot(snapshot))
                defer { state.writerIdle = false }
                return state.writerIdle
            }
            if wakeWriter { wake.signal() }
        }
    }

    public var snapshotDue: Bool { due.load(ordering: .relaxed) }

    public var status: EventLogStatus {
        state.withLock { state in
            switch state.phase {
            case .open: .accepting
            case .failed(let failure, let reloaded): .failed(failure, reloadNeeded: !reloaded)
            case .closing, .closed: .failed(StoreFailure(reason: "the event log is closed"), reloadNeeded: false)
            }
        }
    }

    public func statistics() -> EventLogStatistics? {
        let counts = counters.withLock { $0 }
        return EventLogStatistics(
            storedEvents: counts.storedEvents, storedDonations: counts.storedDonations,
            databaseBytes: StoreFiles.size(path) + StoreFiles.size(path + "-wal"), lastSnapshot: counts.lastSnapshot,
            commits: counts.commits, committedCalls: counts.committedCalls, latency: counts.latencies.summary)
    }

    /// How many times the writer held a commit back for company: after a commit shared by several calls, while
    /// fewer calls wait than it held, for at most `StoreOptions.commitDelayMicroseconds` (never after a lone call).
    public var companyWaits: Int { counters.withLock { $0.companyWaits } }

    /// How many checkpoints of the write-ahead log the checkpointer finished, each requested by a commit after
    /// `StoreOptions.checkpointRecords` records or `checkpointBytes` bytes since the last one.
    public var checkpoints: Int { counters.withLock { $0.checkpoints } }

    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [self] in
                closeNow()
                continuation.resume()
            }
        }
    }

    /// Commits what is queued (background snapshots included), stops the writer, checkpoints and closes.
    public func closeNow() {
        encoder.sync {}
        let wakeWriter = state.withLock { state -> Bool? in
            switch state.phase {
            case .closing, .closed: return nil
            case .open, .failed: break
            }
            state.phase = .closing
            defer { state.writerIdle = false }
            return state.writerIdle
        }
        guard let wakeWriter else { return }
        if wakeWriter { wake.signal() }
        writerStopped.wait()
        checkpointer.sync {}
        do {
            try writerDatabase.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        } catch {
            logger.warning("final checkpoint failed", metadata: ["file": "\(path)", "error": "\(error)"])
        }
        try? queryDatabase.close()
        try? readerDatabase.close()
        try? writerDatabase.close()
        state.withLock { $0.phase = .closed }
        lock.release()
    }

    @discardableResult
    public func recordOwner(app: AppID, uid: UInt32) -> Bool {
        let ticket = queue(0, wake: true) { state in state.pending.append(.owner(app, uid)) }
        if case .failure? = ticket.outcome { return false }
        return true
    }

    public func releaseOwner(app: AppID, uid: UInt32) {
        _ = queue(0, wake: true) { state in state.pending.append(.ownerReleased(app, uid)) }
    }

    public func flush() {
        let wakeWriter = state.withLock { state -> Bool in
            guard state.writerIdle, !state.pending.isEmpty else { return false }
            state.writerIdle = false
            return true
        }
        if wakeWriter { wake.signal() }
    }

    /// Queues items for the next commit, counting `records` toward the snapshot policy; returns its ticket.
    /// `wake`: wake the writer if it is idle (otherwise `flush()` will).
    private func queue(_ records: Int, wake: Bool, _ add: (inout LogState) -> Void) -> CommitTicket {
        let now = Monotonic.nanoseconds()
        let (ticket, wakeWriter) = state.withLock { state -> (CommitTicket, Bool) in
            if let refusal = state.refusal { return (.failed(refusal), false) }
            add(&state)
            state.pendingCalls.append(now)
            state.recordsSinceSnapshot += records
            if state.recordsSinceSnapshot >= options.snapshotEveryRecords
                || (state.recordsSinceSnapshot > 0
                    && Double(now &- state.lastSnapshotQueued) / 1e9 >= options.snapshotEverySeconds)
            {
                due.store(true, ordering: .relaxed)
            }
            guard wake else { return (.pending(state.waiter), false) }
            defer { state.writerIdle = false }
            return (.pending(state.waiter), state.writerIdle)
        }
        if wakeWriter { self.wake.signal() }
        return ticket
    }
}

extension LogState {
    var phaseIsClosing: Bool {
        if case .closing = phase { return true }
        return false
    }
}
