import Logging
import SmartStackCore
import SmartStackServer
import SmartStackStore

/// Builds a state directory holding `donations` donations (over 10 apps, with `stacks` stacks of 10 widgets),
/// through the engine's owner and the SQLite log as the service would, then stops it (final snapshot).
enum FillState {
    struct FixedClock: ServiceClock {
        let time: Timestamp
        func now() -> Timestamp { time }
    }

    static func run(_ options: BenchOptions) async {
        guard !options.state.isEmpty else { usage() }
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let started = monotonicSeconds()
        do {
            let log = try ServiceAssembly.openLog(
                stateDirectory: options.state, options: StoreOptions(), logger: logger)
            // Donations over the last 20 days, ending now, so none is past retention when the service starts.
            let clock = SystemServiceClock()
            let end = clock.now()
            let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: logger)
            try await host.restore()
            let apps = try (0..<10).map { try AppID("org.bench.app\($0)") }
            for app in apps {
                let kind = try WidgetKind(
                    id: WidgetKindID(app: app, kind: "main"), displayName: "w", families: [.systemMedium])
                try await host.record(.registerKind(kind, at: end.adding(seconds: -20 * 86_400)))
            }
            try await configure(stack: 0, apps: apps, host: host, at: end.adding(seconds: -20 * 86_400))
            let span = 20 * 86_400.0
            let batch = 1_000
            var made = 0
            while made < options.donations {
                // A window of concurrent calls, as many clients would send.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in made..<min(options.donations, made + batch) {
                        let donation = Donation(
                            id: "d\(index)", app: apps[index % apps.count], intent: "open",
                            date: end.adding(seconds: -span + span * Double(index) / Double(options.donations)))
                        group.addTask { _ = try await host.donate(donation, idGiven: true) }
                    }
                    try await group.waitForAll()
                }
                made = min(options.donations, made + batch)
            }
            // The other stacks after the donations: each publish ranks every stack, and a donation concerns them
            // all, so filling a million donations with a thousand stacks in place would take hours.
            for stack in 1..<max(1, options.stacks) {
                try await configure(stack: stack, apps: apps, host: host, at: end)
            }
            await host.stop()
            await host.closeLog()
        } catch {
            fatalError("\(error)")
        }
        print(
            "filled \(options.state) with \(options.stacks) stacks and \(options.donations) donations in \(monotonicSeconds() - started) s"
        )
    }
}

extension FillState {
    /// Configures stack number `stack` with one widget of every app (stack 0 is `load`, the one the start-up
    /// benchmark reads).
    static func configure(stack: Int, apps: [AppID], host: EngineHost, at time: Timestamp) async throws {
        let widgets = try apps.enumerated().map {
            WidgetPlacement(
                instance: try InstanceID(stack == 0 ? "w\($0.offset)" : "s\(stack)w\($0.offset)"),
                kind: try WidgetKindID(app: $0.element, kind: "main"))
        }
        try await host.record(
            .configureStack(
                StackConfiguration(
                    id: try StackID(stack == 0 ? "load" : "stack\(stack)"), family: .systemMedium, widgets: widgets),
                at: time))
    }
}

/// Restoring a state directory into the engine's owner, as start-up does.
enum RestoreBenchmark {
    static func run(_ options: BenchOptions) async {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        do {
            let log = try SQLiteEventLog.open(directory: options.state, options: StoreOptions(), logger: logger)
            let host = EngineHost(settings: EngineSettings(), clock: SystemServiceClock(), log: log, logger: logger)
            for _ in 0..<options.runs {
                let summary = try await host.restore()
                print("restore: \(summary.events) events in \(Int(summary.seconds * 1_000)) ms")
            }
            await host.closeLog()
        } catch {
            fatalError("\(error)")
        }
    }
}
