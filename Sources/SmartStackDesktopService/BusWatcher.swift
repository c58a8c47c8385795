import SmartStackCore
public import SmartStackDesktop
import SmartStackSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The sd-bus side of smartstack-desktop, kept thin: subscribes to the service manager and to logind, turns
/// `JobRemoved` of `app-*` units into ``UnitStart``s, passes on logind's `Unlock` and `LockedHint` of the
/// sessions it listens to and, on the user bus, GNOME Shell's `OverviewActive` (the tracker decides which are
/// looks), and reconnects when a bus goes away. Runs on a
/// thread of its own (sd-bus connections are single-threaded); everything it sees goes to the agent through
/// `output`.
public final class BusWatcher: Sendable {
    let bus: DesktopConfiguration.Bus
    let session: String
    let overview: Bool
    let output: AsyncStream<DesktopInput>.Continuation

    static let systemd = "org.freedesktop.systemd1"
    static let managerPath = "/org/freedesktop/systemd1"
    static let manager = "org.freedesktop.systemd1.Manager"
    static let unitInterface = "org.freedesktop.systemd1.Unit"
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let sessionPrefix = "/org/freedesktop/login1/session"
    static let shell = "org.gnome.Shell"
    static let shellPath = "/org/gnome/Shell"
    static let properties = "org.freedesktop.DBus.Properties"

    /// `session`: the logind session id whose unlocks count; empty for any. `overview`: whether to watch GNOME
    /// Shell's overview (on the user bus only).
    public init(
        bus: DesktopConfiguration.Bus, session: String, overview: Bool = true,
        output: AsyncStream<DesktopInput>.Continuation
    ) {
        self.bus = bus
        self.session = session
        self.overview = overview
        self.output = output
    }

    /// The first wait before connecting again, and the longest: it doubles while the bus cannot be reached.
    static let firstRetry = 1.0
    static let longestRetry = 60.0

    /// Watches until the process ends, reconnecting after a lost connection: a second after one that worked, then
    /// twice as long after each attempt that fails, up to a minute. A failure is reported when it is new (the
    /// first, or another reason than the last), so a machine with no user bus gets one warning, not one a second.
    public func run() {
        var wait = Self.firstRetry
        var reported: String?
        while true {
            var connected = false
            do throws(BusError) {
                try watch(connected: &connected)
            } catch {
                let reason = Self.explained("\(error)", bus: bus, environment: Self.busEnvironment())
                if connected || reason != reported {
                    output.yield(connected ? .busLost(reason) : .busUnavailable(reason, retry: wait))
                    reported = reason
                }
            }
            if connected {
                wait = Self.firstRetry
                reported = nil
            }
            usleep(UInt32(wait * 1_000_000))
            if !connected { wait = min(Self.longestRetry, wait * 2) }
        }
    }

    /// sd-bus's reason with what it means: no user bus address in the environment is "No medium found" (ENOMEDIUM),
    /// and a bus with no systemd manager on it fails the activation of org.freedesktop.systemd1.
    static func explained(_ reason: String, bus: DesktopConfiguration.Bus, environment: [String: String]) -> String {
        if bus == .user, environment["DBUS_SESSION_BUS_ADDRESS"] == nil, environment["XDG_RUNTIME_DIR"] == nil {
            return reason + " (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set: run it in the user's "
                + "session, as its user unit does, or watch the system's service manager with --system)"
        }
        if reason.contains("org.freedesktop.systemd1") {
            return reason + " (no systemd service manager on this bus: the desktop's apps are not started as "
                + "systemd units here)"
        }
        return reason
    }

