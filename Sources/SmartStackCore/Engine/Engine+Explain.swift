/// Why one widget is where it is: every input of its place in the decision.
public struct WidgetExplanation: Sendable, Hashable {
    public var instance: InstanceID
    public var kind: WidgetKindID
    public var position: Int
    public var reason: DecisionReason
    public var score: Double
    /// The learned model's probability that the user goes to this widget next (0…1).
    public var behaviour: Double
    /// The relevance added to the score (normalised timeline relevance or a relevant context), 0…1.
    public var relevance: Double
    public var contributions: SignalShares
    /// The timeline's state: current entry, raw and normalised score, expiry.
    public var relevanceState: RelevanceState
    /// Index of the relevant context in force, in the provider's priority order.
    public var relevantContext: Int?
    public var relevanceGroup: String?
    /// Another widget of its relevance group is surfaced, so its relevance does not count now.
    public var suppressedByGroup: Bool
    /// A stability limit withheld its rotation to the top.
    public var rotationLimited: Bool
    public var rotationsToday: Int
    public var rotationsLeftToday: Int
    /// What withholds its rotation to the top, when `rotationLimited`.
    public var rotationLimitedBy: RotationLimit?
    /// When it may next be rotated to the top: the later of the stack's next allowed rotation and, once its
    /// rotations for the day are used, 24 hours after the oldest of them.
    public var nextRotationAllowed: Timestamp
    /// What the shell reported about it (taps, ignored impressions, a swipe away) and the resulting factor.
    public var engagement: EngagementState
    /// Seconds it has been on top, when it is on top.
    public var timeOnTop: Double?
    public var pinned: Bool
    /// Until when a manual swipe keeps it on top.
    public var manualSwipeUntil: Timestamp?
    public var budget: BudgetState
    /// When its next reload is due or, if withheld, when it can happen.
    public var nextReload: Timestamp?
}

/// The stability limit that withholds a widget's rotation to the top.
public enum RotationLimit: String, Sendable, Hashable, CaseIterable {
    /// The stack's last rotation is younger than the minimum time on top.
    case minimumTimeOnTop
    /// A manual swipe keeps another widget on top for the grace period.
    case manualSwipe
    /// The widget has used its rotations for the day.
    case dailyLimit
}

/// A widget's engagement at a time, as `WidgetEngagement` counts it.
public struct EngagementState: Sendable, Hashable {
    /// Decayed taps (a swipe to it counts half).
    public var taps: Double
    /// Decayed impressions since its last tap.
    public var ignoredImpressions: Double
    /// Until when a swipe away demotes it, while it does.
    public var demotedUntil: Timestamp?
    /// The multiplier of its behaviour probability (before the stack is normalised again): its engagement's
    /// factor, or less where a swipe away keeps it at half the lowest widget not swiped away.
    public var factor: Double
}

/// Why a stack shows what it shows.
public struct StackExplanation: Sendable, Hashable {
    public var decision: Decision
    public var smartRotate: Bool
    public var suggestions: Bool
    public var developerMode: Bool
    /// When the top last changed by rotation, suggestion or manual swipe.
    public var lastRotation: Timestamp?
    /// When the next rotation may happen: now, unless the minimum time on top or a manual swipe's grace period
    /// holds it back (the later of the two). A widget's own daily limit is in its `nextRotationAllowed`.
    public var nextRotationAllowed: Timestamp
    /// Looks at the stack the ranker has learned from.
    public var learnedFromLooks: Int
    /// The ranker that orders the stack's behaviour now: the learned model, or a simple ranker that has recently
    /// predicted this user's choices clearly better (then the widgets' contributions name it, e.g. `fallbackMRU`).
    public var ranker: StackRanker
    /// Each ranker's recent performance (decayed sum of reciprocal ranks over about the last 200 looks), by name.
    public var rankerPerformance: [String: Double]
    /// How many times as likely as the top the user saw at their latest look a challenger must be to take its
    /// place (`TopHysteresis`): 1.3, raised for this stack while its top changes more than 1.25 times as often as
    /// MRU's would.
    public var holdMargin: Double
    /// The widget that hold keeps first among the widgets in this order although a challenger is likelier (its
    /// behaviour raised just above the challenger's), if any.
    public var heldTop: InstanceID?
    /// A suggestion (its entry's instance id) that would go on top but that the minimum time on top (since the last
    /// rotation or manual swipe) keeps out for now: inserted once that time has passed, if it is still the
    /// likeliest; `nil` when none waits.
    public var withheldSuggestion: String?
    public var widgets: [WidgetExplanation]
}

