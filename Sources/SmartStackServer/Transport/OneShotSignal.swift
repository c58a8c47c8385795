import Synchronization

/// A signal that fires once (a client closed its side, a stream ended) and wakes everyone waiting for it.
public final class OneShotSignal: Sendable {
    private enum State {
        case open([UInt64: CheckedContinuation<Void, Never>], nextID: UInt64)
        case closed
    }

    private let state = Mutex<State>(.open([:], nextID: 0))

    public init() {}

    /// Fires the signal and wakes every waiter (later calls do nothing).
    public func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .open(let waiters, _) = state else { return [] }
            state = .closed
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal fired, or when the task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> UInt64? in
            guard case .open(let waiters, let next) = state else { return nil }
            state = .open(waiters, nextID: next + 1)
            return next
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .open(var waiters, let next) = state, !Task.isCancelled else { return true }
                    waiters[id] = continuation
                    state = .open(waiters, nextID: next)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .open(var waiters, let next) = state else { return nil }
                let waiter = waiters.removeValue(forKey: id)
                state = .open(waiters, nextID: next)
                return waiter
            }
            waiter?.resume()
        }
    }
}
