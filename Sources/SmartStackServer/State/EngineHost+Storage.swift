import CLinux
public import SmartStackCore
public import SmartStackStore

#if canImport(Glibc)
    import Glibc
#endif

/// What start-up restored from the event log.
public struct RestoreSummary: Sendable, Hashable {
    /// Event rows stored (donations included).
    public var events: Int
    /// Donations among them.
    public var donations: Int
    /// Records applied on top of the snapshot (all of them without a usable snapshot).
    public var replayed: Int
    /// Whether a snapshot was used; when false the whole log was replayed.
    public var fromSnapshot: Bool
    /// Why a stored snapshot was not used, if one was there.
    public var snapshotProblem: String?
    /// Seconds the restore took.
    public var seconds: Double
    /// The stored owners of app ids claimed by their first uid (for the access policy).
    public var owners: [AppID: UInt32] = [:]
}

extension EngineHost {
    // MARK: Start-up

    /// Rebuilds the engine from the log: the latest snapshot plus every record after it, replayed from the file
    /// one at a time (nothing of the history is kept in memory).
    ///
    /// A snapshot of an older layout or other engine settings is not used; the whole log is replayed instead
    /// (slower, and exact up to revisions bumped by past deletions). Called once, before the service listens.
    @discardableResult
    public func restore() throws(StoreFailure) -> RestoreSummary {
        let started = Self.monotonicSeconds()
        let stored = try log.loadStart()
        var summary = try adopt(stored)
        summary.owners = stored.owners
        if stored.events == 0 && stored.snapshot == nil {
            // A new log: its first record is the engine's starting clock, so a replay starts from the same time.
            let mark = EngineEvent.publish(at: engine.now)
            engine.replay(mark)
            engineChanged()
            lastTicket = log.enqueue([mark])
        }
        // A stored snapshot that could not be used (an older layout, other settings, damage), or none under a log
        // of records: a new one now, so the next start does not replay the whole log again (a snapshot is otherwise
        // taken only after new records come).
        if summary.snapshotProblem != nil || (!summary.fromSnapshot && summary.replayed > 0) {
            log.snapshot(engine)
        }
        fillDonationKeys()
        // The first retention sweep is due at once: a start does not postpone it by a whole interval (the last
        // life's schedule is not stored, so a service restarted more often than `retentionSweepSeconds` would
        // otherwise never sweep).
        wakeUp.lastRetentionSweep = clock.now().adding(seconds: -retentionSweepInterval)
        FreedMemory.release()
        summary.seconds = Self.monotonicSeconds() - started
        // The store's side of the start (the journal's `stateLoaded` entry then counts stacks and widgets).
        logger.info(
            "stored log read",
            metadata: [
                "events": "\(summary.events)", "donations": "\(summary.donations)", "replayed": "\(summary.replayed)",
                "snapshot": "\(summary.fromSnapshot)", "seconds": "\(summary.seconds)",
            ])
        if let problem = summary.snapshotProblem {
            logger.notice("stored snapshot not used; replayed the whole log", metadata: ["reason": "\(problem)"])
        }
        return summary
    }

    /// Makes the stored state the host's: the snapshot's engine with the records after it replayed from the log.
    private func adopt(_ stored: StoredStart) throws(StoreFailure) -> RestoreSummary {
        var restored: Engine?
        var problem: String?
        if let snapshot = stored.snapshot {
            do {
                restored = try Engine(snapshot: snapshot.bytes, settings: engine.settings)
            } catch {
                problem = error.reason
            }
        }
        var engine = restored ?? Engine(settings: engine.settings)
        // Questions about times before the snapshot's clock are answered by replaying the log (its clock is never
        // behind an event it took).
        var latest = restored?.now ?? Timestamp(microseconds: .min)
        var replayed = 0
        let after = restored == nil ? 0 : stored.snapshot?.through ?? 0
        try log.replay(after: after, through: stored.lastSequence) { event in
            engine.replay(event)
            replayed += 1
            if case .publish = event { return }
            if event.time > latest { latest = event.time }
        }
        self.engine = engine
        engineChanged()
        latestEventTime = latest
        donations.count = stored.donationsPerApp.values.reduce(0, +)
        donations.perApp = stored.donationsPerApp
        return RestoreSummary(
            events: stored.events, donations: donations.count, replayed: replayed, fromSnapshot: restored != nil,
            snapshotProblem: problem, seconds: 0)
    }