extension Engine {
    /// Explains a stack's decision at a time, for every widget or one.
    public func explain(stack id: StackID, instance: InstanceID? = nil, at time: Timestamp) throws(CoreError)
        -> StackExplanation
    {
        guard let state = stacks[id] else { throw .notFound(kind: "stack", id: id.rawValue) }
        // A suggestion's entry is in the order (with its contributions); it has no widget explanation.
        if let instance, !state.instances.contains(instance), suggestionKey(named: instance, in: state) == nil {
            throw .invalidParameter(parameter: "instance", reason: "instance '\(instance)' is not in stack '\(id)'")
        }
        var matrix: [Double] = []
        let result = evaluation(of: state, at: time, scratch: &matrix)
        let developer = state.configuration.developerMode
        let lastRotation = state.lastRotation(asOf: time)
        let swipe = state.manualSwipe(asOf: time, grace: settings.swipeGracePeriod)
        let minimumEnd = lastRotation?.adding(seconds: settings.minimumTimeOnTop) ?? time
        let graceEnd = swipe?.time.adding(seconds: settings.swipeGracePeriod) ?? time
        let nextRotation = developer ? time : max(time, minimumEnd, graceEnd)
        var widgets: [WidgetExplanation] = []
        for standing in result.standings where instance == nil || state.instances[standing.index] == instance {
            let id = state.instances[standing.index]
            guard let widget = instances[id] else { continue }
            let position = result.decision.entries.firstIndex { $0.instance == id.rawValue } ?? -1
            let rotations = Self.rotationsInDay(widget.rotations, before: time)
            let swipeUntil = swipe.flatMap { swipe in
                swipe.instance == id ? swipe.time.adding(seconds: settings.swipeGracePeriod) : nil
            }
            let isTop = result.decision.topWidget?.instance == id.rawValue
            var widgetNext = nextRotation
            let dailyLimitReached = !developer && rotations >= settings.maxRotationsPerWidgetPerDay
            if dailyLimitReached,
                let oldest = widget.rotations.filter({ $0 <= time && time.seconds(since: $0) < 86_400 }).min()
            {
                widgetNext = max(widgetNext, oldest.adding(seconds: 86_400))
            }
            var limitedBy: RotationLimit?
            if result.limited.contains(standing.index) {
                limitedBy =
                    dailyLimitReached
                    ? .dailyLimit : (swipe != nil && graceEnd >= minimumEnd) ? .manualSwipe : .minimumTimeOnTop
            }
            let (taps, ignored) = widget.engagement.decayed(at: time)
            let engagement = EngagementState(
                taps: taps, ignoredImpressions: ignored,
                demotedUntil: widget.engagement.isDemoted(at: time) ? widget.engagement.demotedUntil : nil,
                factor: standing.engagementFactor)
            widgets.append(
                WidgetExplanation(
                    instance: id, kind: state.kinds[standing.index], position: position,
                    reason: position >= 0 ? result.decision.entries[position].reason : .behaviour,
                    score: standing.score, behaviour: standing.behaviour, relevance: standing.relevance,
                    contributions: standing.contributions, relevanceState: standing.relevanceState,
                    relevantContext: standing.relevantContext, relevanceGroup: widget.group,
                    suppressedByGroup: result.grouped.contains(standing.index),
                    rotationLimited: result.limited.contains(standing.index), rotationsToday: rotations,
                    rotationsLeftToday: developer
                        ? settings.maxRotationsPerWidgetPerDay
                        : max(0, settings.maxRotationsPerWidgetPerDay - rotations),
                    rotationLimitedBy: limitedBy, nextRotationAllowed: widgetNext, engagement: engagement,
                    timeOnTop: isTop && state.publishedTop(asOf: time) == id.rawValue
                        ? state.topSince.flatMap { $0 <= time ? time.seconds(since: $0) : nil } : nil,
                    pinned: state.configuration.pinned == id, manualSwipeUntil: swipeUntil,
                    budget: widget.reload.budgetState(at: time),
                    nextReload: widget.reload.withheldUntil ?? widget.reload.dueDate))
        }
        return StackExplanation(
            decision: result.decision, smartRotate: state.configuration.smartRotate,
            suggestions: state.configuration.suggestions, developerMode: developer, lastRotation: lastRotation,
            nextRotationAllowed: nextRotation, learnedFromLooks: state.ranker.updates,
            ranker: state.configuration.smartRotate ? state.selector.choice : .model,
            rankerPerformance: Dictionary(
                uniqueKeysWithValues: StackRanker.allCases.map { ($0.name, state.selector.performance(of: $0)) }),
            holdMargin: TopHysteresis.ratio(extra: state.holdExtra), heldTop: heldTop(result, state: state),
            withheldSuggestion: result.withheldSuggestion.map(suggestionID),
            widgets: widgets)
    }

    /// The widget the top's hold raised, when it is first among the stack's widgets in the decision (pins,
    /// relevance and engagement come after the hold and may put another widget first).
    private func heldTop(_ result: Evaluation, state: StackState) -> InstanceID? {
        guard let held = result.held else { return nil }
        let first = result.decision.entries.first { !$0.suggested && $0.liveActivity == nil }
        return first?.instance == state.instances[held].rawValue ? state.instances[held] : nil
    }
}
