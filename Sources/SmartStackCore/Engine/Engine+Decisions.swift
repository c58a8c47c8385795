/// How one widget stands in a decision, before it is turned into an entry.
///
/// Its id and kind are the stack's (`StackState.instances[index]`, `kinds[index]`): a standing holds no
/// reference, so building and dropping one costs no reference counting.
struct WidgetStanding {
    /// The widget's place in the user's order.
    var index: Int
    /// Where the widget is kept (`InstanceStore`).
    var slot: Int32
    var behaviour: Double
    var relevance: Double
    var relevanceState: RelevanceState
    var relevantContext: Int?
    var contributions: SignalShares
    /// The multiplier engagement applied to its behaviour (before the stack is normalised again): its
    /// `WidgetEngagement.factor`, or less where a swipe away's cap took it lower (`applyEngagement`).
    var engagementFactor: Double = 1
    var score: Double { behaviour + relevance }
}

/// Everything a decision was made from, kept for explanations.
struct Evaluation {
    var decision: Decision
    var standings: [WidgetStanding]
    /// Widgets whose rotation to the top a stability limit withheld.
    var limited: Set<Int>
    /// Widgets whose relevance a relevance group took away (another widget of the group is surfaced).
    var grouped: Set<Int>
    /// The candidate key suggested on top, if any.
    var suggested: Int32?
    /// The widget the top's hold kept ahead of a likelier challenger (`TopHysteresis`), if any.
    var held: Int?
    /// The candidate key that would be suggested on top but for the minimum time on top, if any.
    var withheldSuggestion: Int32?
}

extension Engine {
    /// The decision for a stack at a time, without publishing it. Its revision is the latest published one.
    public func evaluate(stack id: StackID, at time: Timestamp) throws(CoreError) -> Decision {
        guard let state = stacks[id] else { throw .notFound(kind: "stack", id: id.rawValue) }
        var matrix: [Double] = []
        return evaluation(of: state, at: time, scratch: &matrix).decision
    }

    /// Advances to `time` and publishes every stack whose order changed; returns the published decisions.
    @discardableResult
    public mutating func publish(at time: Timestamp) -> (decisions: [Decision], effects: [EngineEffect]) {
        let effects = advance(to: time)
        var published: [Decision] = []
        // Only stale stacks are decided, in id order so publishing is deterministic; sorting just those keeps a
        // publish after one call cheap however many stacks there are.
        for id in stacks.compactMap({ isStale($0.value, at: time) ? $0.key : nil }).sorted() {
            if let decision = commit(stack: id, at: time) { published.append(decision) }
        }
        return (published, effects)
    }

    /// The longest a decision is reused: a stack decided longer ago than this is decided again at the next
    /// publish, so scores that drift with time alone (recency, time of day) are never older than this.
    public static let decisionMaxAge = 60.0

    /// Whether a stack must be decided again at `time`: its inputs changed since it was last decided, or its
    /// decision is older than `decisionMaxAge`.
    func isStale(_ state: StackState, at time: Timestamp) -> Bool {
        state.dirty || state.decidedGeneration != generation
            || state.published.map { time.seconds(since: $0.time) >= Self.decisionMaxAge } ?? true
    }

    /// Whether publishing at `time` could change anything: a scheduled change is due, or some stack must be
    /// decided again. When `false`, `publish(at:)` would publish nothing and fire nothing.
    public func needsPublish(at time: Timestamp) -> Bool {
        if let next = timers.nextTime, next <= time.microseconds { return true }
        // A loop, not `contains` with a closure: the closure would capture (copy) the engine.
        for state in stacks.values where isStale(state, at: time) { return true }
        return false
    }

    /// The earliest time `needsPublish` can turn true if no event is applied meanwhile (the next timer, or the
    /// oldest decision reaching `decisionMaxAge`); `nil` when a stack must be decided already. The engine's owner
    /// uses it to answer reads without looking at every stack each time.
    public func nextPublishDue() -> Timestamp? {
        var due = timers.nextTime ?? .max
        let maxAge = Int64(Self.decisionMaxAge * 1_000_000)
        for state in stacks.values {
            guard !state.dirty, state.decidedGeneration == generation, let published = state.published else {
                return nil
            }
            due = min(due, published.time.microseconds &+ maxAge)
        }
        return Timestamp(microseconds: due)
    }

