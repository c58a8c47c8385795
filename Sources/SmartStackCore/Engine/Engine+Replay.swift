extension Engine {
    /// The canonical step the service and every replay share: apply the event, then publish at its time.
    ///
    /// Publishing after each event makes the engine's stability state (when the top last rotated) a function
    /// of the event history alone, so a replay gives the same decisions as the live run.
    /// `admitting`: as `apply(_:admitting:)`; false for an event of a history of record.
    @discardableResult
    public mutating func step(_ event: EngineEvent, admitting: Bool = true) -> Result<
        (decisions: [Decision], effects: [EngineEffect]), CoreError
    > {
        do {
            let effects = try apply(event, admitting: admitting)
            let published = publish(at: event.time)
            return .success((published.decisions, effects + published.effects))
        } catch {
            return .failure(error)
        }
    }

    /// Takes one event of a service's log: applies it, and publishes only at `.publish` marks.
    ///
    /// This is how the service runs (it publishes once per burst of calls and records the mark), so replaying
    /// its log with `replay` reaches exactly the engine it had: the same revisions and stability state.
    @discardableResult
    public mutating func replay(_ event: EngineEvent) -> Result<
        (decisions: [Decision], effects: [EngineEffect]), CoreError
    > {
        if case .publish(let at) = event {
            let published = publish(at: at)
            return .success((published.decisions, published.effects))
        }
        do {
            return .success(([], try apply(event, admitting: false)))
        } catch {
            return .failure(error)
        }
    }

    /// An engine that took exactly these events of a service's log, in order (see `replay(_:)`).
    public static func replayingLog(_ events: some Sequence<EngineEvent>, settings: EngineSettings = EngineSettings())
        -> Engine
    {
        var engine = Engine(settings: settings)
        for event in events { engine.replay(event) }
        return engine
    }

    /// An engine that took exactly these events, in order (events it rejects are skipped, as they were
    /// rejected when they first came).
    public static func replaying(_ events: some Sequence<EngineEvent>, settings: EngineSettings = EngineSettings())
        -> Engine
    {
        var engine = Engine(settings: settings)
        for event in events { engine.step(event) }
        return engine
    }

    /// Rebuilds the model from the retained history without the donations `excluded` selects, and without
    /// donations older than the retention period at the engine's current time.
    ///
    /// Afterwards every decision equals that of an engine that never saw those donations. Revisions keep
    /// counting up from the ones already published, so subscribers see a new revision where an order changed.
    /// Returns how many donations were left out and the decisions whose order changed. With `asLog`, the
    /// history is a service's log and is replayed as the service ran it (publishing only at its `.publish`
    /// marks, see `replay(_:)`); otherwise each event is a `step`.
    @discardableResult
    public mutating func rebuild(
        from history: some Sequence<EngineEvent>, asLog: Bool = false,
        excluding excluded: (Donation) -> Bool = { _ in false }
    ) -> (removed: Int, changed: [Decision]) {
        let cutoff = now.adding(seconds: -settings.retention)
        var rebuilt = Engine(settings: settings)
        let removed = rebuilt.take(history, asLog: asLog) { $0.date < cutoff || excluded($0) }
        return (removed, adopt(rebuilt))
    }

    /// The first half of a rebuild, which needs nothing of the live engine (so it can run elsewhere while the
    /// live engine goes on): takes `history` into this engine, leaving out the donations `excluded` selects;
    /// returns how many were left out. More events can be taken the same way before `adopt`.
    @discardableResult
    public mutating func take(
        _ history: some Sequence<EngineEvent>, asLog: Bool = true, excluding excluded: (Donation) -> Bool
    ) -> Int {
        var removed = 0
        for event in history {
            if let donation = event.donation, excluded(donation) {
                removed += 1
                continue
            }
            // A history of record: its events were admitted when they came.
            if asLog { replay(event) } else { step(event, admitting: false) }
        }
        return removed
    }

    /// The second half of a rebuild: becomes `rebuilt` published at `time` (this engine's current time when nil or
    /// earlier: the service's time, for its owner), its revisions counting up from the ones this engine published (a
    /// new revision where an order changed); returns the decisions whose order changed.
    public mutating func adopt(_ rebuilt: Engine, at time: Timestamp? = nil) -> [Decision] {
        var rebuilt = rebuilt
        // Every stack is decided again at that time: the rebuilt engine's decisions are those of its last replayed
        // publish mark, up to `decisionMaxAge` old, and reused they went out dated before the decision they follow.
        for id in rebuilt.stacks.keys { rebuilt.stacks[id]?.dirty = true }
        rebuilt.publish(at: max(now, time ?? now))
        rebuilt.revisionFloor = max(rebuilt.revisionFloor, revisionFloor)
        var changed: [Decision] = []
        for id in rebuilt.stacks.keys.sorted() {
            guard var state = rebuilt.stacks[id] else { continue }
            let old = stacks[id]
            let same = state.published?.hasSameContent(as: old?.sent) ?? (old?.sent == nil)
            state.revision = (old?.revision ?? 0) + (same ? 0 : 1)
            state.published?.revision = state.revision
            state.sent = same ? old?.sent : state.published
            if !same, let decision = state.published { changed.append(decision) }
            rebuilt.stacks[id] = state
        }
        self = rebuilt
        return changed
    }

    /// Deletes donations of `app` by filter (ids, group, intent type and entity, or all): rebuilds without them.
    @discardableResult
    public mutating func deleteDonations(
        _ filter: DonationFilter, app: AppID, history: some Sequence<EngineEvent>
    ) -> (removed: Int, changed: [Decision]) {
        rebuild(from: history) { filter.matches($0, app: app) }
    }

}
