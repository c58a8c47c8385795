public import SmartStackCore
import Synchronization

/// Where the service records events before it acknowledges them: the boundary to durable storage.
///
/// The engine's owner calls `enqueue` synchronously, inside its own isolation, so the log receives events in
/// exactly the order the engine applied them; the call is acknowledged only after the returned ticket's
/// `committed()` returns. The in-memory log commits at once; the SQLite store (``SQLiteEventLog``) commits
/// groups of calls in one transaction.
///
/// Besides events (publish marks among them) the log keeps, with every deletion, a snapshot of the engine right
/// after it: replaying the history without the deleted donations would not give the same revisions, so a
/// restart starts from that snapshot and replays only what came after.
public protocol EventLog: Sendable {
    /// Queues events behind everything queued before and returns a ticket for their commit.
    func enqueue(_ events: [EngineEvent]) -> CommitTicket
    /// Like `enqueue` of one event (a call's own), but an idle writer is not woken for it: the caller calls
    /// `flush()` once it has queued a burst, so the burst shares one commit instead of the first call taking a
    /// commit of its own.
    func enqueueHeld(_ event: EngineEvent) -> CommitTicket
    /// Starts committing what `enqueueHeld` queued (wakes the writer if it is idle).
    func flush()
    /// Stores that `app` belongs to `uid` (the access policy's first-uid claim), in the next commit: before the
    /// claiming call's own events are acknowledged. A stored claim is never replaced. Returns false when the log
    /// refuses records (storage failing): the claim is not stored, and the caller should not keep it.
    @discardableResult
    func recordOwner(app: AppID, uid: UInt32) -> Bool
    /// Removes the claim of `app` by `uid` (the call that made it failed), in the next commit, after the claim.
    func releaseOwner(app: AppID, uid: UInt32)
    /// Removes donations from the stored history (rows deleted, not flagged) and stores `engine`, the state right
    /// after their removal, as the snapshot, in the same transaction; returns a ticket for that transaction.
    func delete(donations: [(app: AppID, id: String)], engine: Engine) -> CommitTicket
    /// Queues a snapshot of `engine`, which has applied everything queued so far. It is encoded and written in
    /// the background; nothing waits for it.
    func snapshot(_ engine: Engine)
    /// Whether a snapshot is due (enough records or time since the last one); cheap enough to ask per call.
    var snapshotDue: Bool { get }
    /// Whether the log takes records now.
    var status: EventLogStatus { get }
    /// What the service starts from: the latest snapshot and the log's counts (not its events). After a failed
    /// commit, reading it is how the engine's owner rolls back to what is stored; the log then takes records again
    /// once storage works.
    func loadStart() throws(StoreFailure) -> StoredStart
    /// The sequence number of the last record queued (stored or not).
    var lastSequence: Int64 { get }
    /// Calls `body` with every stored event whose sequence number is after `after` and at most `through`, in
    /// order (publish marks included), one at a time. Safe on any thread, beside the writer: what deletions,
    /// retention and questions about the past replay, off the event loop.
    func replay(after: Int64, through: Int64, _ body: (EngineEvent) -> Void) throws(StoreFailure)
    /// The stored donation of `app` with this id, if there is one.
    func donation(app: AppID, id: String) throws(StoreFailure) -> Donation?
    /// A page of an app's stored donations in recorded order: at most `limit`, from `start`; `nil` when `start`
    /// is after an id that is not one of them.
    func donations(app: AppID, from start: DonationPageStart, limit: Int) throws(StoreFailure) -> DonationPage?
    /// Calls `body` with every stored donation (of `app` only, when given), in recorded order. Safe on any thread.
    func forEachDonation(app: AppID?, _ body: (Donation) -> Void) throws(StoreFailure)
    /// Calls `body` with the app and id of every stored donation (cheaper than decoding them). Safe on any thread.
    func forEachDonationKey(_ body: (_ app: String, _ id: String) -> Void) throws(StoreFailure)
    /// Numbers for `GetStatistics` (nil for a log that stores nothing).
    func statistics() -> EventLogStatistics?
    /// Commits everything queued, then closes; later calls fail.
    func close() async
}

