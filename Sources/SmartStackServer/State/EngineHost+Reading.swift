import CLinux
public import SmartStackCore
import SmartStackProtocol
public import SmartStackStore

extension EngineHost {
    // MARK: Reading

    /// The current decision for a stack, for the service's time: publishes what time changed first and decides
    /// again a stack whose decision is older than `Engine.decisionMaxAge`, so the answer is current (its `time`
    /// says when it was evaluated) and is what subscribers were sent.
    ///
    /// When that publishes, the reply waits for the publish mark to be stored, so a decision a client saw is
    /// one a restart reproduces.
    public func stack(_ id: StackID) async throws(HostError) -> Decision {
        let ticket = readStack()
        // Reads keep working when storage fails: a publish that could not be stored is rolled back first, so the
        // answer is the stored state's.
        do { try await ticket.committed() } catch { recoverIfNeeded() }
        return try currentDecision(id)
    }

    /// The synchronous first half of a read of the current state: publishes what time changed; the read is answered
    /// (`currentDecision`, `currentExplanation`) once the returned ticket resolved, after `readCommitted`.
    public func publishForRead() -> CommitTicket { tick() }

    /// The first half of a read of a stack's current decision (`GetStack`): as `publishForRead`, except while the
    /// events applied since the last publish wait for their commit. Those are not acknowledged yet, and that commit
    /// publishes them before it answers their calls (`publishAtCommit`), so the read answers from the last publish
    /// at once, unless something time alone changes is due. Under a steady stream of writes most reads then decide
    /// nothing (before, each read after a write decided every stack and waited for its publish mark to be stored).
    public func readStack() -> CommitTicket {
        if publishingCommit != nil, !timeChangeDue { return .committed }
        return tick()
    }

    /// Whether a scheduled change (an entry becoming current, an expiry, a reload, a Live Activity) is due by now.
    private var timeChangeDue: Bool {
        guard let next = engine.nextWakeUp else { return false }
        return next <= serviceTime()
    }

    /// After a read's publish resolved: a publish that could not be stored is rolled back, so the read answers
    /// from the stored state.
    public func readCommitted(_ outcome: Result<Void, StoreFailure>) {
        if case .failure = outcome { recoverIfNeeded() }
    }

    /// A stack's published decision (decided now when it has none yet).
    public func currentDecision(_ id: StackID) throws(HostError) -> Decision {
        if let decision = engine.published(id) { return decision }
        do { return try engine.evaluate(stack: id, at: serviceTime()) } catch { throw .core(error) }
    }

    /// Whether a question about `time` is answered from the current state (no recorded event is later; the stability
    /// state is read as of `time`, `StackState.earlier` included), so it needs no replay of the history. (Not also "and
    /// no publish is later": a replay's questions, dated in the past after its backfilled events, are all before the
    /// publishes at the service's time, and each rebuilt the engine from the whole log.)
    public func isCurrent(_ time: Timestamp) -> Bool { time >= latestEventTime }

    /// The decision a stack would have at `time`, from the current state (only when `isCurrent(time)`).
    public func currentDecision(_ id: StackID, at time: Timestamp) throws(HostError) -> Decision {
        do { return try engine.evaluate(stack: id, at: time) } catch { throw .core(error) }
    }

    /// Why a stack (or one widget) is where it is: at `time` (only when `isCurrent(time)`), or without one for the
    /// time of the stack's current decision (after `publishForRead`).
    public func currentExplanation(stack id: StackID, instance: InstanceID?, at time: Timestamp?) throws(HostError)
        -> StackExplanation
    {
        let at = time ?? engine.published(id)?.time ?? serviceTime()
        do { return try engine.explain(stack: id, instance: instance, at: at) } catch { throw .core(error) }
    }

    /// The decision a stack would have at `time`, without publishing anything: from the current state when it is
    /// current for `time` (`isCurrent`), else from the history up to `time` (see `engine(asOf:)`).
    public func stack(_ id: StackID, at time: Timestamp, reader: UInt32 = 0) async throws(HostError) -> Decision {
        let engine = try await engine(asOf: time, reader: reader)
        do { return try engine.evaluate(stack: id, at: time) } catch { throw .core(error) }
    }

