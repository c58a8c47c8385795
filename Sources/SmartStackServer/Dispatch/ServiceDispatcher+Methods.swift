import SmartStackCore
import SmartStackStore
import Synchronization
import SmartStackProtocol
import Logging

extension ServiceDispatcher {
    /// One handler per method, run on the engine's event loop. What needs no suspension is answered here: reads
    /// from the current state, recording calls acknowledged after their commit. Deletions, questions about a past
    /// time and the streams' sending run as tasks.
    func answer(_ request: SmartStackRequest, _ context: CallContext, on host: isolated EngineHost) -> ImmediateOutcome
    {
        do throws(VarlinkError) {
            return try answerOrThrow(request, context, on: host)
        } catch {
            return .done(failed(context.call, error))
        }
    }

    /// A non-root uid's read or deletion of the donations of an app nobody owns, when it holds some (what root
    /// recorded: `smartstackctl replay` or `donate`, or what was recorded under a claim since released), is refused:
    /// any local uid could read a user's habits and erase them, and the deletion's claim took the app from the uid
    /// that runs it. The app's first recording call claims it as before, or the policy's `app.ID` assigns it.
    private func refusedUnowned(_ app: AppID, _ context: CallContext, on host: isolated EngineHost) -> CallOutcome? {
        guard access.isUnownedForOthers(app, peer: context.peer), host.donationCount(of: app) > 0 else { return nil }
        let reason =
            "app \(app.rawValue) has no owner and keeps donations recorded before anyone claimed it (by root, or "
            + "under a claim since released): a recording call for it claims it, or the policy's app.\(app.rawValue) "
            + "assigns it"
        reporter.clientRejected(context.peer, .permissionDenied(method: context.call.method, reason: reason))
        return .failure(.permissionDenied(reason: reason))
    }

