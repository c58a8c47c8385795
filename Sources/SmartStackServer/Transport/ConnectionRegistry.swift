import NIOCore
import Synchronization

/// The open connections: counted for limits and statistics, and reachable so shutdown can stop their input.
public final class ConnectionRegistry: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        /// Open connections by the peer's uid, and each channel's uid.
        var perUID: [UInt32: Int] = [:]
        var uids: [ObjectIdentifier: UInt32] = [:]
        /// Bytes each connection holds in input not yet answered (unfinished frames), and their total.
        var input: [ObjectIdentifier: Int] = [:]
        var inputTotal = 0
        var closedForInput = 0
        var closedAtStop = 0
        var accepted = 0
        var rejected = 0
        var stopping = false
        /// Connections accepted from the kernel but not yet set up (waiting for the loop), by the peer's uid.
        var pending: [UInt32: Int] = [:]
    }

    private let state = Mutex(State())
    /// Calls read from every connection since start (counted without the lock: one per call, on the loop).
    private let calls = Atomic<Int>(0)
    /// The most connections served at once; more are closed as soon as they are accepted.
    public let limit: Int
    /// The most connections one uid may have open at once (`maxConnectionsPerUID`), so one user cannot take
    /// every connection from the others; `exempt` uids (root, the service's own) are not counted against it.
    public let perUIDLimit: Int
    private let exempt: Set<UInt32>
    /// The most bytes all connections together may hold in unfinished input (`maxInputBytes`).
    public let inputBudget: Int
    /// The most connections of one uid accepted from the kernel and waiting to be set up
    /// (`maxPendingConnectionsPerUID`); more are closed at once by the accepting thread. Connections wait in the
    /// order they came, so a uid that connects and closes in a loop put every other uid's new connection behind all
    /// of its own (the listen backlog full: a victim's connect waited 30-100 ms, on a debug build most failed).
    public let pendingPerUIDLimit: Int

    /// Why a connection was refused.
    enum Refusal: Sendable, Hashable {
        case limit(Int)
        case perUIDLimit(Int)
    }

    public init(
        limit: Int, perUIDLimit: Int = .max, pendingPerUIDLimit: Int = .max, exempt: Set<UInt32> = [],
        inputBudget: Int = .max
    ) {
        self.limit = limit
        self.inputBudget = inputBudget
        self.perUIDLimit = perUIDLimit
        self.pendingPerUIDLimit = pendingPerUIDLimit
        self.exempt = exempt
    }

    /// Counts a connection of `uid` just accepted from the kernel as waiting to be set up, unless its uid has
    /// `pendingPerUIDLimit` waiting already (then it is counted refused, and the caller closes it). Exempt uids are
    /// not counted. Each admitted one is `settled` once set up (or failed to be).
    func admitPending(uid: UInt32) -> Bool {
        guard !exempt.contains(uid) else { return true }
        return state.withLock { state in
            guard state.pending[uid, default: 0] < pendingPerUIDLimit else {
                state.rejected += 1
                return false
            }
            state.pending[uid, default: 0] += 1
            return true
        }
    }

    /// A connection `admitPending` counted is set up (or could not be): it no longer waits.
    func settlePending(uid: UInt32) {
        guard !exempt.contains(uid) else { return }
        state.withLock { state in
            let left = state.pending[uid, default: 1] - 1
            state.pending[uid] = left > 0 ? left : nil
        }
    }

    /// Connections open now.
    public var openCount: Int { state.withLock { $0.open.count } }
    /// Connections accepted since start.
    public var acceptedCount: Int { state.withLock { $0.accepted } }
    /// Connections refused because the limit was reached or the service was stopping.
    public var rejectedCount: Int { state.withLock { $0.rejected } }
    /// Connections closed because all connections' unfinished input went over the input budget.
    public var closedForInputCount: Int { state.withLock { $0.closedForInput } }
    /// Bytes held in unfinished input over all connections now.
    public var inputBytes: Int { state.withLock { $0.inputTotal } }
    /// Calls received since start, over all connections (answered or still being answered).
    public var callCount: Int { calls.load(ordering: .relaxed) }

    /// Counts one call read from a connection.
    func countCall() { calls.wrappingAdd(1, ordering: .relaxed) }

    /// Records that `channel` now holds `bytes` of input not yet answered. When all connections together hold more
    /// than `inputBudget`, the connection holding the most is dropped from the count and returned, to be closed
    /// (it may be `channel` itself), and counted in `closedForInputCount`.
    func holdInput(_ channel: any Channel, bytes: Int) -> (any Channel)? {
        state.withLock { state -> (any Channel)? in
            let id = ObjectIdentifier(channel)
            let old = state.input[id] ?? 0
            guard bytes != old else { return nil }
            state.inputTotal += bytes - old
            state.input[id] = bytes > 0 ? bytes : nil
            guard state.inputTotal > inputBudget,
                let (largest, held) = state.input.max(by: { $0.value < $1.value })
            else { return nil }
            state.input[largest] = nil
            state.inputTotal -= held
            state.closedForInput += 1
            return state.open[largest]
        }
    }

    /// The connections kept for the exempt uids (root, the service's own): a sixteenth of `limit` (64 of 1,024), so
    /// that callers who fill the rest (four uids at `maxConnectionsPerUID` each) cannot lock the administrator out;
    /// at least one under 16 (a kiosk's small limit: with none kept, one ordinary uid holding every connection locked
    /// root out), none for a limit of 1.
    public var reservedForExempt: Int { exempt.isEmpty || limit < 2 ? 0 : max(1, limit / 16) }

    /// Admits a new connection of `uid` unless a limit is reached or the service is stopping; returns why not.
    func admit(_ channel: any Channel, uid: UInt32) -> Refusal? {
        state.withLock { state in
            let counted = !exempt.contains(uid)
            // Other uids together get what is not kept for the exempt ones: the limit they reached.
            let reached = counted ? limit - reservedForExempt : limit
            guard !state.stopping, state.open.count < reached else {
                state.rejected += 1
                return .limit(reached)
            }
            if counted {
                guard state.perUID[uid, default: 0] < perUIDLimit else {
                    state.rejected += 1
                    return .perUIDLimit(perUIDLimit)
                }
                state.perUID[uid, default: 0] += 1
                state.uids[ObjectIdentifier(channel)] = uid
            }
            state.accepted += 1
            state.open[ObjectIdentifier(channel)] = channel
            return nil
        }
    }

    func remove(_ channel: any Channel) {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            state.open.removeValue(forKey: id)
            if let held = state.input.removeValue(forKey: id) { state.inputTotal -= held }
            if let uid = state.uids.removeValue(forKey: id) {
                let left = state.perUID[uid, default: 1] - 1
                state.perUID[uid] = left > 0 ? left : nil
            }
        }
    }

    /// Stops reading from every connection: each answers what it already received, then closes. A connection still
    /// open `grace` later (a client that does not read its replies, which would otherwise hold the service's stop
    /// until systemd kills it) is closed, its unread replies dropped; the number so closed is counted.
    func closeInputs(closingAllAfter grace: TimeAmount) {
        let channels = state.withLock { state in
            state.stopping = true
            return Array(state.open.values)
        }
        for channel in channels {
            // On the channel's loop: a channel accepted just now may not be registered yet, and closing the input
            // of one that is not (NIO asserts it is) would crash; such a channel has read nothing, so it closes.
            channel.eventLoop.execute {
                if channel.isActive { channel.close(mode: .input, promise: nil) } else { channel.close(promise: nil) }
            }
            channel.eventLoop.scheduleTask(in: grace) { [self] in
                guard channel.isActive else { return }
                state.withLock { $0.closedAtStop += 1 }
                channel.close(promise: nil)
            }
        }
    }

    /// Connections closed at the stop because they had not finished `grace` after their input was closed.
    public var closedAtStopCount: Int { state.withLock { $0.closedAtStop } }
}