    /// Why a stack (or one widget of it) is where it is, at a time. Without one, for the time of the stack's
    /// current decision (what `GetStack` without `at` answers), after publishing what time changed.
    public func explain(stack id: StackID, instance: InstanceID?, at time: Timestamp?, reader: UInt32 = 0)
        async throws(HostError) -> StackExplanation
    {
        var engine = self.engine
        var at = time ?? serviceTime()
        if let time {
            engine = try await self.engine(asOf: time, reader: reader)
        } else {
            let ticket = tick()
            do { try await ticket.committed() } catch { recoverIfNeeded() }
            engine = self.engine
            at = engine.published(id)?.time ?? serviceTime()
        }
        do { return try engine.explain(stack: id, instance: instance, at: at) } catch { throw .core(error) }
    }

    /// The engine to answer a question about `time`: the live one when it is current for it (`isCurrent`: its
    /// stability state is read as of `time`), else one rebuilt off the event loop from the stored events dated at or
    /// before `time`, in the order they were applied (publish marks included, the later ones at `time`): the state as
    /// it was then, with nothing of what came after. `reader`: the caller's uid (history reads take turns by uid).
    func engine(asOf time: Timestamp, reader: UInt32 = 0) async throws(HostError) -> Engine {
        guard !isCurrent(time) else { return engine }
        // Everything logged so far, read back once stored.
        let through = log.lastSequence
        // At most `maxHistoryReads` reads of the history at once (a rebuild holds an engine and reads the whole
        // log); the others wait their turn.
        try await enterHistoryRead(.rebuild, uid: reader)
        defer { leaveHistoryRead(.rebuild) }
        await settled()
        let settings = engine.settings
        let log = self.log
        let replayed = await Self.offLoop { () -> Result<Engine, StoreFailure> in
            Result { () throws(StoreFailure) in
                var past = Engine(settings: settings)
                var unpublished = false
                try log.replay(after: 0, through: through) { event in
                    _ = smartstack_pace()
                    if event.time <= time {
                        past.replay(event)
                        unpublished = true
                    } else if case .publish = event, unpublished {
                        // A publish after `time` published events up to it too (a backdated event is published
                        // when it comes): its revision is the order's as of `time`, decided at `time`. Left out,
                        // an order configured with an earlier date had revision 0 once any later event came. One
                        // after another with nothing replayed between changes nothing, so it is not repeated.
                        past.replay(.publish(at: time))
                        unpublished = false
                    }
                }
                return past
            }
        }
        switch replayed {
        case .success(let past): return past
        case .failure(let failure): throw .store(failure)
        }
    }

    /// Which places a read of the stored history takes: a rebuild's (`engine(asOf:)`) or a page's (`ListDonations`).
    enum HistoryRead {
        case rebuild, page
    }

    /// Runs `body` on the places of `kind`'s reads.
    private func reads<T>(_ kind: HistoryRead, _ body: (inout HistoryPlaces) -> T) -> T {
        switch kind {
        case .rebuild: body(&historyReads)
        case .page: body(&pageReads)
        }
    }

    /// Takes a place among the `maxHistoryReads` reads of `kind` running, waiting when all are taken (each uid's reads
    /// in call order, the uids in turns: `HistoryReads`); `ServiceStopping` once the host stops (a read waiting then is
    /// answered so at once).
    private func enterHistoryRead(_ kind: HistoryRead, uid: UInt32) async throws(HostError) {
        try refuseWhenStopping()
        let limit = limits.maxHistoryReads
        let placed = reads(kind) { reads in
            guard reads.running < limit else { return false }
            reads.running += 1
            return true
        }
        if placed { return }
        let given = await withCheckedContinuation { continuation in reads(kind) { $0.wait(continuation, uid: uid) } }
        guard given else { throw .stopping }
    }

    /// Hands the place to the read of `kind` whose turn it is, or frees it.
    private func leaveHistoryRead(_ kind: HistoryRead) {
        if let next = reads(kind, { $0.next() }) {
            next.resume(returning: true)
        } else {
            reads(kind) { $0.running -= 1 }
        }
    }

