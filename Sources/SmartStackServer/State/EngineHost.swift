import CLinux
import Collections
public import NIOCore
import NIOPosix
public import Logging
public import SmartStackCore
public import SmartStackStore

/// Why a call to the engine's owner failed: the engine refused it, or it could not be stored.
public enum HostError: Error, Sendable, Hashable {
    /// The engine rejected the request (bad parameter, unknown id, conflict, a limit).
    case core(CoreError)
    /// The request was valid but could not be stored, so it was not acknowledged.
    case store(StoreFailure)
    /// The service is stopping and takes no new work.
    case stopping
}

/// What the engine's owner is doing: one line per case.
enum HostPhase: Equatable, Sendable {
    /// Taking calls and publishing what they change.
    case serving
    /// The store failed a record: recording calls fail and nothing is published (it could not be stored); at
    /// `retryAt`, a second later, the host serves again and publishes, or fails back into this phase (a publish
    /// that finds the store taking records before then serves at once).
    case storageFailed(retryAt: Timestamp)
    /// Stopping (graceful shutdown): no new work is taken, every stream has ended, no wake-up is scheduled.
    case stopping
}

/// The single owner of the engine: every call that reads or changes it goes through this actor.
///
/// I/O never happens here. Recording calls apply their event, hand it to the event log inside the actor's
/// isolation (so the log's order is the engine's), fan the resulting decisions out to subscribers and
/// reload watchers, and then wait — outside the isolation — for the log's commit before acknowledging.
public actor EngineHost {
    /// The event loop the actor runs on (the one its connections are served on, so calls need no thread hop).
    public nonisolated let eventLoop: any EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }
    let limits: HostLimits
    let clock: any ServiceClock
    let log: any EventLog
    let logger: Logger
    /// Where published decisions and effects are reported (the journal); called inside this isolation.
    let reporter: any ServiceReporter
    /// The engine. Whatever changes it calls `engineChanged()` (a property observer would make every read of it
    /// a copy).
    var engine: Engine
    /// Until when publishing has nothing to do unless the engine changes (`Engine.nextPublishDue`): reads before
    /// then skip looking at every stack.
    var publishQuietUntil: Timestamp?
    /// The commit that publishes what was applied since the last publish (`publishAtCommit`), while it is pending.
    var publishingCommit: CommitWaiter?
    /// The history of record is the log's (`EventLog.replay`): no copy of it is kept here, so memory does not grow
    /// with stored donations. While a rebuild (deletion, retention) replays the log off the loop, the events
    /// applied meanwhile are kept here, to be taken onto the rebuilt engine.
    var captured: [EngineEvent]?
    /// The stored donations' count, id filter, uncommitted ones and earliest date.
    var donations = DonationIndex()
    var subscriptions = SubscriptionRegistry()
    /// The next moment time-driven work is due (the engine's next change, the retention sweep, the storage retry),
    /// as handed to the time service (`HostTimeService`), which sleeps until each and calls `timerFired()`.
    var wakeUp: WakeUpSchedule
    var statistics = HostStatistics()
    let started: Timestamp
    /// Serving, storage failed or stopping (`HostPhase`).
    var phase = HostPhase.serving
    /// Whether the host stopped (its streams then end with `ServiceStopping`).
    public var isStopping: Bool { phase == .stopping }
    var publishScheduled = false
    /// Stacks removed since the last publish, as their last decisions (`Decision.removed`): the next publish sends
    /// them to subscribers and the journal, once the removal is stored.
    var pendingRemovals: [Decision] = []
    /// The rebuilds (deletions, retention sweeps) waiting, run one at a time by one task.
    var rebuilds = RebuildQueue<PendingDeletion>()
    /// Counts rollbacks to the stored state (after a failed commit), so a rebuild that began before one starts over.
    var rollbacks = 0
    /// Whether a flush of the log is scheduled for the end of the event loop's current turn.
    var flushScheduled = false
    /// The ticket of the latest record logged, publish marks included (commits are in order: once it is stored,
    /// so is every earlier one).
    var lastTicket = CommitTicket.committed
    /// The latest time of a recorded event (publish marks aside): a question about an earlier time is answered
    /// from the history up to it (`engine(asOf:)`), a later one from the current state.
    var latestEventTime = Timestamp(microseconds: .min)
    /// The stacks being backfilled (their latest events dated before the service's time) and what was journaled.
    var backfill = BackfillJournal()
    /// The rebuilds of the stored history running (`engine(asOf:)`), and those waiting their turn.
    var historyReads = HistoryPlaces()
    /// The `ListDonations` pages being read, and those waiting their turn: places of their own, so rebuilds, which
    /// run at idle priority and under CPU load can hold their places for as long as the load lasts, never hold a
    /// page read back (a short read at normal priority that waited on them waited without bound).
    var pageReads = HistoryPlaces()
    /// Told the stored owners of claimed app ids after a rollback to the stored state (the access policy's claims).
    public var ownersRestored: (@Sendable ([AppID: UInt32]) -> Void)?
    /// Who owns an app for the per-uid shares of the global limits (`maxDonationsPerUID`, `maxKindsPerUID`): its
    /// claiming uid in system mode, root and the service's own uid aside; nil (no share counted) otherwise. Set with
    /// `recountOwnerShares()` once the claims are restored.
    public var quotaOwner: (@Sendable (AppID) -> UInt32?)?
    /// Donations kept and kinds registered by the apps of each owning uid.
    var ownerShares = OwnerShares()
    private var idCounter: UInt64 = 0
    private let idPrefix: String

    public init(
        settings: EngineSettings, limits: HostLimits = HostLimits(), clock: any ServiceClock, log: any EventLog,
        logger: Logger, reporter: any ServiceReporter = SilentReporter(), eventLoop: (any EventLoop)? = nil
    ) {
        let now = clock.now()
        self.eventLoop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()
        self.limits = limits
        self.clock = clock
        self.log = log
        self.logger = logger
        self.reporter = reporter
        self.engine = Engine(settings: settings, now: now)
        self.started = now
        self.wakeUp = WakeUpSchedule(lastRetentionSweep: now)
        self.idPrefix = String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 36)
    }

    /// Refuses new work once the service is stopping (`HostPhase.stopping`).
    func refuseWhenStopping() throws(HostError) {
        if case .stopping = phase { throw .stopping }
    }

    /// The current time of the service's clock (no need to enter the actor: the clock is its own).
    public nonisolated func now() -> Timestamp { clock.now() }

    /// The service's time: its clock, never behind what the engine already reached (so it does not go back
    /// when the system clock is set back). No call moves it: recorded dates are never ahead of it.
    public func serviceTime() -> Timestamp { serviceTime(reading: clock.now()) }

    /// The service's time for a reading of its clock.
    func serviceTime(reading now: Timestamp) -> Timestamp {
        now >= engine.now
            ? now : Timestamp(microseconds: engine.now.microseconds, utcOffsetSeconds: now.utcOffsetSeconds)
    }

    /// A recording call's event at a time the service accepts: a date more than `maxFutureSkew` ahead of the
    /// service's time is refused (naming `date`, nothing stored); one ahead by less (a client whose clock runs a
    /// little fast) is taken as the service's time, keeping the client's UTC offset. Past dates stay as sent, but
    /// for a reload request, which happens at the service's time whatever its date.
    func admitted(_ event: EngineEvent) throws(HostError) -> EngineEvent {
        let time = try admittedTime(event.time)
        if case .reloadTimelines = event {
            // A reload request spends the budget, which runs on the service's clock: it happens when it comes,
            // whatever its date (a date in the past would count in a window that has passed). Logged so.
            let now = serviceTime()
            return event.withTime(Timestamp(microseconds: now.microseconds, utcOffsetSeconds: time.utcOffsetSeconds))
        }
        return time == event.time ? event : event.withTime(time)
    }

    /// The time `admitted` gives an event dated `time`.
    func admittedTime(_ time: Timestamp) throws(HostError) -> Timestamp {
        let now = serviceTime()
        let ahead = time.seconds(since: now)
        guard ahead > 0 else { return time }
        // Clients date calls by the wall clock, which a step not yet believed puts ahead of the service's time
        // (`SteadyTime`): a date within the skew of either is taken, at the service's time.
        let wallAhead = time.seconds(since: clock.wallNow())
        guard ahead <= limits.maxFutureSkew || wallAhead <= limits.maxFutureSkew else {
            throw .core(
                .invalidParameter(
                    parameter: "date",
                    reason: "\(time.rfc3339) is \(Self.duration(ahead)) ahead of the service's clock "
                        + "(\(now.rfc3339)); at most \(Self.duration(limits.maxFutureSkew)) ahead is accepted"))
        }
        return Timestamp(microseconds: now.microseconds, utcOffsetSeconds: time.utcOffsetSeconds)
    }

    /// Seconds as a short readable duration (`90 s`, `5 min 1 s`, `2 h 5 min`, `29 days 3 h`): at most two units,
    /// the smaller rounded up, so a distance past a limit never reads as the limit itself.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 1e12 else { return "\(seconds) s" }
        let total = Int(max(0, seconds).rounded(.up))
        func two(_ unit: Int, _ name: String, _ sub: Int, _ subName: String) -> String {
            let (whole, rest) = total.quotientAndRemainder(dividingBy: unit)
            let part = (rest + sub - 1) / sub
            if part * sub == unit { return "\(whole + 1) \(name)" }
            return part == 0 ? "\(whole) \(name)" : "\(whole) \(name) \(part) \(subName)"
        }
        if total < 120 { return "\(total) s" }
        if total < 7_200 { return two(60, "min", 1, "s") }
        if total < 172_800 { return two(3_600, "h", 60, "min") }
        return two(86_400, "days", 3_600, "h")
    }

    // MARK: Recording

    /// Applies one event, publishes what it changed, and returns once it is stored.
    @discardableResult
    public func record(_ event: EngineEvent) async throws(HostError) -> [EngineEffect] {
        let (effects, ticket) = try apply(event)
        try await committed(ticket)
        return effects
    }

    /// The synchronous half of `record`: applies and logs the event; the call is acknowledged once the ticket has
    /// committed (`acknowledged`).
    public func recordNow(_ event: EngineEvent) throws(HostError) -> (effects: [EngineEffect], ticket: CommitTicket) {
        try apply(event)
    }

    /// Runs `body` isolated to the host, on its event loop (for callers not on it, such as tests and fuzzers).
    public func perform<T: Sendable>(_ body: @Sendable (isolated EngineHost) -> T) -> T { body(self) }

    /// The `configureStack` event that makes `change` (settings, pin, order, single widgets) to the stack's current
    /// configuration, to be recorded with no suspension after it is read, so no other call changes the stack in
    /// between. Widgets that stay keep what was learned about them.
    public func stackChange(_ id: StackID, _ change: StackChange, at time: Timestamp) throws(HostError) -> EngineEvent {
        guard let current = engine.configuration(of: id) else { throw .core(.notFound(kind: "stack", id: id.rawValue)) }
        do { return .configureStack(try change.applied(to: current) { engine.kind($0) }, at: time) } catch {
            throw .core(error)
        }
    }

    /// Stores a donation, making up an id when the app gave none; returns the id.
    ///
    /// An id the app already used is accepted again only for the very same donation (a retried call), which
    /// stores nothing new; a different donation under a used id is a conflict. `dated`: whether the call gave
    /// the donation's date (`false`: it is the service's time, stamped by the caller, and a retry's date is not
    /// compared).
    public func donate(_ donation: Donation, idGiven: Bool, dated: Bool = true) async throws(HostError) -> String {
        let (id, ticket) = try donateNow(donation, idGiven: idGiven, dated: dated)
        try await committed(ticket)
        return id
    }

    /// The synchronous half of `donate`: applies and logs the donation and returns its id with the ticket to
    /// wait for before acknowledging it. A retried donation returns the latest ticket, so its acknowledgement
    /// still waits for the first call's commit if that is pending.
    public func donateNow(_ donation: consuming Donation, idGiven: Bool, dated: Bool = true) throws(HostError) -> (
        id: String, ticket: CommitTicket
    ) {
        let sent = donation.date
        donation.date = try admittedTime(sent)
        if !idGiven { donation.id = nextDonationID() }
        try refuseWhenStopping()
        try checkStorage()
        let key = DonationKey(donation)
        let probe = DonationKeyFilter.probe(key)
        if let existing = try knownDonation(key, probe: probe) {
            // A retry of a call sent without a date was stamped with the service's time then and another one now:
            // the same donation whatever its stored date. A retry of a call dated a little ahead was stored at the
            // service's time then: the same donation, whether its date is still ahead now (clamped again) or has
            // passed since (the date it was sent with is remembered for the latest clamped donations).
            let anyDate = !dated || donation.date != sent || donations.clampedDates[key] == sent
            guard existing == donation || (anyDate && existing.withDate(donation.date) == donation) else {
                throw .core(
                    .conflict(
                        kind: "donation", id: donation.id, reason: "the app already used this id for another donation"))
            }
            return (donation.id, lastTicket)
        }
        guard donations.perApp[key.app, default: 0] < limits.maxDonationsPerApp else {
            throw .core(.limitExceeded(limit: "maxDonationsPerApp", maximum: limits.maxDonationsPerApp))
        }
        let owner = quotaOwner?(key.app)
        if let owner, ownerShares.donations[owner, default: 0] >= limits.maxDonationsPerUID {
            throw .core(.limitExceeded(limit: "maxDonationsPerUID", maximum: limits.maxDonationsPerUID))
        }
        guard donations.count < limits.maxDonations else {
            throw .core(.limitExceeded(limit: "maxDonations", maximum: limits.maxDonations))
        }
        let clampedFrom = donation.date != sent ? sent : nil
        let (_, ticket) = try apply(.donate(donation), checked: probe)
        if let owner { ownerShares.donations[owner, default: 0] += 1 }
        if let clampedFrom { donations.rememberClamped(key, sent: clampedFrom) }
        return (key.id, ticket)
    }

    /// The donation stored (or logged and not yet stored) under this key, if any: the filter answers "none" for
    /// nearly every new id without asking the store.
    func knownDonation(_ key: DonationKey, probe: DonationKeyFilter.Probe) throws(HostError) -> Donation? {
        if donations.surelyFree(probe) { return nil }
        if let pending = donations.unconfirmed.donation(key) { return pending }
        do { return try log.donation(app: key.app, id: key.id) } catch { throw .store(error) }
    }

    /// After a ticket from `donateNow` resolved: `nil` when stored, or the call's error (after
    /// rolling the engine back to what is stored).
    public func acknowledged(_ outcome: Result<Void, StoreFailure>) -> HostError? {
        guard case .failure(let failure) = outcome else { return nil }
        recoverIfNeeded()
        return .store(failure)
    }

    /// Deletes an app's donations by filter, rebuilding the model as if they had never been made.
    ///
    /// Deletions that arrive while a rebuild runs are taken together by the next one (one replay of the log for
    /// all of them): a rebuild costs a replay of the whole stored log, so one per call would let a stream of
    /// deletions queue without end behind each other.
    public func deleteDonations(app: AppID, filter: DonationFilter) async throws(HostError) -> Int {
        try refuseWhenStopping()
        try checkStorage()
        // Which stored donations match, read off the loop once everything logged so far is stored.
        try await committed(lastTicket)
        let log = self.log
        let matching = await Self.offLoop { () -> Result<Set<String>, StoreFailure> in
            Result { () throws(StoreFailure) in
                var ids: Set<String> = []
                if case .ids(let wanted) = filter {
                    // By id: each looked up in the index, not a scan of every donation of the app.
                    for id in wanted where try log.donation(app: app, id: id) != nil { ids.insert(id) }
                } else {
                    try log.forEachDonation(app: app) {
                        _ = smartstack_pace()
                        if filter.matches($0, app: app) { ids.insert($0.id) }
                    }
                }
                return ids
            }
        }
        let ids: Set<String>
        switch matching {
        case .success(let found): ids = found
        case .failure(let failure): throw .store(failure)
        }
        guard !ids.isEmpty else { return 0 }
        let outcome = await withCheckedContinuation { continuation in
            rebuilds.deletions.append(PendingDeletion(app: app, ids: ids, continuation: continuation))
            runRebuilds()
        }
        return try outcome.get()
    }

    /// Runs the deletions queued so far in one rebuild (one replay of the log for all of them).
    func delete(_ batch: [PendingDeletion]) async {
        var doomed: [AppID: Set<String>] = [:]
        for deletion in batch { doomed[deletion.app, default: []].formUnion(deletion.ids) }
        let selected = doomed
        do throws(HostError) {
            // Only these apps' donations: what retention removes is the sweep's, on the service's clock.
            try refuseWhenStopping()
            let (removed, ticket) = try await rebuild(without: { selected[$0.app]?.contains($0.id) ?? false })
            try await committed(ticket)
            // Each removed donation counts for the first deletion in the batch that asked for it.
            var unclaimed = Set(removed.map(DonationKey.init))
            for deletion in batch {
                var count = 0
                for id in deletion.ids where unclaimed.remove(DonationKey(app: deletion.app, id: id)) != nil {
                    count += 1
                }
                deletion.continuation.resume(returning: .success(count))
            }
        } catch {
            for deletion in batch { deletion.continuation.resume(returning: .failure(error)) }
        }
    }

    /// Applies an event and logs it; returns the effects and the log's ticket.
    ///
    /// Publishing waits for the commit that stores the event (`publishAtCommit`), so the calls that commit takes
    /// together cost one ranking pass, not one per call.
    /// `checked`: the filter's probe of a donation `donateNow` admitted and checked (its key is hashed once).
    private func apply(_ event: EngineEvent, checked: DonationKeyFilter.Probe? = nil) throws(HostError) -> (
        [EngineEffect], CommitTicket
    ) {
        try refuseWhenStopping()
        try checkStorage()
        let event = checked != nil ? event : try admitted(event)
        // What time made due by the call's date is fired first, by a logged publish: a call the engine then
        // refuses cannot take a due reload (or any other timer's effect) down with it, and a replay fires it alike.
        if let due = engine.nextWakeUp, due <= event.time { publishNow() }
        // A new kind counts toward its owner's share of `maxKinds`.
        var newKindOwner: UInt32?
        if case .registerKind(let kind, _) = event, engine.kind(kind.id) == nil, let owner = quotaOwner?(kind.id.app) {
            guard ownerShares.kinds[owner, default: 0] < limits.maxKindsPerUID else {
                throw .core(.limitExceeded(limit: "maxKindsPerUID", maximum: limits.maxKindsPerUID))
            }
            newKindOwner = owner
        }
        if case .startLiveActivity(let app, let id, _, _, _) = event, !engine.hasLiveActivity(app: app, id: id) {
            try admitLiveActivity(of: app)
        }
        let effects: [EngineEffect]
        do { effects = try engine.apply(event) } catch { throw .core(error) }
        if let newKindOwner { ownerShares.kinds[newKindOwner, default: 0] += 1 }
        engineChanged()
        captured?.append(event)
        if event.time > latestEventTime { latestEventTime = event.time }
        // Backfilled events (a replay) are journaled at their own times; the check costs nothing otherwise.
        let now = serviceTime()
        let lateness = -event.time.seconds(since: now)
        let backfilled = lateness > 1
        if backfilled || !backfill.isEmpty {
            journalBackfill(event, backfilled: backfilled, lateness: lateness, now: now)
        }
        if case .removeStack(let stack, _) = event {
            backfill.forget(stack)
            pendingRemovals.append(
                Decision(stack: stack, revision: engine.revisionFloor, time: now, entries: [], removed: true))
        }
        if let donation = event.donation {
            donations.applied(donation, probe: checked ?? DonationKeyFilter.probe(DonationKey(donation)))
            statistics.donationsReceived += 1
            if logger.logLevel <= .debug { logDonation(donation) }
        }
        statistics.eventsRecorded += 1
        let ticket = log.enqueueHeld(event)
        lastTicket = ticket
        if let donation = event.donation { donations.unconfirmed.add(donation, newest: ticket) }
        scheduleFlush()
        fanOut(decisions: [], effects: effects)
        publishAtCommit(ticket)
        return (effects, ticket)
    }

    /// Publishes what an event changed once the commit that stores it resolves, before that commit's calls are
    /// answered: this callback is registered on the commit before any reply waits for it, and the replies run on
    /// the loop after it. So a burst of calls costs one publish per commit, subscribers are sent decisions of
    /// stored events, and every read that comes after an acknowledgement sees what was acknowledged. A stack read
    /// (`readStack`) meanwhile answers from the last publish: what changed since is not acknowledged yet.
    private func publishAtCommit(_ ticket: CommitTicket) {
        guard let waiter = ticket.waiter else {
            schedulePublish()
            return
        }
        // Already registered (the usual case in a burst): asked first, since the outcome takes the waiter's lock.
        // A resolved commit that is still `publishingCommit` has its publish queued on the loop after this event.
        guard publishingCommit !== waiter else { return }
        guard waiter.outcome == nil else {
            schedulePublish()
            return
        }
        publishingCommit = waiter
        let loop = eventLoop
        waiter.whenResolved { [weak self] _ in
            guard let owner = self else { return }
            loop.execute {
                owner.onLoop { host in
                    if host.publishingCommit === waiter { host.publishingCommit = nil }
                    host.publishNow()
                }
            }
        }
    }

    /// Journals what a backfilled event (dated in the past: a replay, a late donation) changed, as the engine decides
    /// each stack it concerns at the event's own time, one decision per event that changes an order (see
    /// `BackfillJournal` for which events are so journaled); a live event ends the backfill of the stacks it concerns.
    private func journalBackfill(_ event: EngineEvent, backfilled: Bool, lateness: Double, now: Timestamp) {
        var journaled: [Decision] = []
        for stack in backfill.stacks(affected: engine.stacks(affectedBy: event), by: event, backfilled: backfilled) {
            let published = engine.published(stack)
            guard backfill.place(stack, event, lateness: lateness, lastEntry: published?.time, now: now) == .ownTime,
                var decision = try? engine.evaluate(stack: stack, at: event.time),
                backfill.journals(decision.order, for: stack, at: event.time, published: published?.order)
            else { continue }
            // The revision whose publish brings this order to subscribers: the stack's next (the publish at the
            // service's time then leaves out the order journaled so). `evaluate` gives the last published one.
            decision.revision = (published?.revision ?? 0) + 1
            journaled.append(decision)
        }
        if !journaled.isEmpty { reporter.published(decisions: journaled, effects: []) }
    }

    /// Starts the commit of what this burst logged once the event loop has handled the input it has now: the
    /// burst's calls then share one commit, where waking the writer at the first would commit it nearly alone.
    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        eventLoop.execute { [self] in
            // The event loop is this actor's executor: a task on it runs isolated to the actor.
            onLoop { host in
                host.flushScheduled = false
                host.log.flush()
            }
        }
    }

    /// Schedules one publish after the calls queued now.
    private func schedulePublish() {
        guard !publishScheduled else { return }
        publishScheduled = true
        Task { self.publishNow() }
    }

    /// Publishes what changed since the last publish at the service's current time (never before the engine's
    /// own), records the mark when anything was published, and schedules the next wake-up.
    @discardableResult
    func publishNow(reading: Timestamp? = nil) -> CommitTicket {
        publishScheduled = false
        guard case .accepting = log.status else {
            // Nothing is published that could not be stored; reads answer from the last stored publish.
            retryWhenStorageWorks()
            return .committed
        }
        // The store takes records again (a call found it so before the retry came): serving.
        if case .storageFailed = phase { phase = .serving }
        let time = serviceTime(reading: reading ?? clock.now())
        if !pendingRemovals.isEmpty {
            fanOut(decisions: pendingRemovals, effects: [])
            pendingRemovals = []
        }
        if let quiet = publishQuietUntil, time < quiet { return .committed }
        guard engine.needsPublish(at: time) else {
            scheduleWakeUp()
            publishQuietUntil = engine.nextPublishDue()
            return .committed
        }
        let (decisions, effects) = engine.publish(at: time)
        engineChanged()
        // Stacks with backfilled events since the last publish were journaled at those events' times (`apply`).
        let reported = backfill.reported(decisions, at: time)
        let mark = EngineEvent.publish(at: time)
        captured?.append(mark)
        let ticket = log.enqueue([mark])
        lastTicket = ticket
        if log.snapshotDue { log.snapshot(engine) }
        fanOut(decisions: decisions, effects: effects, reported: reported)
        scheduleWakeUp()
        return ticket
    }

    /// Marks the engine changed: a publish may be due (see `publishQuietUntil`).
    func engineChanged() { publishQuietUntil = nil }

    private func nextDonationID() -> String {
        idCounter += 1
        return "\(idPrefix)-\(String(idCounter, radix: 36))"
    }
}

