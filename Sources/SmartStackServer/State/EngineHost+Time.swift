import CLinux
import SmartStackCore
import SmartStackStore

extension EngineHost {
    /// Publishes what time alone changed up to now: entries that became current, durations that ended,
    /// Live Activities that expired, reloads that came due. Then schedules the next wake-up.
    @discardableResult
    func tick() -> CommitTicket {
        let now = clock.now()
        let ticket = publishNow(reading: now)
        if now.seconds(since: wakeUp.lastRetentionSweep) >= retentionSweepInterval {
            wakeUp.lastRetentionSweep = now
            rebuilds.retentionDue = true
            runRebuilds()
        }
        return ticket
    }

    /// How often donations past the retention period are looked for.
    var retentionSweepInterval: Double { limits.retentionSweepInterval }

    /// Tells the time service the next moment time-driven work is due: the engine's next scheduled change, the
    /// next retention sweep, a decision's maximum age while anyone subscribes, or the storage retry, so decisions are published at that moment without anyone asking.
    func scheduleWakeUp() {
        guard phase != .stopping else { return }
        let sweep = wakeUp.lastRetentionSweep.adding(seconds: retentionSweepInterval)
        var next = engine.nextWakeUp.map { min($0, sweep) } ?? sweep
        // While shells follow stacks, scores that drift with time alone (recency, the time of day) are decided again
        // when a decision reaches `Engine.decisionMaxAge` and pushed when they changed (a score by 0.001 or more),
        // without anyone asking. With no subscriber there is nobody to push to: the next read decides them again.
        if subscriptions.subscriberCount > 0, let due = engine.nextPublishDue() { next = min(next, due) }
        // While storage fails nothing time changed can be published or swept: the retry is the one moment. (A due
        // timer stayed the next moment, in the past, and the time service woke the host again at once, about 2,000
        // times a second for the whole outage.)
        if case .storageFailed(let retryAt) = phase { next = retryAt }
        wakeUp.schedule(next)
    }

    /// The wake-ups of time-driven work, for the time service: the one scheduled now first, then each change of
    /// it. A second call replaces the first stream (which ends). The stream ends when the host stops.
    func attachTimeService() -> AsyncStream<Timestamp> {
        let (stream, continuation) = AsyncStream.makeStream(of: Timestamp.self, bufferingPolicy: .bufferingNewest(1))
        wakeUp.attach(continuation)
        if phase == .stopping {
            wakeUp.finish()
        } else {
            scheduleWakeUp()
        }
        return stream
    }

    /// The time service's wake-up came: a storage retry that is due serves again, then what time changed is
    /// published (`tick`), which schedules the next wake-up.
    func timerFired() {
        wakeUp.fired()
        let now = clock.now()
        if case .storageFailed(let retryAt) = phase, now >= retryAt { phase = .serving }
        tick()
        // Scheduled even when nothing was published (a wake-up that came early, a retry while storage still fails).
        scheduleWakeUp()
    }

    /// Drops donations past the retention period from the model and the log (see `rebuild`). The earliest stored
    /// date is known after the first sweep (and kept up to date), so a sweep with nothing to drop reads nothing;
    /// the first one after start reads the stored donations' dates off the loop.
    func sweepRetention() async {
        guard phase != .stopping, case .accepting = log.status, donations.count > 0 else { return }
        let cutoff = retentionCutoff
        if donations.oldest == nil {
            donations.oldestApplied = Timestamp(microseconds: .max)
            guard (try? await committed(lastTicket)) != nil else { return }
            let log = self.log
            let scanned = await Self.offLoop { () -> Timestamp?? in
                var oldest: Timestamp?
                do {
                    try log.forEachDonation(app: nil) { donation in
                        _ = smartstack_pace()
                        if oldest.map({ donation.date < $0 }) ?? true { oldest = donation.date }
                    }
                } catch {
                    return .none
                }
                return .some(oldest)
            }
            guard case .some(let stored) = scanned else { return }
            donations.oldest = min(stored ?? donations.oldestApplied, donations.oldestApplied)
        }
        guard let oldest = donations.oldest, oldest < cutoff else { return }
        do {
            let (expired, _) = try await rebuild(without: { $0.date < cutoff })
            logger.info("retention removed donations", metadata: ["count": "\(expired.count)"])
        } catch {
            logger.warning("retention sweep did not finish", metadata: ["error": "\(error)"])
        }
    }

    /// Where retention cuts off donations: the retention period before the service's time (never a client's date),
    /// or before the wall clock when that is behind it (a step of the wall clock the service's time followed and
    /// that was corrected since: the engine's time cannot go back, but no donation is dropped for it).
    var retentionCutoff: Timestamp {
        min(serviceTime(), clock.wallNow()).adding(seconds: -engine.settings.retention)
    }

    /// Stops taking work and ends every stream (graceful shutdown).
    public func stop() {
        if phase != .stopping, case .accepting = log.status {
            // The last state as a snapshot, so the next start replays nothing.
            log.snapshot(engine)
        }
        phase = .stopping
        wakeUp.finish()
        subscriptions.finishAll()
        // Reads of the history waiting their turn are answered ServiceStopping; those running finish.
        for waiting in historyReads.removeAll() + pageReads.removeAll() { waiting.resume(returning: false) }
    }
}
