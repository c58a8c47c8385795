public import SmartStackCore
import Synchronization

/// Where the service records events before it acknowledges them: the boundary to durable storage.
///
/// The engine's owner calls `enqueue` synchronously, inside its own isolation, so the log receives events in
/// exactly the order the engine applied them; the call is acknowledged only after the returned ticket's
/// `committed()` returns. The in-memory log commits at once; the SQLite store commits groups of calls.
public protocol EventLog: Sendable {
    /// Queues events behind everything queued before and returns a ticket for their commit.
    func enqueue(_ events: [EngineEvent]) -> CommitTicket
    /// Removes donations from the stored history (rows deleted, not flagged) and returns a ticket.
    func delete(donations: [(app: AppID, id: String)]) -> CommitTicket
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
public final class CommitWaiter: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Void, any Error>])
        case done(StoreFailure?)
    }

    private let state = Mutex<State>(.waiting([]))

    public init() {}

    /// Resolves the commit: wakes every waiter with success (`nil`) or the failure.
    public func resolve(_ failure: StoreFailure?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(failure)
            return waiters
        }
        for waiter in waiters {
            if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
        }
    }

    /// Waits for the commit (not cancellable: an acknowledgement must not be abandoned half way).
    func wait() async throws(StoreFailure) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: StoreFailure?? = state.withLock { state in
                    switch state {
                    case .waiting(var waiters):
                        waiters.append(continuation)
                        state = .waiting(waiters)
                        return .none
                    case .done(let failure):
                        return .some(failure)
                    }
                }
                guard let outcome = immediate else { return }
                if let failure = outcome { continuation.resume(throwing: failure) } else { continuation.resume() }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "\(error)")
        }
    }
}

/// The log of this service: keeps nothing beyond the engine's own history, commits at once.
public struct InMemoryEventLog: EventLog {
    public init() {}
    public func enqueue(_ events: [EngineEvent]) -> CommitTicket { .committed }
    public func delete(donations: [(app: AppID, id: String)]) -> CommitTicket { .committed }
}
