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
    /// rollback to the stored state meanwhile (a failed commit) starts it over. Only the rebuild task (`runRebuilds`)
    /// calls it, so two never overlap.
    func rebuild(without doomed: @escaping @Sendable (Donation) -> Bool) async throws(HostError) -> (
        removed: [Donation], ticket: CommitTicket
    ) {
        attempt: while true {
            try refuseWhenStopping()
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
            try refuseWhenStopping()
            guard rollbacks == rollbacksBefore else { continue }
            var fold: RebuildFold
            switch replayed {
            case .success(let result): fold = result
            case .failure(let failure): throw .store(failure)
            }
            // The events applied meanwhile are taken off the loop too, in rounds, until few are left: a replay of
            // a second or more under load leaves thousands, and taking them here held every call for up to 200 ms
            // (the soak's GetStack p99).
            var taken = 0
            var rounds = 0
            while let arrived = captured, arrived.count - taken > Self.eventsTakenOnTheLoop,
                rounds < Self.catchUpRounds
            {
                rounds += 1
                let batch = Array(arrived[taken...])
                taken = arrived.count
                let before = fold
                fold = await Self.offLoop {
                    var fold = before
                    for event in batch { fold.take(event, without: doomed) }
                    return fold
                }
                try refuseWhenStopping()
                guard rollbacks == rollbacksBefore else { continue attempt }
            }
            let arrived = captured ?? []
            for event in arrived[taken...] { fold.take(event, without: doomed) }
            let removed = fold.removed
            logger.debug(
                "rebuilt off the loop", metadata: ["through": "\(through)", "arrived meanwhile": "\(arrived.count)"])
            let changed = engine.adopt(fold.engine, at: serviceTime())
            engineChanged()
            donations.removed(removed, oldestLeft: fold.oldest ?? serviceTime())
            recountOwnerShares()
            let ticket = log.delete(donations: removed.map { ($0.app, $0.id) }, engine: engine)
            lastTicket = ticket
            fanOut(decisions: changed, effects: [])
            scheduleWakeUp()
            FreedMemory.releaseSoon()
            return (removed, ticket)
        }
    }

    /// At most this many events applied during a rebuild's replay are taken on the loop; more go off it first.
    static let eventsTakenOnTheLoop = 64
    /// Rounds of taking those events off the loop at most (a loop that keeps applying events faster than a round
    /// takes them would otherwise never let the rebuild end); what is left then is taken on the loop.
    static let catchUpRounds = 8

    /// Starts the task that runs the queued rebuilds, one after another, unless it is on.
    func runRebuilds() {
        guard !rebuilds.running else { return }
        rebuilds.running = true
        Task {
            while let next = rebuilds.next() {
                switch next {
                case .deletions(let batch): await delete(batch)
                case .retention: await sweepRetention()
                }
            }
            rebuilds.running = false
        }
    }

    /// Runs off-loop work on the global queue from now on (the dispatch fuzzer diverts that queue onto its own
    /// thread, so each input's work runs in order and a run is reproducible).
    public static func runOffLoopWorkOnGlobalQueue() { offLoopOnGlobalQueue.store(true, ordering: .relaxed) }

    /// Runs `work` on another thread and returns its result.
    ///
    /// `lowPriority` (the default: the long replays of deletions, retention and questions about the past, the fill of
    /// the id filter) runs it on a thread of its own under `SCHED_IDLE`: it must not take the CPU from the event loop
    /// (with the service on one core it would otherwise stall every call), and at nice 19 it still did, a time slice
    /// at a time (the soak's GetStack p99). A thread per job, not Dispatch's pool: a pool thread lowered so could not
    /// always be raised again (that needs `RLIMIT_NICE` or privilege), and the pool runs only as many jobs at once as
    /// the process has CPUs (one when the service is pinned), so a short page read would wait behind a rebuild.
    /// `lowPriority: false` is for short reads a caller waits on (a page of donations): a queue of its own.
    static func offLoop<T: Sendable>(lowPriority: Bool = true, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            if offLoopOnGlobalQueue.load(ordering: .relaxed) {
                DispatchQueue.global().async { continuation.resume(returning: work()) }
            } else if lowPriority, IdleThread.start({ continuation.resume(returning: work()) }) {
                return
            } else {
                DispatchQueue(label: "smartstackd.offloop").async { continuation.resume(returning: work()) }
            }
        }
    }
}

/// A thread that runs one job under `SCHED_IDLE` and ends.
enum IdleThread {
    private final class Job {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new idle-priority thread; false (and `body` not run) when no thread could be made.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // Idle from its first instruction (not only once it runs and lowers itself, which at the creator's
        // priority it did only after waiting its turn behind the event loop's work, and ahead of it).
        var parameters = sched_param(sched_priority: 0)
        if pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED)) == 0 {
            pthread_attr_setschedpolicy(&attributes, smartstack_sched_idle_policy())
            pthread_attr_setschedparam(&attributes, &parameters)
        }
        // Replays fold deep values; the default 8 MiB of the main thread, not a pool thread's 512 KiB.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        let job = Unmanaged.passRetained(Job(body))
        var thread = pthread_t()
        let made = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let job = Unmanaged<Job>.fromOpaque(raw).takeRetainedValue()
                _ = smartstack_sched_idle()
                smartstack_start_pacing()
                smartstack_name_thread("smartstack-idle")
                job.body()
                return nil
            }, job.toOpaque())
        guard made == 0 else {
            job.release()
            return false
        }
        return true
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
        _ = smartstack_pace()
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

/// A `DeleteDonations` call waiting for the rebuild that removes its donations.
struct PendingDeletion {
    var app: AppID
    var ids: Set<String>
    var continuation: CheckedContinuation<Result<Int, HostError>, Never>
}

/// The rebuilds waiting to run: one task runs them one after another (each replays the stored log, so they never
/// overlap), the deletions queued at each turn in one rebuild, then a retention sweep if one came due.
struct RebuildQueue<Deletion> {
    var deletions: [Deletion] = []
    /// A retention sweep came due (`tick`); one is run however many times it came due meanwhile.
    var retentionDue = false
    /// The task that runs them is on.
    var running = false

    /// The next rebuild to run, taken off the queue.
    mutating func next() -> Rebuild? {
        if !deletions.isEmpty {
            defer { deletions = [] }
            return .deletions(deletions)
        }
        if retentionDue {
            retentionDue = false
            return .retention
        }
        return nil
    }

    enum Rebuild {
        case deletions([Deletion])
        case retention
    }
}