    /// Decides one stack at `time`. The decision becomes the stack's current one either way (so reads see
    /// scores and reasons as of `time`); it is published (a new revision, sent to subscribers) when its order,
    /// a reason or a score (by `Decision.scoreResolution` or more) changed. Returns it if published.
    @discardableResult
    public mutating func commit(stack id: StackID, at time: Timestamp) -> Decision? {
        guard var state = stacks[id] else { return nil }
        // Taken out while in use: were `scratch` still to hold it, filling it would copy it first.
        var matrix = scratch
        scratch = []
        let result = evaluation(of: state, at: time, scratch: &matrix)
        scratch = matrix
        state.dirty = false
        state.decidedGeneration = generation
        var decision = result.decision
        // The stability state before this publish: kept as `earlier` once this publish changes it, for questions
        // about a time before it.
        let before = EarlierStability(
            since: state.stableSince, top: state.published?.topWidget?.instance,
            topWithheld: state.publishedTopWithheld, lastRotation: state.lastRotation, revision: state.revision)
        state.publishedTopWithheld =
            decision.topWidget.flatMap { top in state.instances.firstIndex { $0.rawValue == top.instance } }
            .map(result.limited.contains) ?? false
        if let key = result.suggested, let lastUse = usage.lastUse(of: key) {
            // The suggestion leaves when its 24 hours since the candidate's last donation are over.
            timers.schedule(.stack(id), at: Timestamp(microseconds: lastUse).adding(seconds: Self.suggestionLifetime))
        }
        guard !decision.hasSameContent(as: state.sent) else {
            decision.revision = state.revision
            state.published = decision
            state.keepEarlier(before, changedAt: time)
            stacks[id] = state
            return nil
        }
        state.revision += 1
        decision.revision = state.revision
        // The top is the first widget (or suggestion): a Live Activity above the widgets neither rotates nor hides a
        // rotation below it.
        if decision.topWidget?.instance != state.published?.topWidget?.instance {
            state.topSince = time
            if let top = decision.topWidget, top.reason == .relevance || top.reason == .suggestion {
                state.lastRotation = time
                timers.schedule(.stack(id), at: time.adding(seconds: settings.minimumTimeOnTop))
                if let instance = try? InstanceID(top.instance), var widget = instances[instance] {
                    widget.rotations = widget.rotations.filter { time.seconds(since: $0) < 86_400 } + [time]
                    if widget.rotations.count > settings.maxRotationsPerWidgetPerDay { widget.rotations.removeFirst() }
                    instances[instance] = widget
                    if let oldest = widget.rotations.first {
                        timers.schedule(.stack(id), at: oldest.adding(seconds: 86_400))
                    }
                }
            }
        }
        state.published = decision
        state.sent = decision
        state.keepEarlier(before, changedAt: time)
        stacks[id] = state
        return decision
    }

