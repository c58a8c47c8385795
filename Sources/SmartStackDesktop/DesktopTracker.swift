public import SmartStackCore

/// A unit of the service manager that became active: what the D-Bus handlers (or a replay) hand the tracker.
public struct UnitStart: Sendable, Equatable {
    /// The unit name, e.g. `app-gnome-org.gnome.Nautilus-1234.scope`.
    public var name: String
    /// The unit's `InvocationID` (32 hex digits), empty when the manager has none.
    public var invocationID: String
    /// When the unit became active (`ActiveEnterTimestamp`), with the local UTC offset.
    public var date: Timestamp

    public init(name: String, invocationID: String, date: Timestamp) {
        self.name = name
        self.invocationID = invocationID
        self.date = date
    }
}

/// What the tracker made of one unit start.
public enum LaunchOutcome: Sendable, Equatable {
    /// A launch of `app`: the calls to make, in order.
    case launch(app: String, calls: [DesktopCall])
    /// Not an application unit.
    case notAnApp
    /// An application on the ignore list.
    case ignored(applicationID: String)
    /// An XDG autostart entry: started at every login, not chosen by the user (logged as such, not as the ignore
    /// list, which the user may never have written).
    case autostart(applicationID: String)
    /// This invocation was counted already (seen again after a restart or reconnect).
    case sameInvocation(app: String)
    /// The same unit started again within `dedupSeconds` of its last counted start.
    case repeatedWithin(app: String, seconds: Double)
}

/// A signal of logind about a session.
public enum SessionSignal: Sendable, Equatable {
    /// `org.freedesktop.login1.Session.Unlock`: the session was asked to unlock.
    case unlock
    /// `LockedHint` changed to this value (the screen locker locked or unlocked).
    case lockedHint(Bool)
}

/// The pure core of smartstack-desktop: turns unit starts and unlocks into smartstackd calls, and keeps the
/// launch counts behind the stack of most-launched apps.
///
/// No I/O and no clock: every event carries its time, so a replay of a usage log and the live service take
/// the same path. The state is a value that the service stores between runs.
public struct DesktopTracker: Sendable {
    /// What the tracker keeps between runs.
    public struct State: Sendable, Equatable, Codable {
        /// Counted launches by app id.
        public var launches: [String: Int] = [:]
        /// The order apps were first launched in (ties of the most-launched order).
        public var firstSeen: [String: Int] = [:]
        /// Apps whose launcher widget kind is registered.
        public var registered: Set<String> = []
        /// The apps of the stack as last configured, in its order; empty before the first configuration.
        public var stackApps: [String] = []
        /// Invocation ids counted recently, oldest first (at most ``invocationMemory``).
        public var invocations: [String] = []
        /// The last counted start of each unit name within the dedup window, in microseconds.
        public var lastStart: [String: Int64] = [:]

        public init() {}
    }

    /// How many invocation ids are remembered to recognise a unit seen again.
    public static let invocationMemory = 4096

    public let configuration: DesktopConfiguration
    public private(set) var state: State
    private var invocationSet: Set<String>
    /// Whether each session's lock hint was last seen true; not kept between runs (a session locks and unlocks
    /// while the agent is stopped).
    private var locked: [String: Bool] = [:]
    /// Whether GNOME Shell's overview was last seen open; `nil` when not known (start-up, a reconnect).
    private var overviewOpen: Bool?

    public init(configuration: DesktopConfiguration, state: State = State()) {
        self.configuration = configuration
        self.state = state
        self.invocationSet = Set(state.invocations)
    }

    /// A unit of the manager became active.
    public mutating func unitStarted(_ unit: UnitStart) -> LaunchOutcome {
        guard let appUnit = AppUnit(unitName: unit.name) else { return .notAnApp }
        if configuration.ignores(appUnit.applicationID) { return .ignored(applicationID: appUnit.applicationID) }
        // XDG autostart entries (systemd's generator: app-<id>@autostart.service) start at every login, not when the
        // user chose the app.
        if appUnit.random == "autostart" { return .autostart(applicationID: appUnit.applicationID) }
        let app = AppUnit.smartStackAppID(appUnit.applicationID)
        if !unit.invocationID.isEmpty, invocationSet.contains(unit.invocationID) { return .sameInvocation(app: app) }
        // An invocation is seen once, whether it counts or not: seen again, it never counts.
        if !unit.invocationID.isEmpty { remember(unit.invocationID) }
        let window = Int64(configuration.dedupSeconds * 1_000_000)
        state.lastStart = state.lastStart.filter { unit.date.microseconds - $0.value < window }
        if let last = state.lastStart[unit.name], abs(unit.date.microseconds - last) < window {
            return .repeatedWithin(app: app, seconds: Double(unit.date.microseconds - last) / 1_000_000)
        }
        if window > 0 { state.lastStart[unit.name] = unit.date.microseconds }

        state.launches[app, default: 0] += 1
        if state.firstSeen[app] == nil { state.firstSeen[app] = state.firstSeen.count }
        var calls: [DesktopCall] = []
        let wanted = configuration.apps.isEmpty ? mostLaunched() : configuration.apps.map(AppUnit.smartStackAppID)
        for candidate in [app] + wanted where !state.registered.contains(candidate) {
            state.registered.insert(candidate)
            calls.append(
                .registerWidget(
                    app: candidate, kind: configuration.kind,
                    displayName: candidate == app ? appUnit.applicationID : candidate,
                    family: configuration.family, date: unit.date))
        }
        // Reconfigure only when the set of apps changes: ConfigureStack keeps what smartstackd learned about
        // every widget that keeps its instance id, kind and configuration, and the instance ids are stable.
        if Set(wanted) != Set(state.stackApps) {
            state.stackApps = wanted
            calls.append(
                .configureStack(
                    stack: configuration.stack, family: configuration.family, kind: configuration.kind, apps: wanted,
                    date: unit.date))
        }
        calls.append(.donate(app: app, id: Self.donationID(unit), date: unit.date))
        return .launch(app: app, calls: calls)
    }

