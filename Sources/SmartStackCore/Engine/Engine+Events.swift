extension Engine {
    // MARK: Donations and looks

    /// Learns from a donation: which widget keys it matches, what the user went to after a look, and the
    /// aggregates of every matching key. Cost depends on the app's kinds and the open looks, not on history.
    mutating func donate(_ donation: Donation) {
        let app = appIndex(donation.app)
        var matched: [Int32] = []
        for key in keysByApp[donation.app] ?? [] {
            let info = keys[Int(key)]
            guard let kind = kinds[info.kind], kind.matches(donation, configuration: info.configuration) else {
                continue
            }
            matched.append(key)
        }
        // A donation for a kind with no matching placed instance makes its configuration a suggestion candidate.
        for kindID in kindsByApp[donation.app] ?? [] {
            guard let kind = kinds[kindID], let configuration = kind.suggestedConfiguration(for: donation) else {
                continue
            }
            guard let key = unplacedKey(kind: kindID, configuration: configuration) else { continue }
            if !matched.contains(key) { matched.append(key) }
            if keys[Int(key)].placed == 0 { noteCandidate(key, used: donation.date.microseconds) }
        }
        closeLooks(at: donation.date) { look in matched.first { look.keys.contains($0) } }
        usage.recordDonation(app: app, matched: matched, at: donation.date, contextPairs: contextPairs)
        generation += 1
    }

    /// Ends every open look at `time`: within the outcome window, `target` picks the key the user went to
    /// (nil: somewhere outside the stack), which becomes a label for that stack's ranker.
    mutating func closeLooks(at time: Timestamp, target: (PendingLook) -> Int32?) {
        guard !pendingLooks.isEmpty else { return }
        for id in pendingLooks.sorted() { closeLook(of: id, at: time, target: target) }
    }

    /// Ends the open look at a stack, if any: within the outcome window, the key `target` picks (nil: the user
    /// went somewhere outside the stack) is a label for the stack's ranker and the after-look aggregates. A
    /// donation dated before the look (a client's backdated one, a log out of order) is not what the user did after
    /// it: the look stays open. (Taken as its outcome, a look dated centuries later weighed e^(centuries / 30 days)
    /// in the look tables: infinity, then NaN in every feature read from them.)
    mutating func closeLook(of id: StackID, at time: Timestamp, target: (PendingLook) -> Int32?) {
        guard let look = stacks[id]?.look else {
            pendingLooks.remove(id)
            return
        }
        guard time >= look.time else { return }
        pendingLooks.remove(id)
        stacks[id]?.look = nil
        guard time.seconds(since: look.time) <= settings.lookOutcomeWindow, let key = target(look),
            let row = look.keys.firstIndex(of: key)
        else { return }
        if let state = stacks[id] {
            let ranks = Self.ranks(of: row, in: look, model: state.ranker)
            stacks[id]?.selector.record(ranks: ranks)
            // The hold's margin follows how often this stack's top changes against MRU's (`TopHysteresis`).
            if let mruTop = look.mruTop, let seenTop = state.seenTop {
                if let previous = state.labelledTops {
                    stacks[id]?.holdExtra = TopHysteresis.adjusted(
                        state.holdExtra, ownChanged: seenTop != previous.seen, mruChanged: mruTop != previous.mru)
                }
                stacks[id]?.labelledTops = LabelledTops(seen: seenTop, mru: mruTop)
            }
        }
        stacks[id]?.ranker.learn(matrix: look.matrix, rows: look.keys.count, target: row)
        stacks[id]?.previousLookTarget = key
        usage.recordAfterView(
            key: key, lastAppAtView: look.lastApp, contexts: look.contexts,
            recency: RecencyClass.ofRow(row, in: look.matrix, rows: look.keys.count), lookTime: look.time, at: time)
        stacks[id]?.dirty = true
    }

    /// Records a look at a stack: the features it was shown with wait for the user's next move.
    mutating func look(at id: StackID, time: Timestamp) throws(CoreError) {
        guard let state = stacks[id] else { throw .notFound(kind: "stack", id: id.rawValue) }
        guard state.configuration.smartRotate, !state.instances.isEmpty else { return }
        // The top the user saw: the first of the stack's widgets in its order at the look's own time. (The last
        // published decision can be of another time: a service publishes at its clock, and a replayed log looks
        // at the log's times.) A suggestion or a Live Activity above it is not what `TopHysteresis` holds: it
        // holds the widgets' order, which must not depend on whether apps outside the stack are candidates.
        var scratch: [Double] = []
        let shownTop = evaluation(of: state, at: time, scratch: &scratch).decision.entries
            .first { !$0.suggested && $0.liveActivity == nil }?.instance
        let keys = state.keys
        var matrix: [Double] = []
        usage.features(
            for: FeatureQuery(
                keys: keys, time: time, contextPairs: contextPairs, previousLookTarget: state.previousLookTarget),
            into: &matrix)
        let places = fallbackPlaces(of: keys, at: time)
        stacks[id]?.look = PendingLook(
            time: time, keys: keys, matrix: matrix, lastApp: usage.lastApp,
            contexts: usage.lookContexts(at: time.microseconds), fallbackPlaces: places)
        pendingLooks.insert(id)
        stacks[id]?.seenTop = shownTop
        usage.noteLook(at: time.microseconds)
    }

    /// Each key's place in the order of every simple ranker at `time` (see `PendingLook.fallbackPlaces`).
    func fallbackPlaces(of keys: [Int32], at time: Timestamp) -> [Int8] {
        let n = keys.count
        guard n > 0, n <= Int(Int8.max) else { return [] }
        var result = [Int8](repeating: 0, count: StackRanker.fallbacks.count * n)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { scores in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { places in
                for (f, ranker) in StackRanker.fallbacks.enumerated() {
                    usage.fallbackScores(ranker, keys: keys, at: time, into: scores)
                    placesByScore(UnsafeBufferPointer(scores), count: n, into: places)
                    for i in 0..<n { result[f * n + i] = Int8(places[i]) }
                }
            }
        }
        return result
    }

    /// The 1-based rank row `target` had at a look in the order of every ranker, by `StackRanker.rawValue`:
    /// the model's from the look's features and its weights before learning from it (the weights it was
    /// shown with), the simple rankers' from the places noted at the look.
    static func ranks(of target: Int, in look: PendingLook, model: OnlineRanker) -> SIMD8<Double> {
        let n = look.keys.count
        var ranks = SIMD8<Double>(repeating: 1)
        let scores = model.scores(look.matrix, rows: n)
        scores.withUnsafeBufferPointer { scores in
            var place = 0
            for j in 0..<target { place += scores[j] >= scores[target] ? 1 : 0 }
            for j in (target + 1)..<n { place += scores[j] > scores[target] ? 1 : 0 }
            ranks[StackRanker.model.rawValue] = Double(place + 1)
        }
        if look.fallbackPlaces.count == StackRanker.fallbacks.count * n {
            for (f, ranker) in StackRanker.fallbacks.enumerated() {
                ranks[ranker.rawValue] = Double(look.fallbackPlaces[f * n + target]) + 1
            }
        } else {
            // Unknown: count them as the model's, so they neither gain nor lose against it.
            for ranker in StackRanker.fallbacks { ranks[ranker.rawValue] = ranks[StackRanker.model.rawValue] }
        }
        return ranks
    }

    // MARK: Engagement

    mutating func engage(stack id: StackID, instance: InstanceID, kind: EngagementKind, at time: Timestamp)
        throws(CoreError) -> [EngineEffect]
    {
        guard let state = stacks[id] else { throw .notFound(kind: "stack", id: id.rawValue) }
        guard state.instances.contains(instance), let widget = instances[instance] else {
            if let key = suggestionKey(named: instance, in: state) {
                try engageSuggestion(key, in: id, kind: kind, at: time)
                return []
            }
            let reason =
                instance.rawValue.hasPrefix(Self.suggestionPrefix)
                ? "'\(instance)' is not a suggestion of stack '\(id)'"
                : "instance '\(instance)' is not in stack '\(id)'"
            throw .invalidParameter(parameter: "instance", reason: reason)
        }
        // Engagement reaches the ranking only through the widget's own bounded adjustment (`WidgetEngagement`),
        // not as features of the learned model, whose first steps on a new feature are large: two taps there
        // outweighed weeks of donations.
        instances[instance]?.engagement.record(kind, at: time)
        var effects: [EngineEffect?] = []
        switch kind {
        case .tap:
            // The tap counts as engagement only (above). The look it follows is answered, as every look is, by the
            // open the tap causes (the app's donation): counted once, and as the behaviour model learns from
            // opens, so one tap cannot turn a habit of weeks (the model follows the last look's target closely).
            // A reload caused by the user interacting with the widget is exempt from the budget. It is asked for at
            // the engine's time, as every reload is: a shell's dated tap says when the user engaged, not when the
            // app is asked to reload (an old date would sort the request first among those replayed to the app).
            if widget.relevance.timeline != nil {
                effects.append(
                    reloadEffect(
                        instance, instances[instance]?.reload.request(at: now, reason: .userInteraction), at: now))
                scheduleTimers(for: instance)
            }
        case .swipeTo:
            // A swipe dated before the stack's latest swipe does not replace it, and no swipe moves the last
            // rotation back (which would let a rotation through inside the minimum time on top).
            if state.manualSwipe.map({ $0.time <= time }) ?? true {
                stacks[id]?.manualSwipe = ManualSwipe(instance: instance, time: time)
                timers.schedule(.stack(id), at: time.adding(seconds: settings.swipeGracePeriod))
            }
            stacks[id]?.lastRotation = max(state.lastRotation ?? time, time)
        case .swipeAway:
            if state.manualSwipe?.instance == instance { stacks[id]?.manualSwipe = nil }
            timers.schedule(.stack(id), at: time.adding(seconds: WidgetEngagement.swipeAwayDemotion))
        case .impression:
            try look(at: id, time: time)
        }
        stacks[id]?.dirty = true
        return effects.compactMap { $0 }
    }

    /// What the user did with a suggestion of a stack (its entry's id names a candidate). A swipe away keeps the
    /// candidate out of the stack for ``suggestionLifetime`` (the next of the stack's candidates may take its
    /// place); an impression is a look, as a widget's is; a swipe to it ends a manual swipe, so the stack shows the
    /// service's order again, where the suggestion is on top while it wins. A tap changes nothing by itself: the
    /// app it opens donates, and that donation is what the ranking learns from.
    mutating func engageSuggestion(_ key: Int32, in id: StackID, kind: EngagementKind, at time: Timestamp)
        throws(CoreError)
    {
        switch kind {
        case .tap:
            return
        case .swipeTo:
            // As a widget's swipe: one dated before the stack's latest swipe does not undo it.
            if stacks[id]?.manualSwipe.map({ $0.time <= time }) ?? true { stacks[id]?.manualSwipe = nil }
        case .swipeAway:
            let candidates = Set(suggestionCandidates)
            var dismissed = stacks[id]?.dismissedSuggestions ?? []
            dismissed.removeAll { $0.key == key || $0.until <= time || !candidates.contains($0.key) }
            let until = time.adding(seconds: Self.suggestionLifetime)
            dismissed.append(DismissedSuggestion(key: key, until: until))
            stacks[id]?.dismissedSuggestions = dismissed
            timers.schedule(.stack(id), at: until)
        case .impression:
            try look(at: id, time: time)
        }
        stacks[id]?.dirty = true
    }

    // MARK: Timelines, relevance and reloads

    /// The instances a timeline or declaration applies to (and the key, for a configuration target).
    /// With `admitting`, a configuration no stack places gets a key only within `maxUnplacedConfigurationsPerApp`.
    mutating func resolve(_ target: TimelineTarget, admitting: Bool) throws(CoreError) -> (
        instances: [InstanceID], key: Int32?
    ) {
        switch target {
        case .instance(let id):
            guard instances[id] != nil else { throw .notFound(kind: "instance", id: id.rawValue) }
            return ([id], nil)
        case .configuration(let kindID, let values):
            guard let kind = kinds[kindID] else { throw .notFound(kind: "widgetKind", id: kindID.description) }
            let configuration = try kind.validateConfiguration(values)
            guard
                let key = admitting
                    ? unplacedKey(kind: kindID, configuration: configuration)
                    : widgetKey(kind: kindID, configuration: configuration)
            else {
                throw .limitExceeded(
                    limit: "maxUnplacedConfigurationsPerApp", maximum: settings.maxUnplacedConfigurationsPerApp)
            }
            let matching = instances.values.filter { $0.key == key }.map(\.id).sorted()
            return (matching, key)
        }
    }

    mutating func submit(_ timeline: Timeline, to target: TimelineTarget, at time: Timestamp, admitting: Bool)
        throws(CoreError)
    {
        guard !admitting || timeline.entries.count <= settings.maxTimelineEntries else {
            throw .limitExceeded(limit: "maxTimelineEntries", maximum: settings.maxTimelineEntries)
        }
        let (targets, key) = try resolve(target, admitting: admitting)
        if let key { keyTimelines[key] = timeline }
        for id in targets {
            instances[id]?.relevance.replace(with: timeline, at: time)
            instances[id]?.reload.timelineSubmitted(timeline, at: now)
            scheduleTimers(for: id)
            if let stack = instances[id]?.stack { stacks[stack]?.dirty = true }
        }
    }

    mutating func declare(_ declaration: RelevanceDeclaration, at time: Timestamp, admitting: Bool)
        throws(CoreError)
    {
        try RelevantContext.validated(declaration.contexts, maxCount: admitting ? settings.maxRelevantContexts : nil)
        if let group = declaration.group, group.isEmpty || group.utf8.count > 255 {
            throw .invalidParameter(parameter: "group", reason: "must be 1-255 bytes")
        }
        let (targets, key) = try resolve(declaration.target, admitting: admitting)
        if let key {
            keyRelevance[key] = declaration
            // A candidate's group decides whether any stack may suggest it (`suggestionCandidates`; placed in
            // another stack or not): a decision showing it beside a surfaced widget of the new group was reused for
            // up to `decisionMaxAge`.
            generation += 1
        }
        for id in targets {
            instances[id]?.relevantContexts = declaration.contexts
            instances[id]?.group = declaration.group
            scheduleTimers(for: id)
            if let stack = instances[id]?.stack { stacks[stack]?.dirty = true }
        }
    }

    /// Asks for a reload of the app's placed instances (of `kind`, or every kind), at the engine's time `now`.
    mutating func reloadTimelines(app: AppID, kind: String?) throws(CoreError) -> [EngineEffect] {
        if let kind, !(kindsByApp[app] ?? []).contains(where: { $0.kind == kind }) {
            throw .notFound(kind: "widgetKind", id: "\(app)/\(kind)")
        }
        guard kindsByApp[app]?.isEmpty == false else { throw .notFound(kind: "app", id: app.rawValue) }
        // Exempt from the budget while the provider's app is in the foreground.
        let reason: ReloadReason = contexts["foregroundApp"] == app.rawValue ? .appForeground : .providerRequest
        var effects: [EngineEffect] = []
        for id in instances.ids.sorted() {
            guard let instance = instances[id], instance.kind.app == app, kind == nil || instance.kind.kind == kind
            else {
                continue
            }
            // Spent at the engine's time, never the call's own date: a request dated in the past cannot count in a
            // window that has already passed (the budget runs on the service's clock).
            if let effect = reloadEffect(id, instances[id]?.reload.request(at: now, reason: reason), at: now) {
                effects.append(effect)
            }
            scheduleTimers(for: id)
        }
        return effects
    }

    /// The effect of a reload outcome decided at `time` (a withheld reload carries that time; a granted one its own).
    func reloadEffect(_ id: InstanceID, _ outcome: ReloadOutcome?, at time: Timestamp) -> EngineEffect? {
        guard let outcome, let kind = instances[id]?.kind else { return nil }
        switch outcome {
        case .requested(let at, let reason): return .reloadRequested(instance: id, kind: kind, reason: reason, at: at)
        case .withheld(let until, let reason):
            return .reloadWithheld(instance: id, kind: kind, reason: reason, until: until, at: time)
        }
    }

    // MARK: Time

    /// Schedules the next time an instance's relevance, relevant contexts or reloads change.
    mutating func scheduleTimers(for id: InstanceID) {
        guard let instance = instances[id] else { return }
        let candidates = [
            instance.relevance.nextChange(after: now),
            instance.reload.nextEvent(after: now),
            RelevantContext.nextChange(instance.relevantContexts, after: now),
        ]
        if let next = candidates.compactMap({ $0 }).min() { timers.schedule(.instance(id), at: next) }
    }

    /// Moves the engine's clock to `time`, firing what came due on the way (in time order): reloads that
    /// are due or whose budget freed up, and stacks whose relevance, Live Activities or stability changed.
    @discardableResult
    public mutating func advance(to time: Timestamp) -> [EngineEffect] {
        let effects = fireTimers(through: time)
        if time > now { now = time }
        return effects
    }

    /// Fires the timers due by `time`, in time order, each at its own due time (`now` follows them).
    mutating func fireTimers(through time: Timestamp) -> [EngineEffect] {
        var effects: [EngineEffect] = []
        while let (due, target) = timers.popDue(atOrBefore: time.microseconds) {
            let dueTime = Timestamp(microseconds: due, utcOffsetSeconds: time.utcOffsetSeconds)
            if dueTime > now { now = dueTime }
            switch target {
            case .instance(let id):
                // Exempt from the budget while the provider's app is in the foreground, as `reloadTimelines` is.
                let foreground = instances[id].map { contexts["foregroundApp"] == $0.kind.app.rawValue } ?? false
                guard let outcomes = instances[id]?.reload.advance(to: dueTime, foreground: foreground) else {
                    continue
                }
                effects += outcomes.compactMap { reloadEffect(id, $0, at: dueTime) }
                if let stack = instances[id]?.stack { stacks[stack]?.dirty = true }
                scheduleTimers(for: id)
            case .stack(let id):
                stacks[id]?.dirty = true
            case .everyStack:
                liveActivitiesChanged()
            }
        }
        return effects
    }

    /// The next time something scheduled changes (a timeline entry, an expiry, a reload, a Live Activity),
    /// so the service can publish at that moment without a query.
    ///
    /// Inlinable so that the engine's owner, which holds the engine in a class, reads it in place: calling an opaque
    /// getter from another module, Swift copied the whole engine (a retain and a release for each of its references)
    /// at every event the owner applied (BENCHMARKS.md, thirty-third session).
    @inlinable public var nextWakeUp: Timestamp? { timers.nextTime.map { Timestamp(microseconds: $0) } }
}
