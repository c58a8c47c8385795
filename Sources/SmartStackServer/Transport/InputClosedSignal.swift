import Synchronization

/// Tells a connection's stream that the client closed its side, so the stream can end.
final class InputClosedSignal: Sendable {
    private enum State {
        case open([UInt64: CheckedContinuation<Void, Never>], nextID: UInt64)
        case closed
    }

    private let state = Mutex<State>(.open([:], nextID: 0))

    /// Marks the input closed and wakes every waiter.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .open(let waiters, _) = state else { return [] }
            state = .closed
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the input is closed or the task is cancelled.
    func wait() async {
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