    /// Fills the donation id filter from the store off the loop; until it is complete, ids are looked up.
    private func fillDonationKeys() {
        donations.keysComplete = false
        let log = self.log
        Task {
            let filled = await Self.offLoop { () -> Result<DonationKeyFilter, StoreFailure> in
                Result { () throws(StoreFailure) in
                    var filter = DonationKeyFilter()
                    try log.forEachDonationKey {
                        _ = smartstack_pace()
                        filter.insert(app: $0, id: $1)
                    }
                    return filter
                }
            }
            self.donationKeysFilled(filled)
        }
    }

    private func donationKeysFilled(_ filled: Result<DonationKeyFilter, StoreFailure>) {
        switch filled {
        case .success(let stored):
            // The loop's own insertions since start are kept: together they hold every stored id.
            donations.keys.formUnion(stored)
            donations.keysComplete = true
            FreedMemory.release()
        case .failure(let failure):
            logger.warning("donation ids not indexed in memory; each is looked up", metadata: ["error": "\(failure)"])
        }
    }

    // MARK: Recording

    /// Waits for a commit; a failed one rolls the engine back to what is stored before the call fails.
    func committed(_ ticket: CommitTicket) async throws(HostError) {
        do {
            try await ticket.committed()
        } catch {
            recoverIfNeeded()
            throw .store(error)
        }
    }

    /// Fails a recording call at once while storage is failing (rolling back first if that has not happened).
    func checkStorage() throws(HostError) {
        guard case .failed(let failure, _) = log.status else { return }
        recoverIfNeeded()
        throw .store(failure)
    }

    /// After a failed commit: re-reads the stored state, so no event that was not stored stays in the engine
    /// (and nothing acknowledged is lost); subscribers hear of orders that changed back.
    func recoverIfNeeded() {
        guard case .failed(let failure, reloadNeeded: true) = log.status else { return }
        let before = engine.stackIDs.map { ($0, engine.published($0)) }
        let summary: RestoreSummary
        let stored: StoredStart
        do {
            stored = try log.loadStart()
            summary = try adopt(stored)
        } catch {
            logger.error("cannot re-read the stored state", metadata: ["error": "\(error)"])
            return
        }
        rollbacks += 1
        // Everything the engine holds now is stored: the failed commit is no longer the one to wait for (a
        // deletion, the retention sweep or a retried donation would otherwise fail on it until another write).
        lastTicket = .committed
        ownersRestored?(stored.owners)
        recountOwnerShares()
        donations.unconfirmed.removeAll()
        var changed: [Decision] = []
        for (id, old) in before {
            if let new = engine.published(id), new.order != old?.order { changed.append(new) }
        }
        fanOut(decisions: changed, effects: [])
        scheduleWakeUp()
        logger.error(
            "storage failed; rolled back to the stored state",
            metadata: ["reason": "\(failure.reason)", "events": "\(summary.events)", "replayed": "\(summary.replayed)"])
    }

    /// While storage fails nothing is published (it could not be stored); this wakes the host once a second to
    /// roll back if needed and to publish again once the log takes records.
    func retryWhenStorageWorks() {
        recoverIfNeeded()
        // Already retrying, or stopping.
        guard phase == .serving else { return }
        // The time service wakes the host then (`timerFired`): serving again, it publishes, which fails back into
        // this phase (and the next retry) while the store still refuses records.
        phase = .storageFailed(retryAt: clock.now().adding(seconds: 1))
        scheduleWakeUp()
    }

    // MARK: Shutdown and statistics

    /// Commits what is queued and closes the log (after `stop()`).
    public func closeLog() async {
        await log.close()
    }

    /// The event log's numbers for `GetStatistics` (nil without durable storage).
    public func storageStatistics() -> EventLogStatistics? { log.statistics() }

    static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