    /// Returns once everything logged so far is stored, or could not be (then rolled back to what is stored), so a
    /// read of the store sees every call acknowledged before it.
    func settled() async {
        do { try await lastTicket.committed() } catch { recoverIfNeeded() }
    }

    /// A widget's reload budget at a time (now when `nil`).
    public func budget(of instance: InstanceID, at time: Timestamp?) throws(HostError) -> BudgetState {
        do { return try engine.budget(of: instance, at: time ?? serviceTime()) } catch { throw .core(error) }
    }

    /// A widget instance's configuration (for `WatchReloads` replies); `nil` when no stack has the instance.
    public func configuration(ofInstance id: InstanceID) -> Configuration? { engine.configuration(ofInstance: id) }

    /// A widget instance's kind; `nil` when no stack has the instance.
    public func kind(ofInstance id: InstanceID) -> WidgetKindID? { engine.kind(ofInstance: id) }

    /// The registered kinds among `ids` (for requests that read configurations against their kind).
    public func kinds(_ ids: [WidgetKindID]) -> [WidgetKindID: WidgetKind] {
        var found: [WidgetKindID: WidgetKind] = [:]
        for id in ids { if let kind = engine.kind(id) { found[id] = kind } }
        return found
    }

    /// Every stack with its configuration and latest published decision, by id.
    public func stacks() -> [(configuration: StackConfiguration, decision: Decision?)] {
        tick()
        return engine.stackIDs.compactMap { id in
            engine.configuration(of: id).map { ($0, engine.published(id)) }
        }
    }

    /// An app's donations in the order recorded, from `start`, at most `limit`: read from the store once
    /// everything logged before the call is stored (so a donation acknowledged before is listed).
    public func listDonations(app: AppID, from start: DonationPageStart, limit: Int, reader: UInt32 = 0)
        async throws(HostError) -> DonationPage
    {
        // Reads go on while storage fails: from what is stored (rolled back to first).
        await settled()
        // Read off the loop: the page is a scan of the log from its start on; one of `maxHistoryReads` pages.
        try await enterHistoryRead(.page, uid: reader)
        defer { leaveHistoryRead(.page) }
        let log = self.log
        let read = await Self.offLoop(lowPriority: false) { () -> Result<DonationPage?, StoreFailure> in
            Result { () throws(StoreFailure) in try log.donations(app: app, from: start, limit: limit) }
        }
        let page: DonationPage?
        switch read {
        case .success(let found): page = found
        case .failure(let failure): throw .store(failure)
        }
        // Only a page after an id can miss its start.
        guard let page else { throw .core(.notFound(kind: "donation", id: start.afterID ?? "")) }
        return page
    }

    /// How many donations of `app` are stored or logged.
    public func donationCount(of app: AppID) -> Int { donations.perApp[app] ?? 0 }

    /// The counters `GetStatistics` reports.
    public func snapshotStatistics() -> HostStatistics {
        var result = statistics
        let counts = engine.counts
        result.stacks = counts.stacks
        result.widgets = counts.widgets
        result.kinds = counts.kinds
        result.liveActivities = counts.liveActivities
        result.donations = donations.count
        result.topApps = Self.topApps(donations.perApp, count: HostStatistics.topAppCount)
        result.subscribers = subscriptions.subscriberCount
        result.reloadWatchers = subscriptions.watcherCount
        result.uptimeSeconds = clock.now().seconds(since: started)
        return result
    }
}

extension EngineHost {
    /// The `count` apps with the most donations, most first, ties by app id.
    static func topApps(_ perApp: [AppID: Int], count: Int) -> [AppDonationCount] {
        let sorted = perApp.sorted { (a: (key: AppID, value: Int), b: (key: AppID, value: Int)) -> Bool in
            a.value != b.value ? a.value > b.value : a.key < b.key
        }
        return sorted.prefix(count).map { AppDonationCount(app: $0.key, donations: $0.value) }
    }
}
