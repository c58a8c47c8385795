import NIOCore
import Synchronization

/// The open connections: counted for limits and statistics, and reachable so shutdown can stop their input.
public final class ConnectionRegistry: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var accepted = 0
        var rejected = 0
        var stopping = false
    }

    private let state = Mutex(State())
    /// The most connections served at once; more are closed as soon as they are accepted.
    public let limit: Int

    public init(limit: Int) { self.limit = limit }

    /// Connections open now.
    public var openCount: Int { state.withLock { $0.open.count } }
    /// Connections accepted since start.
    public var acceptedCount: Int { state.withLock { $0.accepted } }
    /// Connections refused because the limit was reached or the service was stopping.
    public var rejectedCount: Int { state.withLock { $0.rejected } }

    /// Admits a new connection unless the limit is reached or the service is stopping.
    func admit(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.stopping, state.open.count < limit else {
                state.rejected += 1
                return false
            }
            state.accepted += 1
            state.open[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Stops reading from every connection: each answers what it already received, then closes.
    func closeInputs() {
        let channels = state.withLock { state in
            state.stopping = true
            return Array(state.open.values)
        }
        for channel in channels { channel.close(mode: .input, promise: nil) }
    }
}