    private func answerOrThrow(_ request: SmartStackRequest, _ context: CallContext, on host: isolated EngineHost)
        throws(VarlinkError) -> ImmediateOutcome
    {
        func run<T>(_ operation: () throws(HostError) -> T) throws(VarlinkError) -> T {
            do throws(HostError) { return try operation() } catch { throw context.error(error) }
        }
        switch request {
        // org.varlink.service
        case .getInfo:
            return .done(.reply(info))
        case .getInterfaceDescription(let request):
            if let encoded = descriptions[request.interface] { return .done(.encoded(encoded)) }
            return .done(.reply(try request.reply()))

        // io.smartstack.Provider
        case .registerWidget(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .donate(let request):
            // The host makes the id of a donation sent without one (`donateNow`), as it does for every caller; a
            // retry sent without a date is the same donation whatever time the first call was stamped with.
            let (id, ticket) = try run { () throws(HostError) in
                try host.donateNow(
                    request.donation(defaultTime: host.serviceTime()), idGiven: request.id != nil,
                    dated: request.date != nil)
            }
            return acknowledge(ticket, context, on: host, reply: DonateRequest.reply(id: id))
        case .deleteDonations(let request):
            if let refused = refusedUnowned(request.app, context, on: host) { return .done(refused) }
            // The model is rebuilt without them off the loop.
            return .later { [self] in
                await outcome(context) { () async throws(VarlinkError) in
                    let deleted = try await self.host(context) { host throws(HostError) in
                        try await host.deleteDonations(app: request.app, filter: request.filter)
                    }
                    return .reply(DeleteDonationsRequest.reply(deleted: deleted))
                }
            }
        case .listDonations(let request):
            if let refused = refusedUnowned(request.app, context, on: host) { return .done(refused) }
            // Never a silently short page: a client stops at the first page shorter than its limit.
            if request.limitGiven, request.limit > maxListLimit {
                throw .invalidParameter("limit", reason: "must be at most \(maxListLimit) (maxListLimit)")
            }
            let limit = min(request.limit, maxListLimit)
            // Read from the store once what was logged before it is stored.
            return .later { [self] in
                await outcome(context) { () async throws(VarlinkError) in
                    let start: DonationPageStart =
                        if let after = request.after {
                            .after(id: after)
                        } else if let cursor = request.cursor {
                            .cursor(cursor.sequence)
                        } else {
                            .beginning
                        }
                    let (page, maxBytes) = try await self.host(context) { host throws(HostError) in
                        let page = try await host.listDonations(
                            app: request.app, from: start, limit: limit, reader: context.peer.uid)
                        return (page, host.limits.maxListReplyBytes)
                    }
                    // Encoded once, here: large donations (16 KiB of parameters each) can make a page larger than
                    // clients take, and the frame measured is the one sent.
                    let reply = ListDonationsRequest.reply(
                        donations: page.donations, next: ListCursor(sequence: page.through))
                    let frame = VarlinkReply(parameters: reply).encoded
                    if page.donations.count > 1, frame.count > maxBytes {
                        throw VarlinkError(
                            .limitExceeded(limit: "maxListReplyBytes", maximum: maxBytes),
                            interface: context.interface)
                    }
                    return .encoded(EncodedReply(frame: frame))
                }
            }
        case .submitTimeline(let request):
            let kinds = host.kinds([request.kind])
            return try record(
                context, on: host,
                { now throws(VarlinkError) in
                    try request.event(defaultTime: now, kinds: { kinds[$0] }, placedKind: host.kind(ofInstance:))
                }
            ) {
                _ in SubmitTimelineRequest.reply(warnings: request.warnings)
            }
        case .reloadTimelines(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { effects in
                ReloadTimelinesRequest.reply(effects: effects)
            }
        case .watchReloads(let request):
            let subscription = try run { () throws(HostError) in try host.watchReloads(app: request.app) }
            return .done(watchReloads(subscription, request, context))
        case .startLiveActivity(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .updateLiveActivity(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .endLiveActivity(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .declareRelevance(let request):
            let kinds = host.kinds([request.kind])
            return try record(
                context, on: host,
                { now throws(VarlinkError) in
                    try request.event(defaultTime: now, kinds: { kinds[$0] }, placedKind: host.kind(ofInstance:))
                }
            ) {
                _ in [:]
            }

        // io.smartstack.Shell
        case .configureStack(let request):
            let kinds = host.kinds(request.widgets.map(\.kind))
            return try recordStackChange(request.stack, context, on: host) { now throws(VarlinkError) in
                try request.event(defaultTime: now) { kinds[$0] }
            } reply: {
                ConfigureStackRequest.reply(revision: $0)
            }
        case .changeStack(let request):
            let kinds = host.kinds(request.add.map(\.kind))
            let change = try request.change { kinds[$0] }
            let stack = request.stack
            return try recordStackChange(stack, context, on: host) { now throws(VarlinkError) in
                do throws(HostError) {
                    return try host.stackChange(stack, change, at: request.date ?? now)
                } catch {
                    throw context.error(error)
                }
            } reply: {
                ChangeStackRequest.reply(revision: $0)
            }
        case .getStack(let request):
            if let at = request.at {
                guard host.isCurrent(at) else {
                    return .later { [self] in
                        await outcome(context) { () async throws(VarlinkError) in
                            let decision = try await self.host(context) { host throws(HostError) in
                                try await host.stack(request.stack, at: at, reader: context.peer.uid)
                            }
                            return .reply(GetStackRequest.reply(decision))
                        }
                    }
                }
                let decision = try run { () throws(HostError) in try host.currentDecision(request.stack, at: at) }
                return .done(.reply(GetStackRequest.reply(decision)))
            }
            return read(host.readStack(), context, on: host, StackRead(stack: request.stack, frames: decisionFrames))
        case .subscribe(let request):
            return .done(try subscribe(request.stacks, context, on: host))
        case .listStacks:
            let stacks = host.stacks()
            return .done(.reply(ListStacksRequest.reply(stacks: stacks.map { ($0.configuration, $0.decision) })))
        case .removeStack(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .recordEngagement(let request):
            let answer = try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
            // One entry per engagement (user actions are rare): `analyze` reads taps after a widget surfaced. A dated
            // engagement carries its date (SMARTSTACK_ENGINE_TIME), where `analyze` places it.
            var metadata: Logger.Metadata = [
                "engagement": "\(request.kind.rawValue)", "stack": "\(request.stack.rawValue)",
                "widget": "\(request.instance.rawValue)",
            ]
            // The time the engine took it at: a date a little ahead is taken at the service's time.
            if let date = request.date { metadata["engine_time"] = "\(min(date, host.serviceTime()).rfc3339)" }
            logger.info("engagement", metadata: metadata)
            return answer
        case .recordLook(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .setContext(let request):
            return try record(context, on: host, { now in request.event(defaultTime: now) }) { _ in [:] }
        case .explain(let request):
            if let at = request.at, !host.isCurrent(at) {
                return .later { [self] in
                    await outcome(context) { () async throws(VarlinkError) in
                        let explanation = try await self.host(context) { host throws(HostError) in
                            try await host.explain(
                                stack: request.stack, instance: request.instance, at: at, reader: context.peer.uid)
                        }
                        return .reply(ExplainRequest.reply(explanation))
                    }
                }
            }
            let ticket = request.at == nil ? host.publishForRead() : .committed
            return read(ticket, context, on: host, ExplanationRead(request: request))
        case .getBudget(let request):
            let budget = try run { () throws(HostError) in try host.budget(of: request.instance, at: request.at) }
            return .done(.reply(GetBudgetRequest.reply(budget)))

        // io.smartstack.Admin
        case .getStatistics:
            return .done(.reply(statistics(on: host).wireObject))
        case .listAppOwners(let request):
            return .done(
                .reply(ListAppOwnersRequest.reply(owners: access.owners, after: request.after, limit: request.limit)))
        case .releaseApp(let request):
            let uid = access.releaseClaim(of: request.app)
            // The app's donations and kinds no longer count toward that uid's shares of the global limits, and the
            // reload watches that uid opened end (they would carry the next owner's requests and configurations).
            if uid != nil {
                host.recountOwnerShares()
                host.subscriptions.endWatches(of: request.app)
            }
            logger.notice(
                "app claim released",
                metadata: [
                    "app": "\(request.app)", "uid": "\(uid.map(String.init) ?? "none")",
                    "client.uid": "\(context.peer.uid)",
                ])
            return .done(.reply(ReleaseAppRequest.reply(released: uid)))
        case .setLogLevel(let request):
            let previous = levels.level
            levels.level = request.level.loggerLevel
            logger.notice(
                "log level changed",
                metadata: [
                    "from": "\(previous)", "to": "\(request.level.rawValue)", "client.uid": "\(context.peer.uid)",
                    "client.pid": "\(context.peer.pid)",
                ])
            return .done(.reply([:]))
        }
    }

    /// Builds an event at the service's current time (for calls without a `date`), applies and logs it; the reply
    /// (made from the event's effects) goes out once it is stored.
    private func record(
        _ context: CallContext, on host: isolated EngineHost, _ build: (Timestamp) throws(VarlinkError) -> EngineEvent,
        reply: ([EngineEffect]) -> JSONObject
    ) throws(VarlinkError) -> ImmediateOutcome {
        let event = try build(host.serviceTime())
        let recorded: (effects: [EngineEffect], ticket: CommitTicket)
        do throws(HostError) { recorded = try host.recordNow(event) } catch { throw context.error(error) }
        let effects = recorded.effects
        return acknowledge(recorded.ticket, context, on: host, reply: reply(effects))
    }

    /// Records a change of a stack and publishes it at once, so the reply carries the stack's revision with the
    /// change; acknowledged once the publish (after the change in the log, so its commit covers both) is stored.
    private func recordStackChange(
        _ stack: StackID, _ context: CallContext, on host: isolated EngineHost,
        _ build: (Timestamp) throws(VarlinkError) -> EngineEvent, reply: (Int) -> JSONObject
    ) throws(VarlinkError) -> ImmediateOutcome {
        let event = try build(host.serviceTime())
        let recorded: (effects: [EngineEffect], ticket: CommitTicket)
        do throws(HostError) { recorded = try host.recordNow(event) } catch { throw context.error(error) }
        let published = host.publishForRead()
        let revision = (try? host.currentDecision(stack))?.revision ?? 0
        // Nothing published: the change's own commit; else the publish mark's, which comes after it.
        let ticket: CommitTicket
        if case .success? = published.outcome { ticket = recorded.ticket } else { ticket = published }
        return acknowledge(ticket, context, on: host, reply: reply(revision))
    }

    /// A recording call's answer: its reply once `ticket` is stored, or the storage error (after the host rolled
    /// back to what is stored).
    ///
    /// The reply is made now (it does not depend on the commit) and one completion waits for the commit: a
    /// recording call's acknowledgement costs one closure (`CommitTicket.answer` would wrap a second one around
    /// it), and the host is asked only when the commit failed.
    private func acknowledge(
        _ ticket: CommitTicket, _ context: CallContext, on host: isolated EngineHost, reply: JSONObject
    ) -> ImmediateOutcome {
        if let outcome = ticket.outcome { return .done(Self.acknowledgement(outcome, reply, context, host: host)) }
        guard let waiter = ticket.waiter else { return .done(.reply(reply)) }
        let host = self.host
        return .waiting(for: waiter) { Self.acknowledgement(waiter.settledOutcome, reply, context, host: host) }
    }

    /// What a recording call gets once its commit resolved: `reply` when stored, else the storage error (the host
    /// rolls back to what is stored first).
    private static func acknowledgement(
        _ outcome: Result<Void, StoreFailure>, _ reply: JSONObject, _ context: CallContext, host: EngineHost
    ) -> CallOutcome {
        guard case .failure = outcome, let error = host.onLoop({ $0.acknowledged(outcome) }) else {
            return .reply(reply)
        }
        return .failure(context.error(error))
    }

    /// A read of the current state: answered by `query` once the publish that preceded it (`ticket`) resolved, at
    /// once when nothing was published. The query is a value, not a closure: the usual read, answered at once, then
    /// allocates nothing to keep it (a closure capturing the stack was a heap allocation per `GetStack`).
    private func read<Query: CurrentRead>(
        _ ticket: CommitTicket, _ context: CallContext, on host: isolated EngineHost, _ query: Query
    ) -> ImmediateOutcome {
        if let outcome = ticket.outcome {
            // Nothing to wait for (the usual read: nothing was published): answered at once.
            host.readCommitted(outcome)
            do throws(HostError) {
                return .done(try query.answer(on: host))
            } catch {
                return .done(.failure(context.error(error)))
            }
        }
        let host = self.host
        let finish = { (outcome: Result<Void, StoreFailure>) -> CallOutcome in
            host.onLoop { host in
                host.readCommitted(outcome)
                do throws(HostError) {
                    return try query.answer(on: host)
                } catch {
                    return .failure(context.error(error))
                }
            }
        }
        return ticket.answer(finish)
    }

    /// Runs a handler that suspends, its error becoming the call's typed error.
    private func outcome(_ context: CallContext, _ body: () async throws(VarlinkError) -> CallOutcome) async
        -> CallOutcome
    {
        do throws(VarlinkError) { return try await body() } catch { return failed(context.call, error) }
    }

    func statistics(on host: isolated EngineHost) -> ServiceStatistics {
        let counts = host.snapshotStatistics()
        let storage = host.storageStatistics().map { stored in
            StorageStatistics(
                storedEvents: stored.storedEvents, storedDonations: stored.storedDonations,
                databaseBytes: stored.databaseBytes, lastSnapshot: stored.lastSnapshot, commits: stored.commits,
                commitLatency: stored.latency)
        }
        var statistics = ServiceStatistics(
            stacks: counts.stacks, widgets: counts.widgets, donations: counts.donations,
            subscribers: counts.subscribers, connections: connections.openCount, uptimeSeconds: counts.uptimeSeconds,
            kinds: counts.kinds, liveActivities: counts.liveActivities, reloadWatchers: counts.reloadWatchers,
            calls: connections.callCount, logLevel: LogLevel(levels.level),
            journalEntriesDropped: reporter.droppedEntries, storage: storage)
        statistics.topApps = counts.topApps
        statistics.connectionsRefused = connections.rejectedCount
        statistics.connectionsClosedForInput = connections.closedForInputCount
        statistics.inputBytes = connections.inputBytes
        return statistics
    }

    /// The stream of a subscription: its initial decisions, then every decision published, each encoded once for
    /// all the subscribers it goes to (`DecisionFrames`) and pushed from the loop as it is published (`FramePush`:
    /// no task per subscriber). A subscriber that lets more than `subscriberQueue` decisions wait is cut off.
    private func subscribe(_ stacks: [StackID]?, _ context: CallContext, on host: isolated EngineHost)
        throws(VarlinkError) -> CallOutcome
    {
        let frames = decisionFrames
        let push = FramePush(limit: host.limits.subscriberQueue)
        // A stream the service ends (it stops) ends with this error, so a shell knows to wait for the next instance
        // (a bare close is a client cut off for not reading, or a crash).
        let stopping = context.error(.stopping)
        let id: UInt64
        let initial: [Decision]
        do throws(HostError) {
            (id, initial) = try host.subscribe(
                stacks: stacks, send: { decision in push.send(frames.reply(to: decision, continues: true).buffer) },
                close: { push.close() },
                finish: { push.finish(with: VarlinkReply(error: stopping).encoded) })
        } catch {
            throw context.error(error)
        }
        // The current decisions first, however many stacks it follows.
        for decision in initial { _ = push.sendInitial(frames.reply(to: decision, continues: true).buffer) }
        let owner = host
        push.onClientGone = { owner.onLoop { $0.closeSubscription(id) } }
        return .push(push)
    }

    /// Runs a stream's sending loop until it ends, the subscription ends (even while a send is blocked on a
    /// client that stopped reading), or the task is cancelled; then closes the subscription.
    static func run<Element>(
        _ subscription: HostSubscription<Element>, host: EngineHost,
        _ loop: @escaping @Sendable () async throws -> Void
    ) async throws {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await loop() }
                group.addTask { await subscription.ended.wait() }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await host.closeSubscription(subscription.id)
            throw error
        }
        await host.closeSubscription(subscription.id)
    }

    /// The stream of a reload watch: each reload asked of the app, with the instance's configuration as it is
    /// when the reply is sent (none when its stack no longer has the instance).
    private func watchReloads(
        _ subscription: HostSubscription<EngineEffect>, _ request: WatchReloadsRequest, _ context: CallContext
    )
        -> CallOutcome
    {
        let host = self.host
        let stopping = context.error(.stopping)
        return .stream { send in
            try await Self.run(subscription, host: host) {
                for await effect in subscription.stream where request.wants(effect) {
                    var configuration: Configuration?
                    if let instance = effect.reloadInstance {
                        configuration = await host.configuration(ofInstance: instance)
                    }
                    if let object = effect.reloadWireObject(configuration: configuration) { try await send(object) }
                }
            }
            // Ended by the service's stop: the last reply says so (as Subscribe's does).
            if await host.isStopping { throw stopping }
        }
    }
}

extension LogLevel {
    var loggerLevel: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }

    init(_ level: Logger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

/// Each stack's recent decisions as encoded replies, `GetStack`'s and a `Subscribe` stream's (with `continues`): a
/// decision is encoded once however many calls and streams send it. Subscribers read at their own pace, so the last
/// few revisions of each stack are kept (a stream further behind encodes its own).
final class DecisionFrames: Sendable {
    private struct Cached {
        let revision: Int
        let time: Timestamp
        let continues: Bool
        let reply: EncodedReply
    }

    /// Frames kept per stack (both kinds together).
    static let depth = 32
    /// More stacks than this (ids come and go) start the cache afresh.
    static let capacity = 4_096
    private let byStack = Mutex<[StackID: [Cached]]>([:])

    /// The reply for `decision`, encoded now unless it was already (the same revision decided at the same time).
    func reply(to decision: Decision, continues: Bool) -> EncodedReply {
        let found = byStack.withLock { stacks in
            stacks[decision.stack]?.first {
                $0.revision == decision.revision && $0.time == decision.time && $0.continues == continues
            }
        }
        if let found { return found.reply }
        let reply = EncodedReply(encoding: decision, continues: continues)
        let cached = Cached(revision: decision.revision, time: decision.time, continues: continues, reply: reply)
        byStack.withLock { stacks in
            if stacks[decision.stack] == nil, stacks.count >= Self.capacity { stacks.removeAll(keepingCapacity: true) }
            var recent = stacks[decision.stack, default: []]
            if recent.count >= Self.depth { recent.removeFirst() }
            recent.append(cached)
            stacks[decision.stack] = recent
        }
        return reply
    }
}

extension EncodedReply {
    /// A decision's reply (`GetStack`'s, or a `Subscribe` stream's with `continues`), written directly
    /// (`Decision.encodeWireObject`, several times faster than building its JSON object first).
    init(encoding decision: Decision, continues: Bool) {
        var parameters: [UInt8] = []
        decision.encodeWireObject(into: &parameters)
        var frame: [UInt8] = []
        VarlinkReply.encode(serializedParameters: parameters, continues: continues, into: &frame)
        self.init(frame: frame)
    }
}

/// What a read of the current state answers once it may (`ServiceDispatcher.read`).
private protocol CurrentRead: Sendable {
    func answer(on host: isolated EngineHost) throws(HostError) -> CallOutcome
}

/// `GetStack` without a time: the stack's current decision, encoded once per decision and shared.
private struct StackRead: CurrentRead {
    let stack: StackID
    let frames: DecisionFrames

    func answer(on host: isolated EngineHost) throws(HostError) -> CallOutcome {
        .encoded(frames.reply(to: try host.currentDecision(stack), continues: false))
    }
}

/// `Explain` of the current state.
private struct ExplanationRead: CurrentRead {
    let request: ExplainRequest

    func answer(on host: isolated EngineHost) throws(HostError) -> CallOutcome {
        .reply(
            ExplainRequest.reply(
                try host.currentExplanation(stack: request.stack, instance: request.instance, at: request.at)))
    }
}
