/// The ranking engine: every stack, widget and signal of DESIGN.md as one value, folded over events.
///
/// Pure and deterministic: no clock, no I/O. Each event carries its time; `publish(at:)` and
/// `evaluate(stack:at:)` answer for an explicit time. Its state is aggregates (decaying counts, learned
/// weights, current timelines), never lists of donations, so cost per event and per query does not grow with
/// the history. Deleting donations is replaying the retained history without them (`rebuild(from:)`): the
/// history of record lives with the caller (the store), which must keep it anyway to list donations.
public struct Engine: Sendable {
    public let settings: EngineSettings
    /// The latest time the engine has seen (events and `advance(to:)`).
    public internal(set) var now: Timestamp

    var kinds: [WidgetKindID: WidgetKind] = [:]
    var kindsByApp: [AppID: [WidgetKindID]] = [:]
    @usableFromInline var stacks: [StackID: StackState] = [:]
    var instances = InstanceStore()
    var usage = UsageModel()
    var keyIndex: [WidgetKey: Int32] = [:]
    var keys: [WidgetKeyInfo] = []
    var keysByApp: [AppID: [Int32]] = [:]
    var appIndex: [AppID: Int32] = [:]
    var contexts: [String: String] = [:]
    /// When each context key was last set or cleared (an older call for the key changes nothing).
    var contextTimes: [String: Timestamp] = [:]
    var contextPairIndex: [String: Int32] = [:]
    /// Interned `key=value` pairs of `contexts`, sorted so that sums over them are reproducible.
    var contextPairs: [Int32] = []
    var liveActivities = LiveActivityRegistry()
    var keyTimelines: [Int32: Timeline] = [:]
    var keyRelevance: [Int32: RelevanceDeclaration] = [:]
    @usableFromInline var timers = TimerQueue()
    var pendingLooks: Set<StackID> = []
    /// Stacks configured from now on start their revisions above this: one above the last revision of every stack
    /// removed so far (its removal takes that one), so a stack configured again under a removed one's id never
    /// repeats a revision a subscriber saw.
    public internal(set) var revisionFloor = 0
    /// Keys with no placed instance that donations made suggestion candidates, most recent last.
    var suggestionCandidates: [Int32] = []
    /// Bumped by every change that can move any stack's order (donations, contexts, Live Activities).
    var generation = 0
    /// Scratch space for feature matrices, reused so queries do not allocate.
    var scratch: [Double] = []

    public init(settings: EngineSettings = EngineSettings(), now: Timestamp = Timestamp(microseconds: 0)) {
        self.settings = settings
        self.now = now
        self.liveActivities = LiveActivityRegistry(maxPerApp: settings.maxLiveActivitiesPerApp)
    }

    // MARK: Applying events