extension EventLog {
    public func enqueueHeld(_ event: EngineEvent) -> CommitTicket { enqueue([event]) }
    public func flush() {}
    @discardableResult
    public func recordOwner(app: AppID, uid: UInt32) -> Bool { true }
    public func releaseOwner(app: AppID, uid: UInt32) {}
}

/// Whether an event log takes records.
public enum EventLogStatus: Sendable, Hashable {
    /// Records are taken and committed.
    case accepting
    /// A commit failed: nothing is taken until storage works again. `reloadNeeded` while the engine's owner has
    /// not yet rolled back to the stored state (by `loadStart()`).
    case failed(StoreFailure, reloadNeeded: Bool)
}

/// The promise of a commit: awaiting it returns once the events are stored, or throws why they are not.
public struct CommitTicket: Sendable {
    enum State: Sendable {
        case committed
        case failed(StoreFailure)
        case pending(CommitWaiter)
    }

    let state: State

    /// A ticket for events already stored.
    public static let committed = CommitTicket(state: .committed)

    /// A ticket for events that could not be stored.
    public static func failed(_ failure: StoreFailure) -> CommitTicket { CommitTicket(state: .failed(failure)) }

    /// A ticket that completes when `waiter` is resolved.
    public static func pending(_ waiter: CommitWaiter) -> CommitTicket { CommitTicket(state: .pending(waiter)) }

    /// The commit's outcome if it is known: `.success` once stored, `.failure` when it could not be; `nil` while
    /// the commit is pending.
    public var outcome: Result<Void, StoreFailure>? {
        switch state {
        case .committed: .success(())
        case .failed(let failure): .failure(failure)
        case .pending(let waiter): waiter.outcome
        }
    }

    /// The pending commit's waiter (`nil` when the outcome is already known): what callers register with to be
    /// told of the commit without suspending a task.
    public var waiter: CommitWaiter? {
        if case .pending(let waiter) = state { return waiter }
        return nil
    }

    /// Returns once the events are stored.
    public func committed() async throws(StoreFailure) {
        switch state {
        case .committed: return
        case .failed(let failure): throw failure
        case .pending(let waiter): try await waiter.wait()
        }
    }
}

/// Why events could not be stored (a full disk, an I/O error); the calls that carried them fail with it.
public struct StoreFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, naming the file where there is one.
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// One commit's outcome, awaited by every call whose events it holds.
///
/// Calls wait for it either by suspending (`wait()`) or by registering a callback (`whenResolved`), which the
/// service's event loop uses to be told once per commit instead of once per call.
public final class CommitWaiter: Sendable {
    public typealias Callback = @Sendable (StoreFailure?) -> Void

    private enum State {
        case waiting([Callback])
        case done(StoreFailure?)
    }

    private let state = Mutex<State>(.waiting([]))

    public init() {}

    /// Resolves the commit: runs every callback (on the calling thread), waking every waiter, with success (`nil`)
    /// or the failure.
    public func resolve(_ failure: StoreFailure?) {
        let callbacks = state.withLock { state -> [Callback] in
            guard case .waiting(let callbacks) = state else { return [] }
            state = .done(failure)
            return callbacks
        }
        for callback in callbacks { callback(failure) }
    }

    /// The outcome once resolved, `nil` while pending.
    public var outcome: Result<Void, StoreFailure>? {
        state.withLock { state in
            guard case .done(let failure) = state else { return nil }
            if let failure { return .failure(failure) }
            return .success(())
        }
    }

    /// Runs `callback` when the commit resolves: on the resolving thread (the store's writer), or at once on
    /// this thread when it already has.
    public func whenResolved(_ callback: @escaping Callback) {
        let done: StoreFailure?? = state.withLock { state in
            switch state {
            case .waiting(var callbacks):
                state = .done(nil)  // drops the stored array's reference, so appending does not copy it
                callbacks.append(callback)
                state = .waiting(callbacks)
                return .none
            case .done(let failure):
                return .some(failure)
            }
        }
        if let failure = done { callback(failure) }
    }

