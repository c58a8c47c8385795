import Logging
import SmartStackCore
import SmartStackServer
import SmartStackStore
import Synchronization

/// A clock the test moves by hand.
final class ManualClock: ServiceClock {
    private let time: Mutex<Timestamp>

    init(_ start: Timestamp = ServerFixture.start) { time = Mutex(start) }

    /// How far the system's wall clock is ahead of the service's time (a step not yet believed).
    private let wallAhead = Mutex(0.0)

    func now() -> Timestamp { time.withLock { $0 } }

    func wallNow() -> Timestamp { now().adding(seconds: wallAhead.withLock { $0 }) }

    func advance(seconds: Double) { time.withLock { $0 = $0.adding(seconds: seconds) } }

    /// Puts the wall clock `seconds` ahead of the service's time.
    func setWallAhead(seconds: Double) { wallAhead.withLock { $0 = seconds } }
}

enum ServerFixture {
    /// 2024-03-04T08:00:00-08:00.
    static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func app(_ name: String) -> AppID {
        do { return try AppID("com.example.\(name)") } catch { fatalError("bad app \(name)") }
    }

    static func stack(_ name: String = "home") -> StackID {
        do { return try StackID(name) } catch { fatalError("bad stack \(name)") }
    }

    static func instance(_ name: String) -> InstanceID {
        do { return try InstanceID(name) } catch { fatalError("bad instance \(name)") }
    }

    static func kind(_ app: String) -> WidgetKind {
        do {
            return try WidgetKind(
                id: WidgetKindID(app: Self.app(app), kind: "main"), displayName: app, families: [.systemMedium],
                intent: nil, predictionMappings: [])
        } catch { fatalError("bad kind: \(error)") }
    }

    /// A host with one kind per app and a stack `home` holding one widget per app.
    static func host(
        apps: [String], settings: EngineSettings = EngineSettings(), limits: HostLimits = HostLimits(),
        clock: ManualClock = ManualClock()
    ) async throws -> EngineHost {
        let host = EngineHost(
            settings: settings, limits: limits, clock: clock, log: InMemoryEventLog(), logger: logger)
        for app in apps { try await host.record(.registerKind(kind(app), at: clock.now())) }
        let widgets = try apps.map {
            WidgetPlacement(instance: instance($0), kind: try WidgetKindID(app: Self.app($0), kind: "main"))
        }
        try await host.record(
            .configureStack(
                StackConfiguration(id: stack(), family: .systemMedium, widgets: widgets, smartRotate: true),
                at: clock.now()))
        return host
    }

    static func donation(_ app: String, id: String = "", at time: Timestamp, group: String? = nil) -> Donation {
        Donation(id: id, app: Self.app(app), intent: "open", date: time, groupId: group)
    }
}
