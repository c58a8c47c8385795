/// How one widget stands in a decision, before it is turned into an entry.
struct WidgetStanding {
    var index: Int
    var instance: InstanceID
    var kind: WidgetKindID
    var behaviour: Double
    var relevance: Double
    var relevanceState: RelevanceState
    var relevantContext: Int?
    var contributions: SignalShares
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
        for id in stacks.keys.sorted() {
            guard let state = stacks[id], state.dirty || state.decidedGeneration != generation else { continue }
            if let decision = commit(stack: id, at: time) { published.append(decision) }
        }
        return (published, effects)
    }

    /// Whether publishing at `time` could change anything: a scheduled change is due, or some stack's inputs
    /// changed since it was last decided. When `false`, `publish(at:)` would publish nothing and fire nothing.
    public func needsPublish(at time: Timestamp) -> Bool {
        if let next = timers.nextTime, next <= time.microseconds { return true }
        return stacks.values.contains { $0.dirty || $0.decidedGeneration != generation }
    }

    /// Decides one stack at `time` and publishes the decision if its order changed. Returns it if published.
    @discardableResult
    public mutating func commit(stack id: StackID, at time: Timestamp) -> Decision? {
        guard var state = stacks[id] else { return nil }
        var matrix = scratch
        let result = evaluation(of: state, at: time, scratch: &matrix)
        scratch = matrix
        state.dirty = false
        state.decidedGeneration = generation
        var decision = result.decision
        guard !decision.hasSameOrder(as: state.published) else {
            stacks[id] = state
            return nil
        }
        state.revision += 1
        decision.revision = state.revision
        if decision.top != state.published?.top {
            state.topSince = time
            if let top = decision.entries.first, top.reason == .relevance || top.reason == .suggestion {
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
        stacks[id] = state
        return decision
    }

    /// The full evaluation of a stack at a time: a pure function of the engine's state.
    func evaluation(of state: StackState, at time: Timestamp, scratch matrix: inout [Double]) -> Evaluation {
        let configuration = state.configuration
        let widgets = state.instances.compactMap { instances[$0] }
        let n = widgets.count
        var standings: [WidgetStanding] = []
        standings.reserveCapacity(n)

        // Behaviour: the learned model's probability that the user goes to each widget next.
        var behaviour = Array(repeating: n > 0 ? 1 / Double(n) : 0, count: n)
        var contributions = Array(repeating: SignalShares(), count: n)
        var candidate: (key: Int32, probability: Double)?
        if configuration.smartRotate, n > 0 {
            let candidates = configuration.suggestions ? suggestionCandidates(for: state, widgets: widgets) : []
            let keys = widgets.map(\.key) + candidates
            usage.features(
                for: FeatureQuery(
                    keys: keys, time: time, contextPairs: contextPairs, previousLookTarget: state.previousLookTarget),
                into: &matrix)
            let probabilities = OnlineRanker.probabilities(state.ranker.scores(matrix, rows: keys.count))
            let widgetTotal = probabilities.prefix(n).reduce(0, +)
            for i in 0..<n { behaviour[i] = widgetTotal > 0 ? probabilities[i] / widgetTotal : 1 / Double(n) }
            contributions = state.ranker.contributions(matrix: matrix, rows: keys.count, count: n)
            // A candidate is suggested when the user is more likely to want it than every placed widget.
            if let best = candidates.indices.max(by: { probabilities[n + $0] < probabilities[n + $1] }),
                probabilities[n + best] > (probabilities.prefix(n).max() ?? 0)
            {
                candidate = (candidates[best], probabilities[n + best])
            }
        }

        // Relevance: the provider's normalised timeline score, or a relevant context in force.
        for (index, widget) in widgets.enumerated() {
            let relevanceState = widget.relevance.state(at: time)
            var relevance = relevanceState.status == .relevant ? relevanceState.normalized : 0
            let active = RelevantContext.firstActive(widget.relevantContexts, at: time, contexts: contexts)
            if let active { relevance = max(relevance, max(0.5, 1 - 0.1 * Double(active))) }
            var shares = contributions[index]
            if relevance > 0 { shares[.relevance] = relevance }
            standings.append(
                WidgetStanding(
                    index: index, instance: widget.id, kind: widget.kind, behaviour: behaviour[index],
                    relevance: configuration.smartRotate ? relevance : 0, relevanceState: relevanceState,
                    relevantContext: active, contributions: shares))
        }

        // Relevance groups: of an app's widgets in one group, only the most relevant may be surfaced.
        var grouped: Set<Int> = []
        var strongest: [String: Int] = [:]
        for standing in standings where standing.relevance > 0 {
            guard let group = widgets[standing.index].group else { continue }
            let groupKey = "\(standing.kind.app)\u{0}\(group)"
            if let other = strongest[groupKey] {
                let loser = standings[other].relevance >= standing.relevance ? standing.index : other
                if loser == other { strongest[groupKey] = standing.index }
                grouped.insert(loser)
            } else {
                strongest[groupKey] = standing.index
            }
        }
        for index in grouped { standings[index].relevance = 0 }

        var order = Array(0..<n)
        func sortOrder() {
            order.sort { a, b in
                let sa = standings[a].score
                let sb = standings[b].score
                return sa != sb ? sa > sb : a < b
            }
        }
        if configuration.smartRotate { sortOrder() }

        // Stability: a rotation by relevance is withheld while the last rotation is younger than the minimum
        // time on top, or when the widget has used its rotations for the day. Developer mode lifts both.
        var limited: Set<Int> = []
        let publishedTop = state.published?.top
        let topCanRotate = configuration.developerMode
            || state.lastRotation.map { time.seconds(since: $0) >= settings.minimumTimeOnTop } ?? true
        if configuration.smartRotate, !configuration.developerMode {
            while let first = order.first, standings[first].relevance > 0, widgets[first].id.rawValue != publishedTop {
                // Behaviour alone would put it on top (ties go to the user's order): no rotation.
                let own = standings[first].behaviour
                let beaten = order.dropFirst().contains { other in
                    standings[other].score > own || (standings[other].score == own && other < first)
                }
                // A top whose reason would read `relevance` counts as a rotation either way.
                guard beaten || standings[first].relevance >= own else { break }
                let rotationsToday = widgets[first].rotations.count { time.seconds(since: $0) < 86_400 }
                guard !topCanRotate || rotationsToday >= settings.maxRotationsPerWidgetPerDay else { break }
                limited.insert(first)
                standings[first].relevance = 0
                sortOrder()
            }
        }

        // The user's own choices come first: a recent manual swipe, then the pin.
        if let swipe = state.manualSwipe, time.seconds(since: swipe.time) < settings.swipeGracePeriod,
            let index = widgets.firstIndex(where: { $0.id == swipe.instance })
        {
            order.removeAll { $0 == index }
            order.insert(index, at: 0)
        }
        if let pinned = configuration.pinned, let index = widgets.firstIndex(where: { $0.id == pinned }) {
            order.removeAll { $0 == index }
            order.insert(index, at: 0)
        }

        var entries: [DecisionEntry] = []
        let activities = configuration.liveActivities ? liveActivities.activities(at: time) : []
        if !activities.isEmpty {
            let apps = Set(widgets.map(\.kind.app))
            for activity in activities where apps.contains(activity.app) {
                entries.append(
                    DecisionEntry(
                        instance: "liveActivity:\(activity.app)/\(activity.id)", kind: nil, position: 0, score: 0,
                        suggested: false, pinned: false, reason: .liveActivity, contributions: SignalShares()))
            }
        }
        for index in order {
            let standing = standings[index]
            entries.append(
                DecisionEntry(
                    instance: standing.instance.rawValue, kind: standing.kind, position: 0, score: standing.score,
                    suggested: false, pinned: configuration.pinned == standing.instance,
                    reason: reason(for: standing, state: state, limited: limited, grouped: grouped, at: time),
                    contributions: standing.contributions))
        }
        // A suggestion goes on top of the widgets (below a pin or a manual swipe) when the top may change.
        if let candidate, topCanRotate || publishedTop == suggestionID(candidate.key) {
            let info = keys[Int(candidate.key)]
            let protected = entries.prefix { $0.reason == .liveActivity || $0.reason == .pinned || $0.reason == .manualSwipe }
            entries.insert(
                DecisionEntry(
                    instance: suggestionID(candidate.key), kind: info.kind, position: 0, score: candidate.probability,
                    suggested: true, pinned: false, reason: .suggestion, contributions: SignalShares()),
                at: protected.count)
        }
        for position in entries.indices { entries[position].position = position }
        let decision = Decision(stack: configuration.id, revision: state.revision, time: time, entries: entries)
        return Evaluation(decision: decision, standings: standings, limited: limited, grouped: grouped)
    }

    func reason(
        for standing: WidgetStanding, state: StackState, limited: Set<Int>, grouped: Set<Int>, at time: Timestamp
    ) -> DecisionReason {
        let configuration = state.configuration
        if configuration.pinned == standing.instance { return .pinned }
        if let swipe = state.manualSwipe, swipe.instance == standing.instance,
            time.seconds(since: swipe.time) < settings.swipeGracePeriod
        {
            return .manualSwipe
        }
        if limited.contains(standing.index) { return .rotationLimited }
        if !configuration.smartRotate { return .userOrder }
        if standing.relevance > 0, standing.relevance >= standing.behaviour { return .relevance }
        switch standing.relevanceState.status {
        case .notRelevant: return .notRelevant
        case .expired: return .expired
        case .none, .relevant: break
        }
        var engagement = 0.0
        var others = 0.0
        for (signal, share) in standing.contributions.nonZero {
            if signal == .engagement { engagement = share } else if signal != .relevance { others = max(others, share) }
        }
        return engagement > 0 && engagement > others ? .engagement : .behaviour
    }

    /// Candidate keys that may be suggested in a stack: recent, of a kind that fits the stack's family, not
    /// placed in it, and not in a relevance group with one of its widgets.
    func suggestionCandidates(for state: StackState, widgets: [InstanceState]) -> [Int32] {
        guard !suggestionCandidates.isEmpty else { return [] }
        let placed = Set(widgets.map(\.key))
        let groups = Set(widgets.compactMap { widget in widget.group.map { "\(widget.kind.app)\u{0}\($0)" } })
        var result: [Int32] = []
        for key in suggestionCandidates.reversed() where !placed.contains(key) {
            let info = keys[Int(key)]
            guard let kind = kinds[info.kind],
                kind.families.contains(state.configuration.family),
                usage.keys[Int(key)].lastUse.map({ Double(now.microseconds - $0) / 1_000_000 < 86_400 }) ?? false
            else { continue }
            if let group = keyRelevance[key]?.group, groups.contains("\(info.kind.app)\u{0}\(group)") { continue }
            result.append(key)
            if result.count == 3 { break }
        }
        return result
    }

    func suggestionID(_ key: Int32) -> String {
        let info = keys[Int(key)]
        let configuration = info.configuration.canonicalKey
        return "suggestion:\(info.kind)" + (configuration.isEmpty ? "" : "?\(configuration)")
    }
}