    /// Waits for the commit (not cancellable: an acknowledgement must not be abandoned half way).
    public func wait() async throws(StoreFailure) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                whenResolved { failure in
                    if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
                }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "\(error)")
        }
    }
}

/// A log in memory: every call commits at once, nothing survives the process (tests, and the service without a
/// state directory).
public final class InMemoryEventLog: EventLog {
    private let history = Mutex(MemoryHistory())

    public init() {}

    public func enqueue(_ events: [EngineEvent]) -> CommitTicket {
        history.withLock { $0.append(events) }
        return .committed
    }

    public func delete(donations: [(app: AppID, id: String)], engine: Engine) -> CommitTicket {
        history.withLock { $0.delete(donations) }
        return .committed
    }

    public func snapshot(_ engine: Engine) {}
    public var snapshotDue: Bool { false }
    public var status: EventLogStatus { .accepting }
    public func loadStart() throws(StoreFailure) -> StoredStart { history.withLock { $0.start } }
    public var lastSequence: Int64 { history.withLock { $0.lastSequence } }

    public func replay(after: Int64, through: Int64, _ body: (EngineEvent) -> Void) throws(StoreFailure) {
        // A copy, so `body` runs without the lock (it may take a while).
        history.withLock { $0 }.replay(after: after, through: through, body)
    }

    public func donation(app: AppID, id: String) throws(StoreFailure) -> Donation? {
        history.withLock { $0.donation(app: app, id: id) }
    }

    public func donations(app: AppID, from start: DonationPageStart, limit: Int) throws(StoreFailure)
        -> DonationPage?
    {
        history.withLock { $0.donations(app: app, from: start, limit: limit) }
    }

    public func forEachDonation(app: AppID?, _ body: (Donation) -> Void) throws(StoreFailure) {
        history.withLock { $0 }.forEachDonation { if app == nil || $0.app == app { body($0) } }
    }

    public func forEachDonationKey(_ body: (String, String) -> Void) throws(StoreFailure) {
        try forEachDonation(app: nil) { body($0.app.rawValue, $0.id) }
    }

    public func statistics() -> EventLogStatistics? { nil }
    public func close() async {}
}

/// A log that keeps its history in an ``InMemoryEventLog`` and commits its own way (the tests' log whose commits
/// wait until the test says so, the call-path benchmark's that commits at the end of the loop's turn): its history
/// is that log's, and it takes no snapshots.
public protocol MemoryBackedEventLog: EventLog {
    /// Where the history is kept and read from.
    var memory: InMemoryEventLog { get }
}

extension MemoryBackedEventLog {
    public func delete(donations: [(app: AppID, id: String)], engine: Engine) -> CommitTicket {
        memory.delete(donations: donations, engine: engine)
    }
    public func snapshot(_ engine: Engine) {}
    public var snapshotDue: Bool { false }
    public func loadStart() throws(StoreFailure) -> StoredStart { try memory.loadStart() }
    public var lastSequence: Int64 { memory.lastSequence }
    public func replay(after: Int64, through: Int64, _ body: (EngineEvent) -> Void) throws(StoreFailure) {
        try memory.replay(after: after, through: through, body)
    }
    public func donation(app: AppID, id: String) throws(StoreFailure) -> Donation? {
        try memory.donation(app: app, id: id)
    }
    public func donations(app: AppID, from start: DonationPageStart, limit: Int) throws(StoreFailure)
        -> DonationPage?
    {
        try memory.donations(app: app, from: start, limit: limit)
    }
    public func forEachDonation(app: AppID?, _ body: (Donation) -> Void) throws(StoreFailure) {
        try memory.forEachDonation(app: app, body)
    }
    public func forEachDonationKey(_ body: (String, String) -> Void) throws(StoreFailure) {
        try memory.forEachDonationKey(body)
    }
    public func statistics() -> EventLogStatistics? { nil }
    public func close() async {}
}