    /// Applies one event (after advancing time to it) and returns what the service should send on.
    /// A rejected event changes nothing but the timers due by its date: they have fired (each at its own time, as a
    /// replay fires them at the next event) and their effects are lost with the error, so the service fires what
    /// is due (a logged publish) before it applies a call (`EngineHost.apply`). The event's own date moves nothing.
    ///
    /// `admitting`: whether the event is new (a call) rather than one a log already holds. The limits that answer
    /// `LimitExceeded` (`maxKinds`, `maxKindsPerApp`, `maxStacks`, `maxWidgetsPerStack`, `maxContexts`,
    /// `maxTimelineEntries`, `maxLiveActivitiesPerApp`, `maxRelevantContexts`, and `maxUnplacedConfigurationsPerApp`
    /// for timeline and declaration targets) refuse new events only: an event in the log was admitted when it came,
    /// and a replay or rebuild of the log takes it again, even where a rebuild that left donations out (retention,
    /// a deletion) or lower limits would have refused it as a new call. Every other rule applies alike (the bound
    /// on configurations implied by donations and `maxContextPairs` shape the state, they refuse nothing), so a
    /// replay of the log reaches the engine the calls built.
    @discardableResult
    public mutating func apply(_ event: EngineEvent, admitting: Bool = true) throws(CoreError) -> [EngineEffect] {
        var effects = fireTimers(through: event.time)
        let timersFired = now
        if event.time > now { now = event.time }
        do throws(CoreError) {
            switch event {
            case .registerKind(let kind, _): try register(kind, admitting: admitting)
            case .configureStack(let configuration, let at): try configure(configuration, at: at, admitting: admitting)
            case .removeStack(let id, _): try removeStack(id)
            case .donate(let donation): donate(donation)
            case .submitTimeline(let target, let timeline, let at):
                try submit(timeline, to: target, at: at, admitting: admitting)
            case .declareRelevance(let declaration, let at): try declare(declaration, at: at, admitting: admitting)
            case .reloadTimelines(let app, let kind, _):
                effects += try reloadTimelines(app: app, kind: kind)
            case .engage(let stack, let instance, let kind, _, let at):
                effects += try engage(stack: stack, instance: instance, kind: kind, at: at)
            case .look(let stack, let at): try look(at: stack, time: at)
            case .setContext(let key, let value, let at):
                effects += try setContext(key: key, value: value, at: at, admitting: admitting)
            case .startLiveActivity(let app, let id, let attributes, let contentState, let at):
                try liveActivities.start(
                    app: app, id: id, attributes: attributes, contentState: contentState, at: at, admitting: admitting)
                liveActivitiesChanged(ofApp: app)
            case .updateLiveActivity(let app, let id, let contentState, let at):
                try liveActivities.update(app: app, id: id, contentState: contentState, at: at)
                liveActivitiesChanged(ofApp: app)
            case .endLiveActivity(let app, let id, let contentState, let dismissAfter, let at):
                try liveActivities.end(app: app, id: id, contentState: contentState, dismissAfter: dismissAfter, at: at)
                liveActivitiesChanged(ofApp: app)
            case .publish:
                // Applying a publish mark changes nothing; `step` and `replay` publish at it.
                break
            }
        } catch {
            // Refused: the event's own date moved nothing (a replay of the log, which does not hold it, must reach
            // the same clock).
            now = timersFired
            throw error
        }
        return effects
    }

    mutating func register(_ kind: WidgetKind, admitting: Bool) throws(CoreError) {
        if kinds[kind.id] == nil {
            guard !admitting || (kindsByApp[kind.id.app]?.count ?? 0) < settings.maxKindsPerApp else {
                throw .limitExceeded(limit: "maxKindsPerApp", maximum: settings.maxKindsPerApp)
            }
            guard !admitting || kinds.count < settings.maxKinds else {
                throw .limitExceeded(limit: "maxKinds", maximum: settings.maxKinds)
            }
            kindsByApp[kind.id.app, default: []].append(kind.id)
            kindsByApp[kind.id.app]?.sort()
        } else if admitting {
            // A new definition must still fit every placed instance of the kind: one it rejects kept its stored
            // configuration and family, got reload requests the provider's schema cannot express, and made the
            // shell's unchanged ConfigureStack and every ChangeStack of its stack fail.
            for case let instance? in instances.slots where instance.kind == kind.id {
                let family = stacks[instance.stack]?.configuration.family
                var reason: String?
                if let family, let unsupported = kind.unsupported(family) {
                    reason = unsupported
                } else {
                    do throws(CoreError) {
                        _ = try kind.validateConfiguration(instance.configuration.values)
                    } catch {
                        reason = "\(error)"
                    }
                }
                if let reason {
                    throw .conflict(
                        kind: "widgetKind", id: kind.id.description,
                        reason: "instance '\(instance.id)' of stack '\(instance.stack)' would not fit the new"
                            + " definition (\(reason)); remove it from its stack first")
                }
            }
        }
        // A kind's families decide which stacks may suggest its configurations: a new definition that drops a
        // family must take a suggestion shown in a stack of it away at once (it was reused for `decisionMaxAge`).
        if let old = kinds[kind.id], old.families != kind.families { generation += 1 }
        kinds[kind.id] = kind
    }

