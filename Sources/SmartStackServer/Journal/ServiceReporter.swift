public import SmartStackCore

/// Why a client was turned away.
public enum ClientRejection: Sendable, Hashable {
    /// The connection limit (`maxConnections`) was reached; the connection was closed on accept.
    case connectionLimit(Int)
    /// The caller's uid had `maxConnectionsPerUID` connections open; the connection was closed on accept.
    case connectionsPerUID(Int)
    /// The caller's uid had `maxPendingConnectionsPerUID` connections accepted and not yet set up (it connects faster
    /// than the service sets its connections up); the connection was closed on accept.
    case pendingConnectionsPerUID(Int)
    /// The access policy refused a call: the method, and why.
    case permissionDenied(method: String, reason: String)
}

/// Where the service reports what it decided and whom it refused: the journal in the daemon
/// (``ServiceJournal``), nothing or a recorder in tests.
///
/// Called from the engine's owner (inside its isolation) and from connections, so an implementation must
/// return at once: no I/O, no waiting.
public protocol ServiceReporter: Sendable {
    /// Decisions the engine published and the effects it produced, in order (from `EngineHost.fanOut`).
    func published(decisions: [Decision], effects: [EngineEffect])
    /// A client was refused.
    func clientRejected(_ peer: PeerCredentials, _ rejection: ClientRejection)
    /// Entries dropped so far because the journal's queue was full (`nil` when there is no such queue).
    var droppedEntries: Int? { get }
}

/// A reporter that reports nothing (tests, tools).
public struct SilentReporter: ServiceReporter {
    public init() {}
    public func published(decisions: [Decision], effects: [EngineEffect]) {}
    public func clientRejected(_ peer: PeerCredentials, _ rejection: ClientRejection) {}
    public var droppedEntries: Int? { nil }
}
