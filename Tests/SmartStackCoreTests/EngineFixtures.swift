import SmartStackCore
import Testing

/// Builders for engine tests: ids, kinds and stacks from short names, times as seconds from a fixed start.
enum Fixture {
    /// 2024-03-04T08:00:00-08:00 (a Monday morning on a US Pacific wall clock).
    static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

    static func t(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }

    static func app(_ name: String) -> AppID {
        do { return try AppID("com.example.\(name)") } catch { fatalError("bad app \(name)") }
    }

    static func kindID(_ app: String, _ kind: String = "main") -> WidgetKindID {
        do { return try WidgetKindID(app: Self.app(app), kind: kind) } catch { fatalError("bad kind \(kind)") }
    }

    static func instance(_ name: String) -> InstanceID {
        do { return try InstanceID(name) } catch { fatalError("bad instance \(name)") }
    }

    static func stack(_ name: String = "home") -> StackID {
        do { return try StackID(name) } catch { fatalError("bad stack \(name)") }
    }

    static func kind(
        _ app: String, _ kind: String = "main", families: Set<WidgetFamily> = [.systemMedium],
        intent: IntentSchema? = nil,
        mappings: [PredictionMapping] = []
    ) -> WidgetKind {
        do {
            return try WidgetKind(
                id: kindID(app, kind), displayName: "\(app) \(kind)", families: families, intent: intent,
                predictionMappings: mappings)
        } catch { fatalError("bad kind: \(error)") }
    }

    /// An engine with one `main` kind per app and a stack `home` holding one instance per app (named after it).
    static func engine(
        apps: [String], settings: EngineSettings = EngineSettings(), smartRotate: Bool = true,
        developerMode: Bool = false, pinned: String? = nil
    ) throws -> Engine {
        var engine = Engine(settings: settings)
        for app in apps { try engine.apply(.registerKind(kind(app), at: t(0))) }
        let widgets = apps.map { WidgetPlacement(instance: instance($0), kind: kindID($0)) }
        try engine.apply(
            .configureStack(
                StackConfiguration(
                    id: stack(), family: .systemMedium, widgets: widgets, smartRotate: smartRotate,
                    pinned: pinned.map(instance), developerMode: developerMode),
                at: t(0)))
        engine.publish(at: t(0))
        return engine
    }

    static func donation(
        _ app: String, at seconds: Double, id: String? = nil, group: String? = nil,
        intent: String = "open", parameters: [String: String] = [:]
    ) -> EngineEvent {
        .donate(
            Donation(
                id: id ?? "\(app)@\(seconds)", app: Self.app(app), intent: intent, parameters: parameters,
                date: t(seconds), groupId: group))
    }

    static func timeline(_ entries: [(Double, Double?, Double)], policy: ReloadPolicy = .never) -> Timeline {
        let list = entries.map { date, score, duration in
            TimelineEntry(date: t(date), relevance: score.map { Relevance(score: $0, duration: duration) })
        }
        do { return try Timeline.validated(entries: list, policy: policy).timeline } catch { fatalError("\(error)") }
    }
}

extension Engine {
    /// The published order of `home` after publishing at `seconds`.
    mutating func order(at seconds: Double, stack: StackID = Fixture.stack()) -> [String] {
        publish(at: Fixture.t(seconds))
        commit(stack: stack, at: Fixture.t(seconds))
        return published(stack)?.order ?? []
    }

    func entry(_ instance: String, at seconds: Double, stack: StackID = Fixture.stack()) throws -> DecisionEntry? {
        try evaluate(stack: stack, at: Fixture.t(seconds)).entries.first { $0.instance == instance }
    }
}

extension SeededGenerator {
    /// A uniform integer in `0..<n`.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