    /// The full evaluation of a stack at a time: a pure function of the engine's state.
    ///
    /// The hot path of every query: widget ids, kinds and keys come from the stack's own lists, a widget's state
    /// is read (in place, through its slot) only when it has relevance inputs, and the feature matrix goes into
    /// `matrix`, which callers may reuse.
    func evaluation(of state: StackState, at time: Timestamp, scratch matrix: inout [Double]) -> Evaluation {
        let configuration = state.configuration
        let n = state.slots.count

        // Relevance: the provider's normalised timeline score, or a relevant context in force.
        var standings: [WidgetStanding] = []
        standings.reserveCapacity(n)
        for index in 0..<n {
            let slot = state.slots[index]
            var relevanceState = RelevanceState.nothing
            var active: Int?
            if instances.hasRelevanceInputs[Int(slot)] {
                relevanceState = instances.slots[Int(slot)]?.relevance.state(at: time) ?? .nothing
                if let relevantContexts = instances.slots[Int(slot)]?.relevantContexts, !relevantContexts.isEmpty {
                    active = RelevantContext.firstActive(relevantContexts, at: time, contexts: contexts)
                }
            }
            var relevance = relevanceState.status == .relevant ? relevanceState.normalized : 0
            if let active { relevance = max(relevance, max(0.5, 1 - 0.1 * Double(active))) }
            // A widget the user swiped away is not surfaced by relevance while it is demoted.
            if relevance > 0, instances.slots[Int(slot)]?.engagement.isDemoted(at: time) == true { relevance = 0 }
            var shares = SignalShares()
            // Relevance is a share of the score only where it counts (not with Smart Rotate off).
            if relevance > 0, configuration.smartRotate { shares[.relevance] = relevance }
            standings.append(
                WidgetStanding(
                    index: index, slot: slot, behaviour: 1 / Double(n),
                    relevance: configuration.smartRotate ? relevance : 0, relevanceState: relevanceState,
                    relevantContext: active, contributions: shares))
        }

        // Behaviour: the learned model's probability that the user goes to each widget next. Suggestions follow
        // their own switch: with Smart Rotate off the model still decides whether a candidate is suggested, and
        // the widgets keep the user's order (their standings as they were before the model).
        var candidate: (key: Int32, probability: Double, contributions: SignalShares)?
        var held: Int?
        let unranked = configuration.smartRotate ? [] : standings
        if configuration.smartRotate || configuration.suggestions, n > 0 {
            let candidates = configuration.suggestions ? suggestionCandidates(for: state, at: time) : []
            let keys = candidates.isEmpty ? state.keys : state.keys + candidates
            // The widgets' rows are those of the stack's widgets alone (`FeatureQuery.widgets`): the rows a look
            // records and the ranker learns from, whatever candidates are asked about beside them. Were the
            // candidates counted in the widgets' ranks and shares, the widgets would be ranked on other inputs
            // than those learned from, and their order would change with apps outside the stack (a launcher
            // that registers every app it sees, as smartstack-desktop does).
            usage.features(
                for: FeatureQuery(
                    keys: keys, time: time, contextPairs: contextPairs, previousLookTarget: state.previousLookTarget,
                    widgets: n),
                into: &matrix)
            // Every row's probability among all, for the suggestion (only with candidates); the widgets' among
            // themselves, a softmax of their own scores: the same bits with or without candidates.
            var probabilities = state.ranker.scores(matrix, rows: keys.count)
            var withCandidates: [Double] = []
            if !candidates.isEmpty {
                withCandidates = probabilities
                OnlineRanker.softmax(&withCandidates)
                probabilities.removeLast(candidates.count)
            }
            OnlineRanker.softmax(&probabilities)
            var widgetTotal = 0.0
            for i in 0..<n { widgetTotal += probabilities[i] }
            for i in 0..<n { standings[i].behaviour = widgetTotal > 0 ? probabilities[i] / widgetTotal : 1 / Double(n) }
            // The candidates' rows too (after the widgets'), against the same average widget: a suggestion's entry
            // says what made it likelier than the stack's widgets.
            var candidateShares: [SignalShares] = []
            state.ranker.contributions(matrix: matrix, rows: n, count: n + candidates.count) { i, shares in
                guard i < n else {
                    candidateShares.append(shares)
                    return
                }
                let relevance = standings[i].contributions[.relevance]
                standings[i].contributions = shares
                if let relevance { standings[i].contributions[.relevance] = relevance }
            }
            // A simple ranker that has recently done better for this stack orders it instead of the model.
            let choice = state.selector.choice
            if let signal = choice.signal, n > 1 {
                applyFallback(choice, signal: signal, state: state, at: time, to: &standings)
            }
            // The model's published top stays unless a challenger is clearly likelier (`TopHysteresis`).
            if choice == .model { held = holdPublishedTop(of: state, standings: &standings) }
            // What the user did with each widget in the stack (taps, ignored impressions, swipes away).
            applyEngagement(at: time, to: &standings)
            // A candidate is suggested when the user is more likely to want it than every placed widget.
            if let best = candidates.indices.max(by: { withCandidates[n + $0] < withCandidates[n + $1] }),
                withCandidates[n + best] > (withCandidates.prefix(n).max() ?? 0)
            {
                candidate = (
                    candidates[best], withCandidates[n + best],
                    best < candidateShares.count ? candidateShares[best] : SignalShares()
                )
            }
        }
        if !configuration.smartRotate {
            standings = unranked
            held = nil
        }

        // Relevance groups: of an app's widgets in one group, only the most relevant may be surfaced.
        var grouped: Set<Int> = []
        var strongest: [String: Int] = [:]
        for index in 0..<n where standings[index].relevance > 0 {
            guard let group = instances.slots[Int(standings[index].slot)]?.group else { continue }
            let groupKey = "\(state.kinds[index].app)\u{0}\(group)"
            if let other = strongest[groupKey] {
                let loser = standings[other].relevance >= standings[index].relevance ? index : other
                if loser == other { strongest[groupKey] = index }
                grouped.insert(loser)
            } else {
                strongest[groupKey] = index
            }
        }
        for index in grouped {
            standings[index].relevance = 0
            standings[index].contributions[.relevance] = nil
        }

        // Highest score first, ties in the user's order.
        var scores = standings.map(\.score)
        var order = Array(0..<n)
        if configuration.smartRotate { Self.sortByScore(&order, scores) }

        // Stability: a rotation by relevance is withheld while the last rotation is younger than the minimum
        // time on top, or when the widget has used its rotations for the day. Developer mode lifts both.
        // Only what happened at or before `time` counts: a question about an earlier time than the last
        // publish sees the stability state as it was then (`StackState.asOf`).
        // A manual swipe's grace holds the top as well: relevance does not rotate another widget up meanwhile.
        var limited: Set<Int> = []
        let topInForce = state.publishedTop(asOf: time)
        // While a manual swipe is in force its widget is the top this decision publishes, so the widget it put down
        // is no longer the published top: exempt here, the swipe's decision labelled it `relevance` and deciding
        // again after publishing (or `Explain`) said `rotationLimited`, a relabel with no event.
        let swipe = configuration.developerMode ? nil : state.manualSwipe(asOf: time, grace: settings.swipeGracePeriod)
        let publishedTop = swipe?.instance.rawValue ?? topInForce
        // The published top keeps its relevance unless a limit withheld it when the top was decided (it is on top by
        // behaviour or a swipe): then it earns it as any other widget would. Were it exempt for being the published
        // top, deciding again right after publishing would restore what the publish withheld (`GetStack` and
        // `Explain` disagreed on its reason and score, and the next publish let the rotation through inside the
        // minimum time on top, uncounted); were every top not on top by relevance alone subject to the limits, a top
        // that its rotation put there and a smaller relevance keeps there would lose it at the next decision.
        let topKeepsRelevance = topInForce != nil && !state.publishedTopWithheld(asOf: time)
        let topCanRotate =
            configuration.developerMode
            || state.lastRotation(asOf: time).map { time.seconds(since: $0) >= settings.minimumTimeOnTop } ?? true
        let relevanceCanRotate = topCanRotate && swipe == nil
        if configuration.smartRotate, !configuration.developerMode {
            while let first = order.first, standings[first].relevance > 0,
                state.instances[first].rawValue != publishedTop || !topKeepsRelevance,
                state.instances[first] != configuration.pinned
            {
                // Behaviour alone would put it on top (ties go to the user's order): no rotation.
                let own = standings[first].behaviour
                let beaten = order.dropFirst().contains { other in
                    scores[other] > own || (scores[other] == own && other < first)
                }
                // A top whose reason would read `relevance` counts as a rotation either way.
                guard beaten || standings[first].relevance >= own else { break }
                let rotations = instances.slots[Int(standings[first].slot)]?.rotations ?? []
                let rotationsToday = Self.rotationsInDay(rotations, before: time)
                guard !relevanceCanRotate || rotationsToday >= settings.maxRotationsPerWidgetPerDay else { break }
                limited.insert(first)
                standings[first].relevance = 0
                standings[first].contributions[.relevance] = nil
                scores[first] = standings[first].score
                Self.sortByScore(&order, scores)
            }
        }

        // The user's own choices come first: a recent manual swipe, then the pin.
        if let swipe = state.manualSwipe(asOf: time, grace: settings.swipeGracePeriod),
            let index = state.instances.firstIndex(of: swipe.instance)
        {
            order.removeAll { $0 == index }
            order.insert(index, at: 0)
        }
        if let pinned = configuration.pinned, let index = state.instances.firstIndex(of: pinned) {
            order.removeAll { $0 == index }
            order.insert(index, at: 0)
        }

        var entries: [DecisionEntry] = []
        entries.reserveCapacity(n + 1)
        let activities =
            configuration.liveActivities && !liveActivities.isEmpty
            ? liveActivities.activities(of: Set(state.kinds.map(\.app)), at: time) : []
        if !activities.isEmpty {
            for activity in activities {
                entries.append(
                    DecisionEntry(
                        instance: "liveActivity:\(activity.app)/\(activity.id)", kind: nil, position: entries.count,
                        score: 0,
                        suggested: false, pinned: false, reason: .liveActivity, contributions: SignalShares(),
                        liveActivity: LiveActivityEntry(activity: activity, state: activity.phase(at: time))))
            }
        }
        for index in order {
            entries.append(
                DecisionEntry(
                    instance: state.instances[index].rawValue, kind: state.kinds[index], position: entries.count,
                    score: scores[index], suggested: false, pinned: configuration.pinned == state.instances[index],
                    reason: reason(for: standings[index], state: state, limited: limited, grouped: grouped, at: time),
                    contributions: standings[index].contributions))
        }
        // A suggestion goes on top of the widgets (below a pin or a manual swipe) when the top may change; else it
        // waits, and `Explain` says so.
        var withheldSuggestion: Int32?
        if let candidate, !topCanRotate, publishedTop != suggestionID(candidate.key) {
            withheldSuggestion = candidate.key
        } else if let candidate {
            let info = keys[Int(candidate.key)]
            let protected = entries.prefix {
                $0.reason == .liveActivity || $0.reason == .pinned || $0.reason == .manualSwipe
            }
            entries.insert(
                DecisionEntry(
                    instance: suggestionID(candidate.key), kind: info.kind, position: 0, score: candidate.probability,
                    suggested: true, pinned: false, reason: .suggestion, contributions: candidate.contributions),
                at: protected.count)
            for position in entries.indices { entries[position].position = position }
        }
        let decision = Decision(
            stack: configuration.id, revision: state.revision(asOf: time), time: time, entries: entries)
        let suggested = candidate.flatMap { candidate in
            entries.contains { $0.reason == .suggestion } ? candidate.key : nil
        }
        return Evaluation(
            decision: decision, standings: standings, limited: limited, grouped: grouped, suggested: suggested,
            held: held, withheldSuggestion: withheldSuggestion)
    }
}