    /// smartstackd refused `call` for good (`errorName`): what the tracker believed done is not, so the next launch
    /// plans it again. A refused registration leaves its app unregistered; a refused configuration leaves the
    /// stack unconfigured (the next launch configures it, registering what is missing); a look at a stack
    /// smartstackd does not know (`NotFound`: its state was wiped) leaves nothing registered or configured. Not
    /// at once: a call refused for good would be refused again, so the retry waits for the next launch.
    public mutating func refused(_ call: DesktopCall, errorName: String) {
        switch call {
        case .registerWidget(let app, _, _, _, _):
            state.registered.remove(app)
        case .configureStack:
            state.stackApps = []
        case .recordLook where errorName.hasSuffix(".NotFound"):
            state.registered = []
            state.stackApps = []
        case .donate, .recordLook:
            break
        }
    }

    /// At start-up (and a replay's first row): with a fixed list of `apps`, the stack is known before any
    /// launch, so its kinds are registered and it is configured now; otherwise nothing (the stack comes with
    /// the first launch).
    public mutating func prepare(at date: Timestamp) -> [DesktopCall] {
        guard !configuration.apps.isEmpty, state.stackApps.isEmpty else { return [] }
        let apps = configuration.apps.map(AppUnit.smartStackAppID)
        var calls: [DesktopCall] = []
        for app in apps where !state.registered.contains(app) {
            state.registered.insert(app)
            calls.append(
                .registerWidget(
                    app: app, kind: configuration.kind, displayName: app, family: configuration.family, date: date))
        }
        state.stackApps = apps
        calls.append(
            .configureStack(
                stack: configuration.stack, family: configuration.family, kind: configuration.kind, apps: apps,
                date: date))
        return calls
    }

    /// The session was unlocked (or became active): a look at the stack, once it exists.
    public mutating func unlocked(at date: Timestamp) -> [DesktopCall] {
        state.stackApps.isEmpty ? [] : [.recordLook(stack: configuration.stack, date: date)]
    }

    /// What logind said about `session`: a look (``unlocked(at:)``) when it is an unlock the user made, once per
    /// unlock. logind sends `Unlock` when asked to unlock (`loginctl unlock-session`), and the screen locker turns
    /// `LockedHint` false when it has unlocked, so one unlock through loginctl on a desktop with a locker sends both.
    /// `LockedHint` false is a look when the session was locked or its lock was not known yet (the first signal
    /// after start-up); `Unlock` is a look unless the session is locked, when the locker's `LockedHint` false that
    /// follows is the look (the session stays locked until then). `LockedHint` true locks it.
    public mutating func sessionSignal(_ signal: SessionSignal, session: String, at date: Timestamp)
        -> [DesktopCall]
    {
        let wasLocked = locked[session]
        switch signal {
        case .lockedHint(true):
            locked[session] = true
            return []
        case .lockedHint(false):
            locked[session] = false
            return wasLocked == false ? [] : unlocked(at: date)
        case .unlock:
            if wasLocked == true { return [] }
            locked[session] = false
            return unlocked(at: date)
        }
    }

    /// Connected to the buses again: what was known of the sessions' locks is not any more (a lock or unlock may
    /// have been missed meanwhile, and a session believed locked would swallow every `Unlock`).
    public mutating func busConnected() {
        locked = [:]
        overviewOpen = nil
    }

    /// GNOME Shell's overview (Activities: the dash, the app grid, search) opened or closed: opening it is a look
    /// at the stack, once per opening (`OverviewActive` true again without a false between is the same
    /// opening); closing it is none. The first `true` after start-up or a reconnect is a look (its opening was not
    /// counted). No look when ``DesktopConfiguration/overviewLooks`` is off.
    public mutating func overview(open: Bool, at date: Timestamp) -> [DesktopCall] {
        let wasOpen = overviewOpen
        overviewOpen = open
        guard configuration.overviewLooks, open, wasOpen != true else { return [] }
        return unlocked(at: date)
    }

    /// The K most-launched apps, most first, ties by first launch.
    public func mostLaunched() -> [String] {
        let ranked = state.launches.sorted { left, right in
            left.value != right.value
                ? left.value > right.value : (state.firstSeen[left.key] ?? 0) < (state.firstSeen[right.key] ?? 0)
        }
        return ranked.prefix(configuration.stackSize).map(\.key)
    }

    /// The donation id of a unit start: its invocation id, so a launch donated again after a restart of
    /// either service is the same donation; the unit name and start time when the manager gave none.
    public static func donationID(_ unit: UnitStart) -> String {
        if !unit.invocationID.isEmpty { return "invocation-" + unit.invocationID }
        return String(("unit-" + AppUnit.smartStackAppID(unit.name) + "-" + String(unit.date.microseconds)).prefix(255))
    }

    private mutating func remember(_ invocation: String) {
        state.invocations.append(invocation)
        invocationSet.insert(invocation)
        let excess = state.invocations.count - Self.invocationMemory
        if excess > 0 {
            for old in state.invocations.prefix(excess) { invocationSet.remove(old) }
            state.invocations.removeFirst(excess)
        }
    }
}
