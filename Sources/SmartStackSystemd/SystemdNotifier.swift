internal import CSystemd
public import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tells the service manager about readiness, status, shutdown and liveness (`sd_notify(3)`).
///
/// Get one with ``fromEnvironment()`` in the service; tests and tools pass a socket path. Every
/// method is a no-op returning normally when the notifier is disabled (no `NOTIFY_SOCKET`), so the
/// service calls them unconditionally. Failures are thrown as `Errno` and are never worth stopping
/// the service for: callers log them and go on.
public struct SystemdNotifier: Sendable {
    /// Where the notifications go.
    enum Destination: Sendable, Hashable {
        /// Nowhere: not started by a service manager that wants notifications.
        case none
        /// libsystemd's `sd_notify()`, which reads `$NOTIFY_SOCKET` itself (path, abstract or vsock).
        case environment
        /// A datagram socket at this path (a leading `@` means the abstract namespace).
        case socket(String)
    }

    let destination: Destination

    /// The watchdog timeout systemd enforces (`WatchdogSec=`), or `nil` when the watchdog is off.
    ///
    /// Ping with ``watchdog()`` at least this often; ``watchdogPingInterval`` is the usual half.
    public let watchdogInterval: Duration?

    /// A notifier for a datagram socket at `socketPath`, as systemd passes it in `NOTIFY_SOCKET`.
    ///
    /// A path starting with `@` names a socket in the abstract namespace. `watchdogInterval` is
    /// what ``fromEnvironment()`` would read from `WATCHDOG_USEC`.
    public init(socketPath: String, watchdogInterval: Duration? = nil) {
        self.destination = .socket(socketPath)
        self.watchdogInterval = watchdogInterval
    }

    init(destination: Destination, watchdogInterval: Duration?) {
        self.destination = destination
        self.watchdogInterval = watchdogInterval
    }

    /// A notifier that sends nothing, for a service run by hand.
    public static let disabled = SystemdNotifier(destination: .none, watchdogInterval: nil)

    /// The notifier systemd set up for this process: `NOTIFY_SOCKET`, and the watchdog from
    /// `WATCHDOG_USEC` when `WATCHDOG_PID` is unset or names this process (`sd_watchdog_enabled(3)`).
    ///
    /// The environment is left in place (libsystemd reads it on each send); smartstackd starts no
    /// children that could inherit it. An unparsable `WATCHDOG_USEC` counts as no watchdog.
    public static func fromEnvironment() -> SystemdNotifier {
        var microseconds: UInt64 = 0
        let watchdog: Duration? =
            sd_watchdog_enabled(0, &microseconds) > 0 && microseconds > 0 ? .microseconds(microseconds) : nil
        let hasSocket = getenv("NOTIFY_SOCKET").map { $0.pointee != 0 } ?? false
        return SystemdNotifier(destination: hasSocket ? .environment : .none, watchdogInterval: watchdog)
    }

    /// Whether notifications go anywhere (`NOTIFY_SOCKET` was set, or a socket path was given).
    public var isEnabled: Bool {
        destination != .none
    }

    /// How often to call ``watchdog()``: half of ``watchdogInterval``, as `sd_watchdog_enabled(3)`
    /// recommends, or `nil` when the watchdog is off.
    public var watchdogPingInterval: Duration? {
        watchdogInterval.map { $0 / 2 }
    }

    /// `READY=1`: startup finished (socket bound, state loaded); with an optional `STATUS=`.
    public func ready(status: String? = nil) throws(Errno) {
        try send(["READY=1"] + Self.statusLine(status))
    }

    /// `STATUS=`: a one-line description of the service's state, shown by `systemctl status`.
    ///
    /// Newlines would end the assignment, so each control character becomes a space.
    public func status(_ text: String) throws(Errno) {
        try send(Self.statusLine(text))
    }

    /// `STOPPING=1`: shutdown began; with an optional `STATUS=`.
    public func stopping(status: String? = nil) throws(Errno) {
        try send(["STOPPING=1"] + Self.statusLine(status))
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (what `Type=notify-reload` expects); follow with ``ready(status:)``.
    public func reloading(status: String? = nil) throws(Errno) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        try send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)"] + Self.statusLine(status))
    }

    /// `WATCHDOG=1`: the service is alive. Send only from a path that proves it (the engine answered).
    public func watchdog() throws(Errno) {
        try send(["WATCHDOG=1"])
    }

    /// `EXTEND_TIMEOUT_USEC=`: ask for more time to start or stop than `TimeoutStartSec=`/`TimeoutStopSec=`.
    public func extendTimeout(by duration: Duration) throws(Errno) {
        try send(["EXTEND_TIMEOUT_USEC=\(Self.microseconds(duration))"])
    }

    /// Sends raw `NAME=value` assignments, one per line, as one datagram.
    public func send(_ assignments: [String]) throws(Errno) {
        guard !assignments.isEmpty else { return }
        let state = assignments.joined(separator: "\n")
        switch destination {
        case .none:
            return
        case .environment:
            let result = sd_notify(0, state)
            if result < 0 { throw Errno(systemdReturn: result) }
        case .socket(let path):
            try DatagramSender.send(Array(state.utf8), to: path)
        }
    }

    private static func statusLine(_ status: String?) -> [String] {
        guard let status else { return [] }
        var oneLine = String.UnicodeScalarView()
        for scalar in status.unicodeScalars {
            oneLine.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        return ["STATUS=\(String(oneLine))"]
    }

    private static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
