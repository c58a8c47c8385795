public import SmartStackCore

/// The production engine behind the evaluation protocol, driven as the service drives it.
///
/// One engine per user. Each stack app gets a widget kind `<app>/main` with no configuration intent and one
/// instance in a stack of one family with Smart Rotate on, configured at the user's first row. An `open` row
/// is a donation of intent `open` by the app; after every event the engine publishes, as the daemon does.
/// A `home` row decides the order at its time (publishing it if it changed, as `GetStack` does), then records a look at
/// the stack (the shell showing it), which is how the engine learns what the user goes to after looking.
public struct EngineRanker: MomentRanker {
    public static let factory = RankerFactory(name: "engine") { stack in EngineRanker(stack: stack) }

    /// The engine with its stacks' rankers starting from `prior` instead of the build's.
    public static func factory(prior: RankingPrior) -> RankerFactory {
        RankerFactory(name: "engine") { stack in EngineRanker(stack: stack, prior: prior) }
    }

    private var engine = Engine()
    private let stack: [String]
    private let stackID: StackID
    private var appIDs: [String: AppID] = [:]
    private var instanceToApp: [String: String] = [:]
    private var configured = false
    private var donations = 0

    public init(stack: [String], prior: RankingPrior = .shipped) {
        self.stack = stack
        guard let id = try? StackID("home") else { Self.unreachable() }
        self.stackID = id
        engine.rankingPrior = prior
    }

    /// The app on top of the engine's latest published order (what the daemon would journal), if any.
    public var publishedTop: String? { engine.published(stackID)?.top.flatMap { instanceToApp[$0] } }

    /// The weights the stack's learned ranker has now, by feature name; `nil` before the first row.
    public var learnedWeights: [(name: String, weight: Double)]? { engine.learnedWeights(of: stackID) }

    public mutating func open(app: String, at time: Timestamp) {
        configureIfNeeded(at: time)
        donations += 1
        let donation = Donation(
            id: "d\(donations)", app: appID(app), intent: "open", parameters: [:], date: time, groupId: nil)
        apply(.donate(donation))
        engine.publish(at: time)
    }

    public mutating func order(at time: Timestamp) -> [String] {
        configureIfNeeded(at: time)
        engine.publish(at: time)
        // A query decides at its own time: the idle gap since the last donation is a signal.
        engine.commit(stack: stackID, at: time)
        let order = (engine.published(stackID)?.order ?? []).compactMap { instanceToApp[$0] }
        apply(.look(stack: stackID, at: time))
        return order
    }

    private mutating func configureIfNeeded(at time: Timestamp) {
        guard !configured else { return }
        configured = true
        var widgets: [WidgetPlacement] = []
        for app in stack {
            let id = appID(app)
            guard let kindID = try? WidgetKindID(app: id, kind: "main"),
                let kind = try? WidgetKind(id: kindID, displayName: app, families: [.systemMedium]),
                let instance = try? InstanceID(id.rawValue)
            else { continue }
            apply(.registerKind(kind, at: time))
            instanceToApp[instance.rawValue] = app
            widgets.append(WidgetPlacement(instance: instance, kind: kindID))
        }
        apply(.configureStack(StackConfiguration(id: stackID, family: .systemMedium, widgets: widgets), at: time))
    }

    private mutating func apply(_ event: EngineEvent) {
        do {
            try engine.apply(event)
        } catch {
            preconditionFailure("the evaluation fed the engine an invalid event: \(error)")
        }
    }

    /// The app's id: bytes outside `[A-Za-z0-9.-]` (and `_` itself) become `_HH`, so the mapping is one-to-one.
    private mutating func appID(_ app: String) -> AppID {
        if let id = appIDs[app] { return id }
        var text = ""
        for byte in app.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 128, scalar.isLetter || scalar.isNumber || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            {
                text.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        guard let id = try? AppID(String(text.prefix(255))) else { Self.unreachable() }
        appIDs[app] = id
        return id
    }

    private static func unreachable() -> Never { preconditionFailure("a constructed id failed validation") }
}