extension EngineHost {
    /// Runs `body` isolated to the host from code running on its event loop (the host's executor), as
    /// `assumeIsolated` does, but checked by the loop's own test (a compare of the current thread) instead of the
    /// concurrency runtime's (several calls into it, measured at ~2.5 % of a donation's time on the loop). Traps
    /// when called off the loop, as `assumeIsolated` does.
    nonisolated func onLoop<T>(_ body: (isolated EngineHost) throws -> T) rethrows -> T {
        eventLoop.preconditionInEventLoop()
        typealias Isolated = (isolated EngineHost) throws -> T
        typealias Plain = (EngineHost) throws -> T
        // What the standard library's `assumeIsolated` does once its check passed: the loop is this actor's
        // executor, so running on it is being isolated to it.
        return try withoutActuallyEscaping(body) { (escapable: @escaping Isolated) throws -> T in
            try unsafeBitCast(escapable, to: Plain.self)(self)
        }
    }
}

extension EngineHost {
    /// Refuses a new Live Activity of `app` past `maxLiveActivities` visible at once, or past its owner's
    /// `maxLiveActivitiesPerUID` over the apps it claimed (each app has `maxLiveActivitiesPerApp` too, the engine's).
    /// Counted from the activities the engine shows (they end and leave by time), over the apps that have some.
    func admitLiveActivity(of app: AppID) throws(HostError) {
        guard engine.visibleLiveActivities() < limits.maxLiveActivities else {
            throw .core(.limitExceeded(limit: "maxLiveActivities", maximum: limits.maxLiveActivities))
        }
        guard let quotaOwner, let owner = quotaOwner(app) else { return }
        var owned = 0
        for other in engine.liveActivityApps where quotaOwner(other) == owner {
            owned += engine.visibleLiveActivities(of: other)
        }
        guard owned < limits.maxLiveActivitiesPerUID else {
            throw .core(.limitExceeded(limit: "maxLiveActivitiesPerUID", maximum: limits.maxLiveActivitiesPerUID))
        }
    }
}

/// What the apps of each owning uid hold of the global limits (`maxDonationsPerUID`, `maxKindsPerUID`).
struct OwnerShares {
    var donations: [UInt32: Int] = [:]
    var kinds: [UInt32: Int] = [:]
}

extension EngineHost {
    /// Counts each owner's share again from the donations kept and the kinds registered (after the claims are
    /// restored, a rebuild that removed donations, or a rollback).
    public func recountOwnerShares() {
        guard let owner = quotaOwner else {
            ownerShares = OwnerShares()
            return
        }
        var shares = OwnerShares()
        for (app, count) in donations.perApp {
            if let uid = owner(app) { shares.donations[uid, default: 0] += count }
        }
        for (app, count) in engine.kindCountsByApp {
            if let uid = owner(app) { shares.kinds[uid, default: 0] += count }
        }
        ownerShares = shares
    }
}