    mutating func configure(_ configuration: StackConfiguration, at time: Timestamp, admitting: Bool)
        throws(CoreError)
    {
        let existing = stacks[configuration.id]
        if admitting, existing == nil, stacks.count >= settings.maxStacks {
            throw .limitExceeded(limit: "maxStacks", maximum: settings.maxStacks)
        }
        guard !admitting || configuration.widgets.count <= settings.maxWidgetsPerStack else {
            throw .limitExceeded(limit: "maxWidgetsPerStack", maximum: settings.maxWidgetsPerStack)
        }
        // Validate everything before changing anything.
        var placed: [(WidgetPlacement, WidgetKind, Configuration)] = []
        var seen: Set<InstanceID> = []
        for (index, widget) in configuration.widgets.enumerated() {
            let path = "widgets[\(index)]"
            guard seen.insert(widget.instance).inserted else {
                throw .invalidParameter(
                    parameter: "\(path).instance", reason: "instance '\(widget.instance)' appears twice")
            }
            if let other = instances[widget.instance], other.stack != configuration.id {
                throw .conflict(
                    kind: "instance", id: widget.instance.rawValue, reason: "is placed in stack '\(other.stack)'")
            }
            guard let kind = kinds[widget.kind] else {
                throw .notFound(kind: "widgetKind", id: widget.kind.description)
            }
            if let reason = kind.unsupported(configuration.family) {
                throw .invalidParameter(parameter: "\(path).kind", reason: reason)
            }
            do {
                placed.append((widget, kind, try kind.validateConfiguration(widget.configuration)))
            } catch {
                throw error.prefixed(with: path)
            }
        }
        if let pinned = configuration.pinned, !seen.contains(pinned) {
            throw .invalidParameter(parameter: "pinned", reason: "instance '\(pinned)' is not in the stack")
        }

        var state = existing ?? StackState(configuration: configuration, prior: usage.prior)
        if existing == nil { state.revision = revisionFloor }
        let kept = Set(
            placed.compactMap { widget, _, config -> InstanceID? in
                guard let old = instances[widget.instance], old.kind == widget.kind, old.configuration == config else {
                    return nil
                }
                return widget.instance
            })
        for id in state.instances where !kept.contains(id) { removeInstance(id) }
        for (widget, kind, config) in placed where !kept.contains(widget.instance) {
            let key = widgetKey(kind: kind.id, configuration: config)
            var instance = InstanceState(
                id: widget.instance, stack: configuration.id, kind: kind.id, configuration: config, key: key,
                reload: ReloadScheduler(budget: ReloadBudget(capacity: settings.reloadBudget)))
            if let timeline = keyTimelines[key] {
                instance.relevance.replace(with: timeline, at: time)
                instance.reload.timelineSubmitted(timeline, at: now)
            }
            if let declaration = keyRelevance[key] {
                instance.relevantContexts = declaration.contexts
                instance.group = declaration.group
            }
            keys[Int(key)].placed += 1
            instances[widget.instance] = instance
            scheduleTimers(for: widget.instance)
        }
        if state.instances != placed.map(\.0.instance) {
            state.look = nil
            pendingLooks.remove(configuration.id)
        }
        state.configuration = configuration
        state.instances = placed.map(\.0.instance)
        state.kinds = placed.map(\.1.id)
        state.slots = state.instances.compactMap { instances.slot(of: $0) }
        state.keys = state.slots.compactMap { instances.slots[Int($0)]?.key }
        if let swiped = state.manualSwipe, !kept.contains(swiped.instance) { state.manualSwipe = nil }
        state.dirty = true
        stacks[configuration.id] = state
    }

    mutating func removeStack(_ id: StackID) throws(CoreError) {
        guard let state = stacks[id] else { throw .notFound(kind: "stack", id: id.rawValue) }
        for instance in state.instances { removeInstance(instance) }
        revisionFloor = max(revisionFloor, state.revision + 1)
        stacks[id] = nil
        pendingLooks.remove(id)
    }

    mutating func removeInstance(_ id: InstanceID) {
        guard let instance = instances.removeValue(forKey: id) else { return }
        timers.cancel(id)
        keys[Int(instance.key)].placed -= 1
        if keys[Int(instance.key)].placed == 0 { noteCandidate(instance.key) }
    }

