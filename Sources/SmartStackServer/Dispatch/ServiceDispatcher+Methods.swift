import SmartStackCore
import SmartStackProtocol
import Logging

extension ServiceDispatcher {
    /// One handler per method.
    func handle(_ request: SmartStackRequest, _ context: CallContext) async throws(VarlinkError) -> CallOutcome {
        switch request {
        // org.varlink.service
        case .getInfo:
            return .reply(info)
        case .getInterfaceDescription(let request):
            return .reply(try request.reply())

        // io.smartstack.Provider
        case .registerWidget(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .donate(let request):
            let now = host.now()
            let donation = request.donation(defaultTime: now, generatedID: "generated")
            let id = try await host(context) { host throws(HostError) in
                try await host.donate(donation, idGiven: request.id != nil)
            }
            return .reply(DonateRequest.reply(id: id))
        case .deleteDonations(let request):
            let deleted = try await host(context) { host throws(HostError) in
                try await host.deleteDonations(app: request.app, filter: request.filter)
            }
            return .reply(DeleteDonationsRequest.reply(deleted: deleted))
        case .listDonations(let request):
            // Never a silently short page: a client stops at the first page shorter than its limit.
            if request.limitGiven, request.limit > maxListLimit {
                throw .invalidParameter("limit", reason: "must be at most \(maxListLimit) (maxListLimit)")
            }
            let limit = min(request.limit, maxListLimit)
            let donations = try await host(context) { host throws(HostError) in
                try await host.listDonations(app: request.app, after: request.after, limit: limit)
            }
            return .reply(ListDonationsRequest.reply(donations: donations))
        case .submitTimeline(let request):
            let kinds = await host.kinds([request.kind])
            try await record(context) { now throws(VarlinkError) in
                try request.event(defaultTime: now) { kinds[$0] }
            }
            return .reply(SubmitTimelineRequest.reply(warnings: request.warnings))
        case .reloadTimelines(let request):
            let effects = try await record(context) { now in request.event(defaultTime: now) }
            return .reply(ReloadTimelinesRequest.reply(effects: effects))
        case .watchReloads(let request):
            return try await watchReloads(request, context)
        case .startLiveActivity(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .updateLiveActivity(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .endLiveActivity(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .declareRelevance(let request):
            let kinds = await host.kinds([request.kind])
            try await record(context) { now throws(VarlinkError) in
                try request.event(defaultTime: now) { kinds[$0] }
            }
            return .reply([:])

        // io.smartstack.Shell
        case .configureStack(let request):
            let kinds = await host.kinds(request.widgets.map(\.kind))
            try await record(context) { now throws(VarlinkError) in
                try request.event(defaultTime: now) { kinds[$0] }
            }
            let revision = try await host(context) { host throws(HostError) in try await host.stack(request.stack) }
                .revision
            return .reply(ConfigureStackRequest.reply(revision: revision))
        case .changeStack(let request):
            let kinds = await host.kinds(request.add.map(\.kind))
            let change = try request.change { kinds[$0] }
            let date = request.date ?? host.now()
            let revision = try await host(context) { host throws(HostError) in
                try await host.changeStack(request.stack, change, at: date)
            }
            return .reply(ChangeStackRequest.reply(revision: revision))
        case .getStack(let request):
            let decision = try await host(context) { host throws(HostError) in
                if let at = request.at { return try await host.stack(request.stack, at: at) }
                return try await host.stack(request.stack)
            }
            return .reply(GetStackRequest.reply(decision))
        case .subscribe(let request):
            return try await subscribe(request, context)
        case .listStacks:
            let stacks = await host.stacks()
            return .reply(ListStacksRequest.reply(stacks: stacks.map { ($0.configuration, $0.decision) }))
        case .removeStack(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .recordEngagement(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            // One entry per engagement (user actions are rare): `analyze` reads taps after a widget surfaced.
            logger.info(
                "engagement",
                metadata: [
                    "engagement": "\(request.kind.rawValue)", "stack": "\(request.stack.rawValue)",
                    "widget": "\(request.instance.rawValue)",
                ])
            return .reply([:])
        case .recordLook(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .setContext(let request):
            try await record(context) { now in request.event(defaultTime: now) }
            return .reply([:])
        case .explain(let request):
            let explanation = try await host(context) { host throws(HostError) in
                try await host.explain(stack: request.stack, instance: request.instance, at: request.at)
            }
            return .reply(ExplainRequest.reply(explanation))
        case .getBudget(let request):
            let budget = try await host(context) { host throws(HostError) in
                try await host.budget(of: request.instance, at: request.at)
            }
            return .reply(GetBudgetRequest.reply(budget))

        // io.smartstack.Admin
        case .getStatistics:
            return .reply(await statistics().wireObject)
        case .setLogLevel(let request):
            let previous = levels.level
            levels.level = request.level.loggerLevel
            logger.notice("log level changed", metadata: ["from": "\(previous)", "to": "\(request.level.rawValue)"])
            return .reply([:])
        }
    }

    /// Builds an event at the service's current time (for calls without a `date`) and records it.
    @discardableResult
    func record(
        _ context: CallContext, _ build: (Timestamp) throws(VarlinkError) -> EngineEvent
    ) async throws(VarlinkError) -> [EngineEffect] {
        let now = host.now()
        let event = try build(now)
        return try await host(context) { host throws(HostError) in try await host.record(event) }
    }

    func statistics() async -> ServiceStatistics {
        let counts = await host.snapshotStatistics()
        let storage = await host.storageStatistics().map { stored in
            StorageStatistics(
                storedEvents: stored.storedEvents, storedDonations: stored.storedDonations,
                databaseBytes: stored.databaseBytes, lastSnapshot: stored.lastSnapshot, commits: stored.commits,
                commitLatency: stored.latency)
        }
        var statistics = ServiceStatistics(
            stacks: counts.stacks, widgets: counts.widgets, donations: counts.donations,
            subscribers: counts.subscribers, connections: connections.openCount, uptimeSeconds: counts.uptimeSeconds,
            kinds: counts.kinds, liveActivities: counts.liveActivities, reloadWatchers: counts.reloadWatchers,
            calls: nil, logLevel: LogLevel(levels.level), journalEntriesDropped: reporter.droppedEntries,
            storage: storage)
        statistics.connectionsRefused = connections.rejectedCount
        statistics.connectionsClosedForInput = connections.closedForInputCount
        statistics.inputBytes = connections.inputBytes
        return statistics
    }

    private func subscribe(_ request: SubscribeRequest, _ context: CallContext) async throws(VarlinkError)
        -> CallOutcome
    {
        let subscription = try await host(context) { host throws(HostError) in
            try await host.subscribe(stacks: request.stacks)
        }
        let host = self.host
        return .stream { send in
            try await Self.run(subscription, host: host) {
                for decision in subscription.initial { try await send(decision.wireObject) }
                for await decision in subscription.stream { try await send(decision.wireObject) }
            }
        }
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

    private func watchReloads(_ request: WatchReloadsRequest, _ context: CallContext) async throws(VarlinkError)
        -> CallOutcome
    {
        let subscription = try await host(context) { host throws(HostError) in
            try await host.watchReloads(app: request.app)
        }
        let host = self.host
        return .stream { send in
            try await Self.run(subscription, host: host) {
                for await effect in subscription.stream where request.wants(effect) {
                    if let object = effect.reloadWireObject() { try await send(object) }
                }
            }
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
