import Collections
import Dispatch
public import SmartStackCore
public import SmartStackStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What start-up restored from the event log.
public struct RestoreSummary: Sendable, Hashable {
    /// Event rows in the history (donations included).
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

    /// Rebuilds the engine and the history from the log: the latest snapshot plus every record after it.
    ///
    /// A snapshot of an older layout or other engine settings is not used; the whole log is replayed instead
    /// (slower, and exact up to revisions bumped by past deletions). Called once, before the service listens.
    @discardableResult
    public func restore() throws(StoreFailure) -> RestoreSummary {
        let started = Self.monotonicSeconds()
        let stored = try log.load()
        var summary = adopt(stored)
        summary.owners = stored.owners
        if stored.events.isEmpty && stored.snapshot == nil {
            // A new log: its first record is the engine's starting clock, so a replay starts from the same time.
            let mark = EngineEvent.publish(at: engine.now)
            engine.replay(mark)
            engineChanged()
            history.append(mark)
            _ = log.enqueue([mark])
        }
        summary.seconds = Self.monotonicSeconds() - started
        logger.info(
            "state loaded",
            metadata: [
                "events": "\(summary.events)", "donations": "\(summary.donations)", "replayed": "\(summary.replayed)",
                "snapshot": "\(summary.fromSnapshot)", "seconds": "\(summary.seconds)",
            ])
        if let problem = summary.snapshotProblem {
            logger.notice("stored snapshot not used; replayed the whole log", metadata: ["reason": "\(problem)"])
        }
        return summary
    }

    /// Makes the stored state the host's: engine, history and donation index.
    private func adopt(_ stored: StoredHistory) -> RestoreSummary {
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
        // The stored events become the history as they are (no copy).
        let history = stored.events
        let donations = Self.donationIndex(history, counts: stored.donationsPerApp)
        let donationCount = stored.donationsPerApp.values.reduce(0, +)
        let first = restored == nil ? 0 : stored.firstAfterSnapshot
        for event in history[first...] { engine.replay(event) }
        let replayed = history.count - first
        self.engine = engine
        engineChanged()
        self.history = history
        historyEpoch += 1
        latestEventTime = Self.latestEventTime(of: history)
        self.donations = donations
        self.donationCount = donationCount
        return RestoreSummary(
            events: history.count, donations: donationCount, replayed: replayed, fromSnapshot: restored != nil,
            snapshotProblem: problem, seconds: 0)
    }

    /// Each app's donations by id in stored order. Each index is sized up front (growing a large ordered
    /// dictionary rehashes it many times), and a large history is indexed on two threads, half the apps each.
    static func donationIndex(_ history: [EngineEvent], counts: [AppID: Int]) -> [AppID: OrderedDictionary<
        String, Donation
    >] {
        @Sendable func index(_ apps: Set<AppID>) -> [AppID: OrderedDictionary<String, Donation>] {
            var result: [AppID: OrderedDictionary<String, Donation>] = [:]
            for app in apps { result[app] = OrderedDictionary(minimumCapacity: counts[app] ?? 0) }
            for event in history {
                guard case .donate(let donation) = event, apps.contains(donation.app) else { continue }
                result[donation.app, default: [:]].updateValue(donation, forKey: donation.id)
            }
            return result
        }
        let total = counts.values.reduce(0, +)
        guard total >= 100_000, counts.count > 1 else { return index(Set(counts.keys)) }
        // Two groups of apps with about as many donations each (largest first, each to the lighter group).
        var groups: [Set<AppID>] = [[], []]
        var sizes = [0, 0]
        for (app, count) in counts.sorted(by: { $0.value > $1.value }) {
            let lighter = sizes[0] <= sizes[1] ? 0 : 1
            groups[lighter].insert(app)
            sizes[lighter] += count
        }
        let results = Mutex<[[AppID: OrderedDictionary<String, Donation>]]>([])
        let split = groups
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            let built = index(split[part])
            results.withLock { $0.append(built) }
        }
        return results.withLock { parts in parts.reduce(into: [:]) { $0.merge($1) { first, _ in first } } }
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
        let stored: StoredHistory
        do {
            stored = try log.load()
        } catch {
            logger.error("cannot re-read the stored state", metadata: ["error": "\(error)"])
            return
        }
        let summary = adopt(stored)
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
        guard !storageRetryScheduled, !stopping else { return }
        storageRetryScheduled = true
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(1))
            await self?.storageRetry()
        }
    }

    private func storageRetry() {
        storageRetryScheduled = false
        publishNow()
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