    /// Sets (or, with no value, clears) the context `key` as of `time`. A value dated before the one in force for the
    /// key (a client's backdated call arriving after a newer one) is history: it changes nothing now, as a backdated
    /// donation is not the app in front. When `foregroundApp` becomes an app, its reloads withheld for want of budget
    /// are granted (exempt) and returned.
    mutating func setContext(
        key: String, value: String?, at time: Timestamp, admitting: Bool
    ) throws(CoreError) -> [EngineEffect] {
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw .invalidParameter(parameter: "key", reason: "must be 1-255 bytes")
        }
        if let value {
            guard value.utf8.count <= 4_096 else {
                throw .invalidParameter(parameter: "value", reason: "longer than 4096 bytes")
            }
            if admitting, contexts[key] == nil, contexts.count >= settings.maxContexts {
                throw .limitExceeded(limit: "maxContexts", maximum: settings.maxContexts)
            }
        }
        if let since = contextTimes[key], time < since { return [] }
        contextTimes[key] = time
        if contextTimes.count > 2 * max(1, settings.maxContexts) {
            // Cleared keys' times go first (a set key's time stays while it is in force): bounded by the contexts.
            contextTimes = contextTimes.filter { contexts[$0.key] != nil || $0.key == key }
        }
        let cameToFront = key == "foregroundApp" && value != nil && contexts[key] != value
        contexts[key] = value
        contextPairs = contexts.keys.sorted().compactMap { key in
            contexts[key].flatMap { internContextPair("\(key)=\($0)") }
        }
        generation += 1
        guard cameToFront, let value else { return [] }
        var effects: [EngineEffect] = []
        for id in instances.ids.sorted() where instances[id]?.kind.app.rawValue == value {
            if let effect = reloadEffect(id, instances[id]?.reload.appCameToForeground(at: now), at: now) {
                effects.append(effect)
                scheduleTimers(for: id)
            }
        }
        return effects
    }

    /// The dense index of a context pair, made on first use; nil once `maxContextPairs` pairs have one (the pair
    /// is in force for relevant contexts, but the ranking does not learn from it).
    mutating func internContextPair(_ pair: String) -> Int32? {
        if let index = contextPairIndex[pair] { return index }
        guard contextPairIndex.count < settings.maxContextPairs else { return nil }
        let index = Int32(contextPairIndex.count)
        contextPairIndex[pair] = index
        return index
    }

    /// An activity ended or was removed by time: every stack may show it, so each is decided again.
    mutating func liveActivitiesChanged() {
        liveActivities.prune(at: now)
        if let next = liveActivities.nextChange(after: now) { timers.schedule(.everyStack, at: next) }
        generation += 1
    }

    /// An app started, updated or ended an activity: only the stacks with that app's widgets show it, so only they
    /// are decided again (every stack was, at the next publish, for every call of every app's activities).
    mutating func liveActivitiesChanged(ofApp app: AppID) {
        liveActivities.prune(app: app, at: now)
        if let next = liveActivities.nextChange(after: now) { timers.schedule(.everyStack, at: next) }
        for id in stacks.keys where stacks[id]?.kinds.contains(where: { $0.app == app }) == true {
            stacks[id]?.dirty = true
        }
    }

    // MARK: Widget keys

    /// The dense index of a widget key, created on first use.
    mutating func widgetKey(kind: WidgetKindID, configuration: Configuration) -> Int32 {
        let key = WidgetKey(kind: kind, configuration: configuration.canonicalKey)
        return keyIndex[key] ?? newKey(key, configuration: configuration)
    }

    /// The dense index of a widget key that no stack may place: made on first use only while the app has fewer
    /// than `maxUnplacedConfigurationsPerApp` keys without a placed instance (nil otherwise). Donations implying
    /// ever-new configurations, or timelines aimed at them, would otherwise grow the engine without a bound and
    /// slow the app's every donation (each is matched against all the app's keys).
    mutating func unplacedKey(kind: WidgetKindID, configuration: Configuration) -> Int32? {
        let key = WidgetKey(kind: kind, configuration: configuration.canonicalKey)
        if let index = keyIndex[key] { return index }
        guard unplacedKeyCount(of: kind.app) < settings.maxUnplacedConfigurationsPerApp else { return nil }
        return newKey(key, configuration: configuration)
    }

    /// How many of an app's widget keys no instance is placed with.
    func unplacedKeyCount(of app: AppID) -> Int {
        guard let appKeys = keysByApp[app] else { return 0 }
        var count = 0
        for key in appKeys where keys[Int(key)].placed == 0 { count += 1 }
        return count
    }

    private mutating func newKey(_ key: WidgetKey, configuration: Configuration) -> Int32 {
        let kind = key.kind
        let index = Int32(keys.count)
        keyIndex[key] = index
        keys.append(WidgetKeyInfo(kind: kind, configuration: configuration))
        keysByApp[kind.app, default: []].append(index)
        usage.ensureKey(index)
        return index
    }

    mutating func appIndex(_ app: AppID) -> Int32 {
        if let index = appIndex[app] { return index }
        let index = Int32(appIndex.count)
        appIndex[app] = index
        return index
    }

    /// Remembers a key without placed instances as a suggestion candidate (bounded), in the order of the candidates'
    /// last use, the latest last: `used` is the date of the donation that makes it one (nil: its last use so far),
    /// so a backdated donation is as old as its date (appended by arrival, three donations dated a day back from
    /// any app put every other app's fresh candidates behind them). Past the bound the oldest candidate of the
    /// app holding the most goes: one app with many configurations (up to `maxUnplacedConfigurationsPerApp`)
    /// pushed every other app's candidates out of a list kept by recency alone.
    mutating func noteCandidate(_ key: Int32, used: Int64? = nil) {
        guard settings.maxSuggestionCandidates > 0 else { return }
        suggestionCandidates.removeAll { $0 == key }
        let last = max(usage.lastUse(of: key) ?? .min, used ?? .min)
        var place = suggestionCandidates.endIndex
        while place > suggestionCandidates.startIndex,
            usage.lastUse(of: suggestionCandidates[place - 1]) ?? .min > last
        {
            place -= 1
        }
        suggestionCandidates.insert(key, at: place)
        guard suggestionCandidates.count > settings.maxSuggestionCandidates else { return }
        var held: [AppID: Int] = [:]
        for candidate in suggestionCandidates { held[keys[Int(candidate)].kind.app, default: 0] += 1 }
        let most = held.values.max() ?? 0
        if let oldest = suggestionCandidates.firstIndex(where: { held[keys[Int($0)].kind.app] == most }) {
            suggestionCandidates.remove(at: oldest)
        }
    }

    // MARK: Reading state

    /// The ids of every stack, sorted.
    public var stackIDs: [StackID] { stacks.keys.sorted() }

    /// A stack's configuration.
    public func configuration(of stack: StackID) -> StackConfiguration? { stacks[stack]?.configuration }

    /// The stacks an event is about: the stack it names, or for a donation every stack with a widget of its app.
    public func stacks(affectedBy event: EngineEvent) -> [StackID] {
        switch event {
        case .configureStack(let configuration, _): return [configuration.id]
        case .removeStack(let id, _), .look(let id, _): return [id]
        case .engage(let stack, _, _, _, _): return [stack]
        case .donate(let donation):
            return stacks.compactMap { id, state in state.kinds.contains { $0.app == donation.app } ? id : nil }
        default: return []
        }
    }

    /// A registered widget kind.
    public func kind(_ id: WidgetKindID) -> WidgetKind? { kinds[id] }

    /// How many kinds each app has registered.
    public var kindCountsByApp: [AppID: Int] { kindsByApp.mapValues(\.count) }

    /// A widget instance's configuration, as its stack configured it; `nil` when no stack has the instance.
    public func configuration(ofInstance id: InstanceID) -> Configuration? { instances[id]?.configuration }

    /// A widget instance's kind; `nil` when no stack has the instance.
    public func kind(ofInstance id: InstanceID) -> WidgetKindID? { instances[id]?.kind }

    /// How many Live Activities are visible now: of `app`, or of every app when nil.
    public func visibleLiveActivities(of app: AppID? = nil) -> Int { liveActivities.visibleCount(of: app, at: now) }

    /// The apps with Live Activities kept (visible, or removed and not yet dropped).
    public var liveActivityApps: [AppID] { Array(liveActivities.apps) }

    /// Whether `app`'s activity `id` is visible now (a start under its id is then a conflict).
    public func hasLiveActivity(app: AppID, id: String) -> Bool {
        liveActivities.activity(app: app, id: id, at: now) != nil
    }

    /// Counts for statistics.
    public var counts: (stacks: Int, widgets: Int, kinds: Int, liveActivities: Int) {
        (stacks.count, instances.count, kinds.count, liveActivities.visibleCount(at: now))
    }

    /// The reload budget of an instance at a time.
    public func budget(of instance: InstanceID, at time: Timestamp) throws(CoreError) -> BudgetState {
        guard let state = instances[instance] else { throw .notFound(kind: "instance", id: instance.rawValue) }
        return state.reload.budgetState(at: time)
    }

    /// The reloads sent for an app's instances that no timeline answered yet, oldest first: what a provider that
    /// starts watching is sent first (it may not have been watching when they were sent).
    public func outstandingReloads(of app: AppID) -> [EngineEffect] {
        var requests: [(at: Timestamp, instance: InstanceID, effect: EngineEffect)] = []
        for case let instance? in instances.slots where instance.kind.app == app {
            guard let outstanding = instance.reload.outstanding else { continue }
            let effect = EngineEffect.reloadRequested(
                instance: instance.id, kind: instance.kind, reason: outstanding.reason, at: outstanding.at)
            requests.append((outstanding.at, instance.id, effect))
        }
        return requests.sorted { ($0.at, $0.instance) < ($1.at, $1.instance) }.map(\.effect)
    }

    /// The latest published decision of a stack.
    /// Inlinable: the service reads it on every `GetStack`, and a call into this module on an engine kept in a
    /// class (the service's actor) copies the whole engine first (a retain and a release per stored field).
    @inlinable
    public func published(_ stack: StackID) -> Decision? { stacks[stack]?.published }
}

