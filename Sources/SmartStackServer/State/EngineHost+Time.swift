import SmartStackCore
import SmartStackStore

extension EngineHost {
    /// Publishes what time alone changed up to now: entries that became current, durations that ended,
    /// Live Activities that expired, reloads that came due. Then schedules the next wake-up.
    @discardableResult
    func tick() -> CommitTicket {
        let ticket = publishNow()
        let now = clock.now()
        if now.seconds(since: lastRetentionSweep) >= retentionSweepInterval {
            lastRetentionSweep = now
            Task { await sweepRetention() }
        }
        return ticket
    }

    /// How often donations past the retention period are looked for.
    var retentionSweepInterval: Double { limits.retentionSweepInterval }

    /// Sets the timer to the engine's next scheduled change (or the next retention sweep), so decisions
    /// are published at that moment without anyone asking.
    func scheduleWakeUp() {
        guard !stopping else { return }
        let sweep = lastRetentionSweep.adding(seconds: retentionSweepInterval)
        let next = engine.nextWakeUp.map { min($0, sweep) } ?? sweep
        if let timerFireTime, timer != nil, timerFireTime == next { return }
        timer?.cancel()
        timerFireTime = next
        let delay = max(0, next.seconds(since: clock.now()))
        timer = Task { [weak self] in
            // Sleep a little past the due time so the clock reads at or after it on waking.
            try? await Task.sleep(for: .microseconds(Int64(delay * 1_000_000) + 500))
            guard !Task.isCancelled else { return }
            await self?.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        timerFireTime = nil
        tick()
    }

    /// Drops donations past the retention period from the history, the model and the log (see `rebuild`).
    func sweepRetention() async {
        await lockRebuild()
        defer { unlockRebuild() }
        guard !stopping, case .accepting = log.status else { return }
        let cutoff = retentionCutoff
        guard history.contains(where: { $0.donation.map { $0.date < cutoff } ?? false }) else { return }
        guard let (expired, _) = await rebuild(without: { $0.date < cutoff }) else { return }
        logger.info("retention removed donations", metadata: ["count": "\(expired.count)"])
    }

    /// Where retention cuts off donations: the retention period before the service's time (never a client's date).
    var retentionCutoff: Timestamp { serviceTime().adding(seconds: -engine.settings.retention) }

    /// Removes the donations `doomed` selects from the history and the per-app index; returns them.
    func forget(_ doomed: (Donation) -> Bool) -> [Donation] {
        var removed: [Donation] = []
        historyEpoch += 1
        history.removeAll { event in
            guard let donation = event.donation, doomed(donation) else { return false }
            removed.append(donation)
            return true
        }
        var doomedIDs: [AppID: Set<String>] = [:]
        for donation in removed { doomedIDs[donation.app, default: []].insert(donation.id) }
        for (app, ids) in doomedIDs {
            // Removing a key from an ordered dictionary shifts everything after it: a few keys one by one, many
            // in one pass (an hour of expired donations one by one was quadratic in the app's donations).
            if ids.count <= 8 {
                for id in ids { donations[app]?.removeValue(forKey: id) }
            } else {
                donations[app]?.removeAll { ids.contains($0.key) }
            }
        }
        donationCount -= removed.count
        latestEventTime = Self.latestEventTime(of: history)
        return removed
    }

    /// The latest time of a recorded event in `history` (publish marks aside).
    static func latestEventTime(of history: [EngineEvent]) -> Timestamp {
        var latest = Timestamp(microseconds: .min)
        for event in history {
            if case .publish = event { continue }
            if event.time > latest { latest = event.time }
        }
        return latest
    }

    /// Stops taking work and ends every stream (graceful shutdown).
    public func stop() {
        if !stopping, case .accepting = log.status {
            // The last state as a snapshot, so the next start replays nothing.
            log.snapshot(engine)
        }
        stopping = true
        timer?.cancel()
        timer = nil
        subscriptions.finishAll()
    }
}