    /// The variables sd-bus finds the user bus by.
    static func busEnvironment() -> [String: String] {
        var found: [String: String] = [:]
        for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
            if let value = getenv(name) { found[name] = String(cString: value) }
        }
        return found
    }

    private func watch(connected: inout Bool) throws(BusError) {
        let manager = try BusConnection(bus == .user ? .user : .system)
        try manager.call(
            destination: Self.systemd, path: Self.managerPath, interface: Self.manager, member: "Subscribe"
        )
        .ignore()
        try manager.addMatch(
            "type='signal',sender='\(Self.systemd)',path='\(Self.managerPath)',interface='\(Self.manager)',member='JobRemoved'"
        )
        // logind is on the system bus. Its sender is not matched: the signals are checked by path and content,
        // and a test can send them with busctl emit.
        let login: BusConnection? = bus == .system ? manager : try? BusConnection(.system)
        try login?.addMatch("type='signal',interface='\(Self.sessionInterface)',member='Unlock'")
        try login?.addMatch(
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='\(Self.sessionInterface)'"
        )
        // GNOME Shell's overview, on the session bus: only what the owner of org.gnome.Shell sends (the bus
        // matches the sender by the name's current owner).
        if bus == .user, overview {
            try manager.addMatch(
                "type='signal',sender='\(Self.shell)',path='\(Self.shellPath)',interface='\(Self.properties)',member='PropertiesChanged',arg0='\(Self.shell)'"
            )
        }
        connected = true
        output.yield(.busConnected(bus == .user ? "user" : "system"))
        if bus == .user, overview { overviewNow(manager) }
        try catchUp(manager)
        let connections = login.map { $0 === manager ? [manager] : [manager, $0] } ?? [manager]
        while true {
            for connection in connections {
                while let message = try connection.nextPending() {
                    try handle(message, manager: manager, login: login)
                }
            }
            try BusConnection.wait(connections, timeout: .seconds(5))
        }
    }

    /// Units already active when (re)connecting: launches made while disconnected are not lost (the tracker
    /// recognises the ones it counted by their invocation id).
    private func catchUp(_ manager: BusConnection) throws(BusError) {
        let reply = try manager.call(
            destination: Self.systemd, path: Self.managerPath, interface: Self.manager, member: "ListUnits")
        var active: [String] = []
        try reply.enter("a", "(ssssssouso)")
        while try reply.enter("r", "ssssssouso") {
            let name = try reply.readString()
            try reply.skip("ss")
            let state = try reply.readString()
            try reply.skip("ssouso")
            try reply.exit()
            if name.hasPrefix("app-"), state == "active" { active.append(name) }
        }
        try reply.exit()
        let starts = active.compactMap { started($0, manager: manager) }.sorted { $0.date < $1.date }
        for start in starts { output.yield(.unitStarted(start)) }
    }

    private func handle(_ message: BusMessage, manager: BusConnection, login: BusConnection?) throws(BusError) {
        switch (message.interface, message.member) {
        case (Self.manager, "JobRemoved"):
            _ = try message.readUInt32()
            _ = try message.readString("o")
            let unit = try message.readString()
            let result = try message.readString()
            guard result == "done", unit.hasPrefix("app-") else { return }
            if let start = started(unit, manager: manager) { output.yield(.unitStarted(start)) }
        case (Self.sessionInterface, "Unlock"):
            if let session = accepted(message.path, login: login) {
                output.yield(.session(.unlock, WallClock.now(), session: session))
            }
        case (Self.properties, "PropertiesChanged") where message.path == Self.shellPath:
            guard overview, bus == .user, try message.readString() == Self.shell else { return }
            try message.enter("a", "{sv}")
            while try message.enter("e", "sv") {
                if try message.readString() == "OverviewActive" {
                    try message.enter("v", "b")
                    let open = try message.readBool()
                    try message.exit()
                    output.yield(.overview(open, WallClock.now()))
                } else {
                    try message.skip("v")
                }
                try message.exit()
            }
            try message.exit()
        case (Self.properties, "PropertiesChanged"):
            guard let session = accepted(message.path, login: login), try message.readString() == Self.sessionInterface
            else { return }
            try message.enter("a", "{sv}")
            while try message.enter("e", "sv") {
                let name = try message.readString()
                if name == "LockedHint" {
                    try message.enter("v", "b")
                    let locked = try message.readBool()
                    try message.exit()
                    output.yield(.session(.lockedHint(locked), WallClock.now(), session: session))
                } else {
                    try message.skip("v")
                }
                try message.exit()
            }
            try message.exit()
        default:
            return
        }
    }

    /// GNOME Shell's overview as it is when (re)connecting, passed on as a change: open, it is a look (its opening
    /// was not seen); closed, the next opening is. No GNOME Shell on the bus: nothing.
    private func overviewNow(_ connection: BusConnection) {
        do throws(BusError) {
            let open = try connection.property(
                destination: Self.shell, path: Self.shellPath, interface: Self.shell, name: "OverviewActive",
                type: "b"
            ).readBool()
            output.yield(.overview(open, WallClock.now()))
        } catch {
            return
        }
    }

    /// The session id of a logind session path this service listens to, or `nil`: the configured session, or
    /// else (watching the user's manager) any session of this uid, as logind's `User` property says; the
    /// system instance (a kiosk) takes every session.
    private func accepted(_ path: String?, login: BusConnection?) -> String? {
        guard let path, path.hasPrefix(Self.sessionPrefix + "/") else { return nil }
        let id = String(path.dropFirst(Self.sessionPrefix.count + 1))
        if !session.isEmpty {
            return BusConnection.objectPath(prefix: Self.sessionPrefix, id: session) == path ? id : nil
        }
        guard bus == .user else { return id }
        guard let login else { return nil }
        do throws(BusError) {
            let user = try login.property(
                destination: "org.freedesktop.login1", path: path, interface: Self.sessionInterface, name: "User",
                type: "(uo)")
            try user.enter("r", "uo")
            return try user.readUInt32() == getuid() ? id : nil
        } catch {
            return nil
        }
    }

    /// The unit's start as the manager reports it, or `nil` when it is not active (a stop job ended).
    func started(_ unit: String, manager: BusConnection) -> UnitStart? {
        guard let path = BusConnection.objectPath(prefix: "/org/freedesktop/systemd1/unit", id: unit) else {
            return nil
        }
        func property(_ name: String, _ type: String) throws(BusError) -> BusMessage {
            try manager.property(
                destination: Self.systemd, path: path, interface: Self.unitInterface, name: name, type: type)
        }
        do throws(BusError) {
            let state = try property("ActiveState", "s").readString()
            guard state == "active" || state == "activating" || state == "reloading" else { return nil }
            let invocation = try property("InvocationID", "ay").readBytes()
            let entered = try property("ActiveEnterTimestamp", "t").readUInt64()
            let date = entered > 0 ? WallClock.at(microseconds: Int64(entered)) : WallClock.now()
            return UnitStart(name: unit, invocationID: invocation.map { Self.hex($0) }.joined(), date: date)
        } catch {
            // The bus itself failed (no D-Bus error name): nothing is known of the unit; the catch-up after the
            // reconnect lists it if it is still there, with its own start.
            guard !error.name.isEmpty else { return nil }
            // Gone already (a unit that ended at once, the manager answers an error): a launch all the same, dated
            // now.
            return UnitStart(name: unit, invocationID: "", date: WallClock.now())
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }
}

extension BusMessage {
    func ignore() {}
}