/// A widget key: one kind with one configuration, the unit behaviour is learned for.
struct WidgetKey: Hashable, Sendable {
    var kind: WidgetKindID
    var configuration: String
}

struct WidgetKeyInfo: Hashable, Sendable {
    var kind: WidgetKindID
    var configuration: Configuration
    /// Instances placed with this key, over all stacks.
    var placed = 0
}

/// One placed widget.
struct InstanceState: Sendable, Hashable {
    var id: InstanceID
    var stack: StackID
    var kind: WidgetKindID
    var configuration: Configuration
    var key: Int32
    var relevance = RelevanceTracker()
    var reload: ReloadScheduler
    var relevantContexts: [RelevantContext] = []
    var group: String?
    /// Times this widget was rotated to the top in the last 24 hours (at most the daily limit are kept).
    var rotations: [Timestamp] = []
    /// Taps, ignored impressions and swipes away the shell reported for this widget.
    var engagement = WidgetEngagement()
}

/// A look at a stack whose outcome (the widget the user goes to next) is not known yet.
struct PendingLook: Sendable, Hashable {
    var time: Timestamp
    var keys: [Int32]
    var matrix: [Double]
    var lastApp: Int32?
    var contexts: [LookContext]
    /// Each row's 0-based place in the order of each simple ranker at the look, `fallbackPlaces[f * rows + row]`
    /// for `f` the index in `StackRanker.fallbacks` (empty when unknown): what `RankerSelector` scores.
    var fallbackPlaces: [Int8] = []

