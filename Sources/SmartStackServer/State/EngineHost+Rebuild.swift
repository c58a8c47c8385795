import CLinux
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif
import SmartStackCore
import SmartStackStore
import Synchronization

extension EngineHost {
    // MARK: Rebuilding without donations (deletion, retention)

    /// Rebuilds the engine as if the donations `doomed` selects had never been made, and removes them from the
    /// log (with a snapshot of the rebuilt engine, in one transaction); returns the removed donations and the
    /// ticket of that transaction.
    ///
    /// The long part, replaying the stored log, runs on another thread once everything logged so far is stored,
    /// while the event loop goes on serving calls; the events applied meanwhile (kept in `captured`) are then
    /// taken here onto the rebuilt engine, which takes over (revisions counting on from the live engine's). A
    /// rollback to the stored state meanwhile (a failed commit) starts it over. Callers hold the rebuild lock.
    func rebuild(without doomed: @escaping @Sendable (Donation) -> Bool) async throws(HostError) -> (
        removed: [Donation], ticket: CommitTicket
    ) {
        while true {
            guard !stopping else { throw .stopping }
            let through = log.lastSequence
            let rollbacksBefore = rollbacks
            captured = []
            defer { captured = nil }
            try await committed(lastTicket)
            let settings = engine.settings
            let log = self.log
            let replayed = await Self.offLoop { () -> Result<RebuildFold, StoreFailure> in
                Result { () throws(StoreFailure) in
                    var fold = RebuildFold(settings: settings)
                    try log.replay(after: 0, through: through) { fold.take($0, without: doomed) }
                    return fold
                }
            }
            guard !stopping else { throw .stopping }
            guard rollbacks == rollbacksBefore else { continue }
            var fold: RebuildFold
            switch replayed {
            case .success(let result): fold = result
            case .failure(let failure): throw .store(failure)
            }
            let arrived = captured ?? []
            for event in arrived { fold.take(event, without: doomed) }
            let removed = fold.removed
            logger.debug("rebuilt off the loop", metadata: ["through": "\(through)", "arrived meanwhile": "\(arrived.count)"])
            let changed = engine.adopt(fold.engine)
            engineChanged()
            donationCount -= removed.count
            oldestDonation = fold.oldest ?? serviceTime()
            unconfirmed.remove(Set(removed.map(DonationKey.init)))
            let ticket = log.delete(donations: removed.map { ($0.app, $0.id) }, engine: engine)
            lastTicket = ticket
            fanOut(decisions: changed, effects: [])
            scheduleWakeUp()
            FreedMemory.release()
            return (removed, ticket)
        }
    }

    /// Waits until no other rebuild runs, then holds the lock (deletions and retention sweeps take turns).
    func lockRebuild() async {
        while rebuilding {
            await withCheckedContinuation { rebuildWaiters.append($0) }
        }
        rebuilding = true
    }

    func unlockRebuild() {
        rebuilding = false
        if !rebuildWaiters.isEmpty { rebuildWaiters.removeFirst().resume() }
    }

    /// Runs `work` on a global queue's thread at the lowest priority (nice 19) and returns its result: the long
    /// replays of deletions, retention and questions about the past must not take the CPU from the event loop
    /// (with the service on one core they would otherwise stall every call for their length).
    /// Runs off-loop work on the global queue from now on (the dispatch fuzzer diverts that queue onto its own
    /// thread, so each input's work runs in order and a run is reproducible).
    public static func runOffLoopWorkOnGlobalQueue() { offLoopOnGlobalQueue.store(true, ordering: .relaxed) }

    /// `lowPriority: false` for short reads a caller waits on (a page of donations).
    static func offLoop<T: Sendable>(lowPriority: Bool = true, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            // A queue of its own per job, not the global one: the global queue runs as many jobs at once as the
            // process has CPUs (one when the service is pinned to a core), so a short page read would wait behind a
            // minutes-long rebuild.
            let queue = offLoopOnGlobalQueue.load(ordering: .relaxed)
                ? DispatchQueue.global() : DispatchQueue(label: "smartstackd.offloop")
            queue.async {
                guard lowPriority else { return continuation.resume(returning: work()) }
                let thread = id_t(smartstack_gettid())
                errno = 0
                let previous = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
                let known = errno == 0
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, 19)
                let result = work()
                // The pool's thread goes back as it came (raising priority again needs no privilege for a thread
                // that lowered itself only if RLIMIT_NICE allows; root may always).
                if known { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, previous) }
                continuation.resume(returning: result)
            }
        }
    }
}

/// A rebuild's replay: the engine taking every event but the doomed donations, which it collects, and the earliest
/// date among the donations it kept.
struct RebuildFold: Sendable {
    var engine: Engine
    var removed: [Donation] = []
    var oldest: Timestamp?

    init(settings: EngineSettings) { engine = Engine(settings: settings) }

    mutating func take(_ event: EngineEvent, without doomed: (Donation) -> Bool) {
        if let donation = event.donation {
            if doomed(donation) {
                removed.append(donation)
                return
            }
            if oldest.map({ donation.date < $0 }) ?? true { oldest = donation.date }
        }
        engine.replay(event)
    }
}

/// Whether `EngineHost.offLoop` uses the global queue (see `runOffLoopWorkOnGlobalQueue`).
private let offLoopOnGlobalQueue = Atomic<Bool>(false)