extension StackState {
    /// Keeps `before` (the stability state before a publish at `time`) as `earlier` when the publish changed it.
    mutating func keepEarlier(_ before: EarlierStability, changedAt time: Timestamp) {
        guard
            published?.topWidget?.instance != before.top || publishedTopWithheld != before.topWithheld
                || lastRotation != before.lastRotation
        else { return }
        earlier = before
        stableSince = time
    }

    /// Whether `time` is at or after the latest change of the stability state (else `earlier` was in force, or, before
    /// its own start, nothing known).
    private func isLatest(at time: Timestamp) -> Bool {
        guard let published else { return false }
        return time >= (stableSince ?? published.time)
    }

    /// The top widget (or suggestion) published at or before `time`, in force then: the latest, or the one before it
    /// for a time before the latest change.
    func publishedTop(asOf time: Timestamp) -> String? {
        if isLatest(at: time) { return published?.topWidget?.instance }
        guard let earlier, let since = earlier.since, time >= since else { return nil }
        return earlier.top
    }

    /// Whether the top in force at `time` had its relevance withheld when it was decided.
    func publishedTopWithheld(asOf time: Timestamp) -> Bool {
        if isLatest(at: time) { return publishedTopWithheld }
        guard let earlier, let since = earlier.since, time >= since else { return false }
        return earlier.topWithheld
    }

    /// The revision a decision about `time` carries: the latest, or for a time before the latest change of the
    /// stability state the one in force before it.
    func revision(asOf time: Timestamp) -> Int {
        guard !isLatest(at: time), let earlier, let since = earlier.since, time >= since else { return revision }
        return earlier.revision
    }

    /// The last rotation at or before `time`: the latest, or the one before it.
    func lastRotation(asOf time: Timestamp) -> Timestamp? {
        if let lastRotation, lastRotation <= time { return lastRotation }
        guard let earlier = earlier?.lastRotation, earlier <= time else { return nil }
        return earlier
    }

    /// The manual swipe in force at `time`: made at or before it, within the grace period.
    func manualSwipe(asOf time: Timestamp, grace: Double) -> ManualSwipe? {
        manualSwipe.flatMap { swipe in
            let age = time.seconds(since: swipe.time)
            return age >= 0 && age < grace ? swipe : nil
        }
    }
}