    /// MRU's first widget at the look (a usage key), when the places are known.
    var mruTop: Int32? {
        guard let mru = StackRanker.fallbacks.firstIndex(of: .mru) else { return nil }
        let rows = keys.count
        guard fallbackPlaces.count >= (mru + 1) * rows else { return nil }
        return (0..<rows).first { fallbackPlaces[mru * rows + $0] == 0 }.map { keys[$0] }
    }
}

/// One stack.
@usableFromInline
struct StackState: Sendable, Hashable {
    var configuration: StackConfiguration
    /// The widgets in the user's order, their kinds, and where they are kept: their `InstanceStore` slots and
    /// usage keys (every one placed, so the lists run in parallel).
    var instances: [InstanceID] = []
    var kinds: [WidgetKindID] = []
    var slots: [Int32] = []
    var keys: [Int32] = []
    var ranker = OnlineRanker()
    /// Which ranker orders the stack: the model, or a simple ranker that recently did better.
    var selector = RankerSelector()
    var look: PendingLook?
    var previousLookTarget: Int32?
    /// The top the user saw at the latest look at the stack (what `TopHysteresis` holds).
    var seenTop: String?
    /// The tops at the latest look with a target (the seen one, and MRU's as a usage key), and how much the
    /// hold's margin is raised beyond `TopHysteresis.margin` (`TopHysteresis.adjusted`).
    var labelledTops: LabelledTops?
    var holdExtra = 0.0
    var revision = 0
    /// The stack's current decision: the latest evaluation (at most `Engine.decisionMaxAge` old once published).
    @usableFromInline var published: Decision?
    /// The decision last sent to subscribers (a new revision): what the next evaluation is compared with, so
    /// changes smaller than `Decision.scoreResolution` add up until they are sent.
    var sent: Decision?
    var topSince: Timestamp?
    /// Whether the published top's relevance was withheld by a stability limit when it was decided (it is on top
    /// by behaviour or a swipe, not by its relevance): it must then earn its relevance as any other widget.
    var publishedTopWithheld = false
    /// The last time the top changed by a rotation, a suggestion or a manual swipe.
    var lastRotation: Timestamp?
    /// When the published top, its withheld flag and the last rotation took the values they have (the publish that
    /// last changed one of them); `earlier` holds those before it. A question about a time between the two reads
    /// `earlier` (`asOf`): with only the latest kept, one publish by time alone after a time changed the answer
    /// about that time to an order never shown.
    var stableSince: Timestamp?
    var earlier: EarlierStability?
    var manualSwipe: ManualSwipe?
    /// Suggestions the user swiped away in this stack, and until when each stays out of it
    /// (``Engine/suggestionLifetime`` after the swipe; at most one per candidate, the expired ones dropped).
    var dismissedSuggestions: [DismissedSuggestion] = []
    var dirty = true
    var decidedGeneration = -1

    init(configuration: StackConfiguration) { self.configuration = configuration }
}

/// A stack's stability state before its latest change: the published top (an instance or suggestion id), whether
/// its relevance was withheld, and the last rotation, in force from `since` (unknown when nil: never read), under
/// `revision`.
struct EarlierStability: Sendable, Hashable {
    var since: Timestamp?
    var top: String?
    var topWithheld: Bool
    var lastRotation: Timestamp?
    var revision: Int
}

/// A suggestion swiped away in a stack: its candidate key, kept out of the stack until `until`.
struct DismissedSuggestion: Sendable, Hashable {
    var key: Int32
    var until: Timestamp
}

/// The tops a stack showed at a look with a target: the seen top (an instance id) and MRU's (a usage key).
struct LabelledTops: Sendable, Hashable {
    var seen: String
    var mru: Int32
}

/// The widget the user swiped to, and when: it keeps the top for the grace period.
struct ManualSwipe: Sendable, Hashable {
    var instance: InstanceID
    var time: Timestamp
}

extension CoreError {
    /// The same error with its parameter path under `prefix` (`widgets[2]` + `configuration.city`).
    func prefixed(with prefix: String) -> CoreError {
        if case .invalidParameter(let parameter, let reason) = self {
            return .invalidParameter(parameter: "\(prefix).\(parameter)", reason: reason)
        }
        return self
    }
}
